package deepagents_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/permission"
	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/tool"
)

type named struct{ name, prompt string }

func (n named) Name() string         { return n.name }
func (n named) SystemPrompt() string { return n.prompt }

func TestStackReplaceAndAppend(t *testing.T) {
	base := []string{"loops", "verify", "todos", "filesystem", "subagents", "summarization", "prompt_caching", "patch_tool_calls"}
	with := func(extra ...string) []string { return append(append([]string(nil), base...), extra...) }
	tests := []struct {
		name       string
		cfg        deepagents.Config
		user       []deepagents.Middleware
		wantNames  []string
		wantPrompt []string
		wantErr    string
	}{
		{name: "defaults", wantNames: base, wantPrompt: []string{"write_todos", "## Files", "## Delegating with task"}},
		{name: "everything configured", cfg: deepagents.Config{Memory: []string{"/AGENTS.md"}, Skills: []string{"/skills/"}, InterruptOn: map[string]deepagents.InterruptOn{"write_file": {}}},
			user:      []deepagents.Middleware{named{"audit", "AUDIT"}},
			wantNames: []string{"loops", "verify", "todos", "memory", "skills", "filesystem", "subagents", "summarization", "prompt_caching", "patch_tool_calls", "audit", "human_in_the_loop"}},
		{name: "a store: messages sent mid-run", cfg: deepagents.Config{Store: store.NewMemoryStore()},
			wantNames: []string{"loops", "verify", "todos", "filesystem", "subagents", "steer", "summarization", "prompt_caching", "patch_tool_calls"}},
		{name: "append", user: []deepagents.Middleware{named{"audit", "AUDIT"}}, wantNames: with("audit"), wantPrompt: []string{"write_todos", "AUDIT"}},
		{name: "replace a default in place", user: []deepagents.Middleware{named{"audit", "AUDIT"}, named{"todos", "MY TODOS"}}, wantNames: with("audit"), wantPrompt: []string{"MY TODOS", "## Files", "AUDIT"}},
		{name: "duplicate user names", user: []deepagents.Middleware{named{"x", ""}, named{"x", ""}}, wantErr: `two middleware are named "x"`},
		{name: "nil", user: []deepagents.Middleware{nil}, wantErr: "nil middleware"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Model, cfg.Middleware = replay.New(), tt.user
			a, err := deepagents.New(cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, m := range a.Middleware() {
				names = append(names, m.Name())
			}
			if strings.Join(names, ",") != strings.Join(tt.wantNames, ",") {
				t.Errorf("stack = %v, want %v", names, tt.wantNames)
			}
			last := -1
			for _, p := range tt.wantPrompt {
				i := strings.Index(a.SystemPrompt(), p)
				if i < 0 || i < last {
					t.Errorf("prompt section %q missing or out of order", p)
				}
				last = i
			}
			if tt.name == "replace a default in place" && strings.Contains(a.SystemPrompt(), "## Planning with write_todos") {
				t.Error("replaced todos middleware still contributes its prompt")
			}
		})
	}
}

func TestSystemPromptIsStable(t *testing.T) {
	m := replay.New(replay.Turn{Content: "a"}, replay.Turn{Content: "b"}).Record()
	a, err := deepagents.New(deepagents.Config{Model: m, SystemPrompt: "You review Go code."})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := a.Invoke(context.Background(), agent.Prompt("hi")); err != nil {
			t.Fatal(err)
		}
	}
	reqs := m.Requests()
	if reqs[0].Request.System != reqs[1].Request.System || !strings.HasPrefix(reqs[0].Request.System, "You review Go code.\n\n"+deepagents.BasePrompt) {
		t.Errorf("system prompts differ or lack the base prompt:\n%q\n%q", reqs[0].Request.System, reqs[1].Request.System)
	}
}

func TestApprovalRulesNameRealTools(t *testing.T) {
	tests := []struct {
		name    string
		cfg     deepagents.Config
		wantErr string
	}{
		{"built-in tool", deepagents.Config{InterruptOn: map[string]deepagents.InterruptOn{"write_file": {}}}, ""},
		{"typo", deepagents.Config{InterruptOn: map[string]deepagents.InterruptOn{"writ_file": {}}}, `unknown tool "writ_file" in InterruptOn: the tools are edit_file, glob, grep, ls, read_file, task, write_file, write_todos`},
		{"execute without a sandbox", deepagents.Config{InterruptOn: map[string]deepagents.InterruptOn{"execute": {}}}, `unknown tool "execute"`},
		{"a subagent's rule", deepagents.Config{Subagents: []deepagents.Subagent{{Name: "r", Description: "d", InterruptOn: map[string]deepagents.InterruptOn{"nope": {}}}}}, `unknown tool "nope" in the InterruptOn of subagent r`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Model = replay.New()
			_, err := deepagents.New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, deepagents.ErrUnknownTool) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want ErrUnknownTool with %q", err, tt.wantErr)
			}
		})
	}
}

// TestSubagentPromptsDescribeOnlyTheirTools checks that a subagent's system
// prompt names no tool it cannot call, and every tool it can.
func TestSubagentPromptsDescribeOnlyTheirTools(t *testing.T) {
	task := func(id, sub string) llm.ToolCall {
		return llm.ToolCall{ID: id, Name: "task", Args: json.RawMessage(`{"description":"look","subagent_type":"` + sub + `"}`)}
	}
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{task("1", "reader")}},
		replay.Turn{Agent: "reader", Content: "read"},
		replay.Turn{ToolCalls: []llm.ToolCall{task("2", "general-purpose")}},
		replay.Turn{Agent: "general-purpose", Content: "done too"},
		replay.Turn{Content: "done"},
	).Record()
	a, err := deepagents.New(deepagents.Config{Model: m, Subagents: []deepagents.Subagent{
		{Name: "reader", Description: "reads", SystemPrompt: "You read.", AllowedTools: []string{"read_file", "ls"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Invoke(context.Background(), deepagents.Prompt("go")); err != nil {
		t.Fatal(err)
	}
	allTools := []string{"ls", "read_file", "write_file", "edit_file", "glob", "grep", "execute", "write_todos", "task"}
	seen := map[string]bool{}
	for _, r := range m.Requests() {
		if r.Agent == "main" || seen[r.Agent] {
			continue
		}
		seen[r.Agent] = true
		offered := map[string]bool{}
		for _, s := range r.Request.Tools {
			offered[s.Name] = true
		}
		for _, name := range allTools {
			marker := name
			if name == "task" { // also an ordinary word
				marker = "task tool"
			}
			// A prompt never describes a tool its agent lacks. One that
			// offers only some file tools names each of them; the full
			// set is described by the tools' own descriptions.
			mentioned := strings.Contains(r.Request.System, marker)
			if mentioned && !offered[name] || r.Agent == "reader" && offered[name] && !mentioned {
				t.Errorf("%s: tool %s offered %v, mentioned in the prompt %v", r.Agent, name, offered[name], mentioned)
			}
		}
	}
	if len(seen) != 2 {
		t.Fatalf("subagents seen: %v", seen)
	}
}

func TestAllowedToolsMustExist(t *testing.T) {
	_, err := deepagents.New(deepagents.Config{Model: replay.New(), Subagents: []deepagents.Subagent{
		{Name: "reader", Description: "reads", AllowedTools: []string{"read_fil"}},
	}})
	if !errors.Is(err, agent.ErrUnknownTool) || !strings.Contains(err.Error(), `"read_fil"`) || !strings.Contains(err.Error(), "read_file") {
		t.Errorf("err = %v, want ErrUnknownTool naming the tool and listing the real ones", err)
	}
}

// TestPermissionRules runs a turn with a denied, an asked and an
// undecided call, then resumes it with an agent rebuilt without rules:
// the denied call stays refused.
func TestPermissionRules(t *testing.T) {
	rule := func(e permission.Effect, s string) permission.Rule {
		r, err := permission.ParseRule(e, s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	rules := permission.New(rule(permission.Deny, "write_file(/etc/**)"), rule(permission.Ask, "write_file(/src/**)"))
	write := func(id, p string) llm.ToolCall {
		return llm.ToolCall{ID: id, Name: "write_file", Args: json.RawMessage(`{"file_path":"` + p + `","content":"x"}`)}
	}
	m := replay.New(replay.Turn{ToolCalls: []llm.ToolCall{write("deny", "/etc/passwd"), write("ask", "/src/a.go"), write("free", "/notes.md")}}, replay.Turn{Content: "done"})
	saver := checkpoint.NewMemorySaver()
	a, err := deepagents.New(deepagents.Config{Model: m, Checkpointer: saver, Permissions: rules})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := a.Invoke(ctx, agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.StatusInterrupted || len(res.Interrupts) != 1 || res.Interrupts[0].ToolCallID != "ask" || !strings.Contains(res.Interrupts[0].Description, "ask write_file(/src/**)") {
		t.Fatalf("interrupts: %+v", res.Interrupts)
	}
	// Rebuilt without the rules, the agent resumes; the refusal stands.
	b, err := deepagents.New(deepagents.Config{Model: m, Checkpointer: saver})
	if err != nil {
		t.Fatal(err)
	}
	res, err = b.Resume(ctx, "t", []agent.Decision{{Type: agent.DecisionApprove}})
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("resume: %v %+v", err, res)
	}
	got := map[string]string{}
	for _, msg := range res.State.Messages {
		if msg.Role == llm.RoleTool {
			got[msg.ToolCallID] += msg.Text()
		}
	}
	if !strings.Contains(got["deny"], "permission denied: the rule deny write_file(/etc/**) forbids this call") {
		t.Errorf("denied call: %q", got["deny"])
	}
	if got["ask"] != "Updated file /src/a.go" || got["free"] != "Updated file /notes.md" {
		t.Errorf("results: %v", got)
	}
	if _, ok := res.State.Files.Get("/etc/passwd"); ok {
		t.Error("the denied write happened")
	}
}

// TestSubagentsGetTheAgentsOptions: the options of Config reach the
// subagents the task tool runs (here MaxParallelTools and Logger, which
// subagents once did without).
func TestSubagentsGetTheAgentsOptions(t *testing.T) {
	var running, most atomic.Int32
	probe := tool.Must(tool.New("probe", "Probe.", func(ctx context.Context, _ struct{}) (string, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		return "ok", nil
	}))
	boom := tool.Must(tool.New("boom", "Panics.", func(context.Context, struct{}) (string, error) { panic("boom") }))
	call := func(id, name string) llm.ToolCall {
		return llm.ToolCall{ID: id, Name: name, Args: json.RawMessage(`{}`)}
	}
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{{ID: "t", Name: "task", Args: json.RawMessage(`{"subagent_type":"worker","description":"probe"}`)}}},
		replay.Turn{Agent: "worker", ToolCalls: []llm.ToolCall{call("p1", "probe"), call("p2", "probe"), call("p3", "probe"), call("p4", "probe"), call("b", "boom")}},
		replay.Turn{Agent: "worker", Content: "probed"},
		replay.Turn{Content: "done"},
	)
	var logs strings.Builder
	a, err := deepagents.New(deepagents.Config{
		Model:            m,
		MaxParallelTools: 1,
		Logger:           slog.New(slog.NewTextHandler(&logs, nil)),
		Subagents:        []deepagents.Subagent{{Name: "worker", Description: "probes", Tools: []tool.Tool{probe, boom}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Invoke(context.Background(), deepagents.Prompt("go")); err != nil {
		t.Fatal(err)
	}
	if n := most.Load(); n != 1 {
		t.Errorf("the subagent ran %d tool calls at once, want MaxParallelTools 1", n)
	}
	if !strings.Contains(logs.String(), "tool panicked") {
		t.Errorf("the subagent's log did not reach Config.Logger: %q", logs.String())
	}
}
