package deepagents_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/permission"
	"github.com/deepagents-go/deepagents/thread"
)

// TestMultiEditAsItsTraitsSay: multi_edit, a tool added after the modes,
// the rules and the approvals, is treated as edit_file is by each of
// them, through the traits it declares alone: asked about when approvals
// name it (as the CLI's defaults do, by its traits), run without asking
// in acceptEdits, refused in plan mode, decided by edit_file's deny and
// ask rules.
func TestMultiEditAsItsTraitsSay(t *testing.T) {
	const args = `{"file_path":"/seed.txt","edits":[{"old_string":"seed","new_string":"grown"}]}`
	tests := []struct {
		mode  deepagents.PermissionMode
		rule  string
		want  string
		after string // /seed.txt after the run
	}{
		{deepagents.ModeAsk, "", "asked", "seed\n"},
		{deepagents.ModeAcceptEdits, "", "ran", "grown\n"},
		{deepagents.ModeAcceptEdits, "deny edit_file(/seed.txt)", "denied", "seed\n"},
		{deepagents.ModeBypass, "ask edit_file(/*.txt)", "asked", "seed\n"},
		{deepagents.ModeBypass, "deny edit_file(/other/**)", "ran", "grown\n"},
		{deepagents.ModePlan, "", "refused", "seed\n"},
	}
	for _, tc := range tests {
		t.Run(string(tc.mode)+"/"+tc.rule, func(t *testing.T) {
			var perms *permission.Rules
			if tc.rule != "" {
				effect, spec, _ := strings.Cut(tc.rule, " ")
				r, err := permission.ParseRule(map[string]permission.Effect{"ask": permission.Ask, "deny": permission.Deny}[effect], spec)
				if err != nil {
					t.Fatal(err)
				}
				perms = permission.New(r)
			}
			m := replay.New(replay.Turn{ToolCalls: []llm.ToolCall{{ID: "c", Name: "multi_edit", Args: json.RawMessage(args)}}}, replay.Turn{Content: "done"})
			a, err := deepagents.New(deepagents.Config{Model: m, Checkpointer: checkpoint.NewMemorySaver(), MultiEdit: true,
				InterruptOn: map[string]deepagents.InterruptOn{"multi_edit": {}}, Permissions: perms, PermissionMode: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Invoke(context.Background(), agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")},
				Files: map[string]thread.FileData{"/seed.txt": {Content: "seed\n"}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := outcome(t, res, "c"); got != tc.want {
				t.Errorf("multi_edit: %s, want %s", got, tc.want)
			}
			if f, _ := res.State.Files.Get("/seed.txt"); f.Content != tc.after {
				t.Errorf("/seed.txt is %q, want %q", f.Content, tc.after)
			}
		})
	}
}
