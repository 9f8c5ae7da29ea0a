package filesystem_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/permission"
)

// A path the tool contract refuses gets the contract's error before any
// rule, mode or approval looks at it: under an ask rule that would match
// it, in auto mode, and with the tool needing approval, the run asks
// nothing and the model reads "Path traversal not allowed".
func TestRefusedPathsComeFirst(t *testing.T) {
	rule, err := permission.ParseRule(permission.Ask, "write_file(/**/.git/hooks)")
	if err != nil {
		t.Fatal(err)
	}
	deny, err := permission.ParseRule(permission.Deny, "read_file(**/.env)")
	if err != nil {
		t.Fatal(err)
	}
	call := func(id, name, args string) llm.ToolCall {
		return llm.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
	}
	calls := []llm.ToolCall{
		call("dots", "write_file", `{"file_path":"/foo/../bar","content":"x"}`),
		call("hooks", "write_file", `{"file_path":"/repo/../.git/hooks/pre-commit","content":"x"}`),
		call("home", "read_file", `{"file_path":"~/.env"}`),
		call("drive", "ls", `{"path":"C:\\Windows"}`),
		call("ok", "write_file", `{"file_path":"/notes.md","content":"x"}`),
	}
	want := map[string]string{
		"dots":  "Error: Path traversal not allowed: /foo/../bar",
		"hooks": "Error: Path traversal not allowed: /repo/../.git/hooks/pre-commit",
		"home":  "Error: Path traversal not allowed: ~/.env",
		"drive": "Error: Windows absolute paths are not supported: C:\\Windows. Please use virtual paths starting with / (e.g., /workspace/file.txt)",
		"ok":    "Updated file /notes.md",
	}
	for _, mode := range []deepagents.PermissionMode{deepagents.ModeAsk, deepagents.ModeBypass} {
		t.Run(string(mode), func(t *testing.T) {
			m := replay.New(replay.Turn{ToolCalls: calls}, replay.Turn{Content: "done"})
			a, err := deepagents.New(deepagents.Config{Model: m, Checkpointer: checkpoint.NewMemorySaver(),
				Permissions: permission.New(rule, deny), PermissionMode: mode,
				InterruptOn: map[string]deepagents.InterruptOn{"ls": {}}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Invoke(context.Background(), agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != agent.StatusCompleted {
				t.Fatalf("status %s, interrupts %+v: a refused path was asked about", res.Status, res.Interrupts)
			}
			got := map[string]string{}
			for _, msg := range res.State.Messages {
				if msg.Role == llm.RoleTool {
					got[msg.ToolCallID] = msg.Text()
				}
			}
			for id, w := range want {
				if got[id] != w {
					t.Errorf("%s: %q, want %q", id, got[id], w)
				}
			}
		})
	}
}
