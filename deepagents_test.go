package deepagents_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm/llmtest"
)

type named struct{ name, prompt string }

func (n named) Name() string         { return n.name }
func (n named) SystemPrompt() string { return n.prompt }

func TestStackReplaceAndAppend(t *testing.T) {
	base := []string{"todos", "filesystem", "subagents", "summarization", "prompt_caching", "patch_tool_calls"}
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
			wantNames: []string{"todos", "memory", "skills", "filesystem", "subagents", "summarization", "prompt_caching", "patch_tool_calls", "audit", "human_in_the_loop"}},
		{name: "append", user: []deepagents.Middleware{named{"audit", "AUDIT"}}, wantNames: with("audit"), wantPrompt: []string{"write_todos", "AUDIT"}},
		{name: "replace a default in place", user: []deepagents.Middleware{named{"audit", "AUDIT"}, named{"todos", "MY TODOS"}}, wantNames: with("audit"), wantPrompt: []string{"MY TODOS", "## Files", "AUDIT"}},
		{name: "duplicate user names", user: []deepagents.Middleware{named{"x", ""}, named{"x", ""}}, wantErr: `two middleware are named "x"`},
		{name: "nil", user: []deepagents.Middleware{nil}, wantErr: "nil middleware"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Model, cfg.Middleware = llmtest.New(), tt.user
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
	m := llmtest.New(llmtest.Turn{Content: "a"}, llmtest.Turn{Content: "b"}).Record()
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
			tt.cfg.Model = llmtest.New()
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
