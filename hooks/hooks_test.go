package hooks_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/hooks"
)

func TestMatcher(t *testing.T) {
	tests := []struct {
		matcher string
		tool    string
		want    bool
	}{
		{"", "execute", true},
		{"*", "anything", true},
		{"execute", "execute", true},
		{"execute", "execute_more", false},
		{"write_file|edit_file", "edit_file", true},
		{"write_file|edit_file", "read_file", false},
		{"mcp__github__.*", "mcp__github__create_issue", true},
		{"mcp__github__.*", "mcp__gitlab__x", false},
		{"^read", "read_file", true},
		{"file$", "file_search", false},
	}
	for _, tc := range tests {
		var ran bool
		r, err := hooks.New(hooks.Config{Hooks: []hooks.Hook{{Event: hooks.PreToolUse, Matcher: tc.matcher, Func: func(context.Context, *hooks.Input) (*hooks.Output, error) {
			ran = true
			return nil, nil
		}}}})
		if err != nil {
			t.Fatal(err)
		}
		r.Run(context.Background(), hooks.Input{HookEventName: hooks.PreToolUse, ToolName: tc.tool})
		if ran != tc.want {
			t.Errorf("matcher %q on %q: ran %v, want %v", tc.matcher, tc.tool, ran, tc.want)
		}
	}
}

func TestNewRejects(t *testing.T) {
	f := func(context.Context, *hooks.Input) (*hooks.Output, error) { return nil, nil }
	for _, h := range []hooks.Hook{
		{Event: "PermissionDenied", Command: "true"},
		{Event: hooks.PreToolUse},
		{Event: hooks.PreToolUse, Command: "true", Func: f},
		{Event: hooks.PreToolUse, Matcher: "(", Command: "true"},
	} {
		if _, err := hooks.New(hooks.Config{Hooks: []hooks.Hook{h}}); err == nil {
			t.Errorf("New accepted %+v", h)
		}
	}
}

// command is a Runner of one command hook at e, in dir.
func command(t *testing.T, e hooks.Event, cmd string, timeout time.Duration) (*hooks.Runner, string) {
	t.Helper()
	dir := t.TempDir()
	r, err := hooks.New(hooks.Config{Dir: dir, Hooks: []hooks.Hook{{Event: e, Command: cmd, Timeout: timeout}}})
	if err != nil {
		t.Fatal(err)
	}
	return r, dir
}

// TestCommandWire: exit statuses and output, as Claude Code's hooks
// answer.
func TestCommandWire(t *testing.T) {
	tests := []struct {
		name  string
		event hooks.Event
		cmd   string
		check func(t *testing.T, res hooks.Result)
	}{
		{"exit 0 goes on", hooks.PreToolUse, "exit 0", func(t *testing.T, res hooks.Result) {
			if res.Decision != "" || len(res.Notes) != 0 || res.Ran != 1 {
				t.Errorf("%+v", res)
			}
		}},
		{"exit 2 denies with stderr", hooks.PreToolUse, "echo 'rm -rf is not allowed' >&2; exit 2", func(t *testing.T, res hooks.Result) {
			if res.Decision != hooks.DecisionDeny || res.Reason != "rm -rf is not allowed" {
				t.Errorf("%+v", res)
			}
		}},
		{"exit 2 blocks a Stop", hooks.Stop, "echo 'tests first' >&2; exit 2", func(t *testing.T, res hooks.Result) {
			if res.Decision != hooks.DecisionBlock || res.Reason != "tests first" {
				t.Errorf("%+v", res)
			}
		}},
		{"exit 2 at SessionEnd is shown", hooks.SessionEnd, "echo bye >&2; exit 2", func(t *testing.T, res hooks.Result) {
			if res.Decision != "" || len(res.Notes) != 1 || res.Notes[0].Text != "bye" || res.Notes[0].Warning {
				t.Errorf("%+v", res)
			}
		}},
		{"exit 1 is a warning", hooks.PreToolUse, "echo oops >&2; exit 1", func(t *testing.T, res hooks.Result) {
			if res.Decision != "" || len(res.Notes) != 1 || !res.Notes[0].Warning || !strings.Contains(res.Notes[0].Text, "oops") {
				t.Errorf("%+v", res)
			}
		}},
		{"JSON deny", hooks.PreToolUse, `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no .env"}}'`, func(t *testing.T, res hooks.Result) {
			if res.Decision != hooks.DecisionDeny || res.Reason != "no .env" {
				t.Errorf("%+v", res)
			}
		}},
		{"legacy approve", hooks.PreToolUse, `echo '{"decision":"approve","reason":"fine"}'`, func(t *testing.T, res hooks.Result) {
			if res.Decision != hooks.DecisionAllow {
				t.Errorf("%+v", res)
			}
		}},
		{"continue false", hooks.PostToolUse, `echo '{"continue":false,"stopReason":"build broken","systemMessage":"see CI"}'`, func(t *testing.T, res hooks.Result) {
			if !res.Halt || res.HaltReason != "build broken" || len(res.Notes) != 1 || res.Notes[0].Text != "see CI" {
				t.Errorf("%+v", res)
			}
		}},
		{"plain stdout is context for a prompt", hooks.UserPromptSubmit, "echo 'branch: main'", func(t *testing.T, res hooks.Result) {
			if res.ContextText() != "branch: main" {
				t.Errorf("%+v", res)
			}
		}},
		{"plain stdout is shown elsewhere", hooks.PostToolUse, "echo formatted", func(t *testing.T, res hooks.Result) {
			if len(res.Context) != 0 || len(res.Notes) != 1 || res.Notes[0].Text != "formatted" {
				t.Errorf("%+v", res)
			}
		}},
		{"a Stop block without a reason warns", hooks.Stop, `echo '{"decision":"block","reason":""}'`, func(t *testing.T, res hooks.Result) {
			if res.Decision != "" || len(res.Notes) != 1 || !res.Notes[0].Warning {
				t.Errorf("%+v", res)
			}
		}},
		{"a hook that leaves work in the background", hooks.Stop, `(sleep 5) & echo '{"decision":"block","reason":"later"}'`, func(t *testing.T, res hooks.Result) {
			if res.Decision != hooks.DecisionBlock || res.Reason != "later" {
				t.Errorf("%+v", res)
			}
		}},
		{"bad permissionDecision warns", hooks.PreToolUse, `echo '{"hookSpecificOutput":{"permissionDecision":"maybe"}}'`, func(t *testing.T, res hooks.Result) {
			if res.Decision != "" || len(res.Notes) != 1 || !res.Notes[0].Warning {
				t.Errorf("%+v", res)
			}
		}},
		{"CLAUDE_PROJECT_DIR and the cwd", hooks.UserPromptSubmit, `echo "$CLAUDE_PROJECT_DIR $(pwd)"`, func(t *testing.T, res hooks.Result) {
			f := strings.Fields(res.ContextText())
			if len(f) != 2 || f[0] != f[1] || !filepath.IsAbs(f[0]) {
				t.Errorf("%+v", res)
			}
		}},
		{"output is bounded", hooks.PostToolUse, "head -c 3000000 /dev/zero | tr '\\0' x", func(t *testing.T, res hooks.Result) {
			if len(res.Notes) != 1 || len(res.Notes[0].Text) > 20_000 {
				t.Errorf("a note of %d bytes", len(res.Notes[0].Text))
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := command(t, tc.event, tc.cmd, 0)
			tc.check(t, r.Run(context.Background(), hooks.Input{HookEventName: tc.event, ToolName: "execute"}))
		})
	}
}

// TestCommandInput: the event reaches the command as JSON on its
// standard input, with Claude Code's field names.
func TestCommandInput(t *testing.T) {
	r, dir := command(t, hooks.PreToolUse, "cat > event.json", 0)
	r.Run(context.Background(), hooks.Input{SessionID: "th", HookEventName: hooks.PreToolUse, ToolName: "execute", ToolInput: json.RawMessage(`{"command":"ls"}`), ToolUseID: "c1"})
	data, err := os.ReadFile(filepath.Join(dir, "event.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"session_id": "th", "hook_event_name": "PreToolUse", "tool_name": "execute", "tool_use_id": "c1", "cwd": dir}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (%s)", k, got[k], v, data)
		}
	}
	if in, _ := got["tool_input"].(map[string]any); in["command"] != "ls" {
		t.Errorf("tool_input: %s", data)
	}
}

// TestCommandTimeout: a hook past its timeout is stopped, with its
// children, and warned about.
func TestCommandTimeout(t *testing.T) {
	r, dir := command(t, hooks.PostToolUse, "(sleep 30; touch late) & sleep 30", 300*time.Millisecond)
	start := time.Now()
	res := r.Run(context.Background(), hooks.Input{HookEventName: hooks.PostToolUse, ToolName: "x"})
	if len(res.Notes) != 1 || !res.Notes[0].Warning || !strings.Contains(res.Notes[0].Text, "did not finish") {
		t.Errorf("%+v", res)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the timeout took %s", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "late")); err == nil {
		t.Error("the hook's child outlived it")
	}
}

// TestParallelAndDeduplicated: every hook of an event runs; the same
// command twice runs once; the strongest decision wins, with the reasons
// of the hooks that took it.
func TestParallelAndDeduplicated(t *testing.T) {
	dir := t.TempDir()
	f := func(out *hooks.Output) hooks.Func {
		return func(context.Context, *hooks.Input) (*hooks.Output, error) { return out, nil }
	}
	r, err := hooks.New(hooks.Config{Dir: dir, Hooks: []hooks.Hook{
		{Event: hooks.PreToolUse, Command: "echo x >> count"},
		{Event: hooks.PreToolUse, Command: "echo x >> count"},
		{Event: hooks.PreToolUse, Func: f(hooks.Allow("a"))},
		{Event: hooks.PreToolUse, Func: f(hooks.Deny("first"))},
		{Event: hooks.PreToolUse, Func: f(hooks.Ask("b"))},
		{Event: hooks.PreToolUse, Func: f(hooks.Deny("second"))},
	}})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), hooks.Input{HookEventName: hooks.PreToolUse, ToolName: "execute"})
	if res.Ran != 5 || res.Decision != hooks.DecisionDeny || res.Reason != "first\nsecond" {
		t.Errorf("%+v", res)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "count")); string(data) != "x\n" {
		t.Errorf("the command ran %q", data)
	}
}

// TestClaudeDialect: a hook of Claude Code's dialect is matched on its
// names and gets its input fields and the host's paths; its updatedInput
// comes back in the agent's.
func TestClaudeDialect(t *testing.T) {
	host := t.TempDir()
	var got []hooks.Input
	hook := func(matcher string, out *hooks.Output) hooks.Hook {
		return hooks.Hook{Event: hooks.PreToolUse, Matcher: matcher, Dialect: hooks.DialectClaude, Func: func(_ context.Context, in *hooks.Input) (*hooks.Output, error) {
			got = append(got, *in)
			return out, nil
		}}
	}
	updated := &hooks.Output{Specific: &hooks.Specific{UpdatedInput: json.RawMessage(`{"file_path":"` + host + `/b.txt","content":"y"}`)}}
	var multi int
	var multiNames []string
	multiEdit := hooks.Hook{Event: hooks.PreToolUse, Matcher: "MultiEdit", Dialect: hooks.DialectClaude, Func: func(_ context.Context, in *hooks.Input) (*hooks.Output, error) {
		multi++
		multiNames = append(multiNames, in.ToolName)
		return nil, nil
	}}
	r, err := hooks.New(hooks.Config{
		Dir:       host,
		Hooks:     []hooks.Hook{hook("Write|Edit", updated), hook("Bash", nil), multiEdit},
		HostPath:  func(p string) (string, bool) { return host + p, true },
		AgentPath: func(p string) (string, bool) { return strings.TrimPrefix(p, host), strings.HasPrefix(p, host) },
	})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), hooks.Input{HookEventName: hooks.PreToolUse, ToolName: "write_file", PermissionMode: "bypass", ToolInput: json.RawMessage(`{"file_path":"/a.txt","content":"x"}`)})
	if len(got) != 1 || got[0].ToolName != "Write" || got[0].PermissionMode != "bypassPermissions" || !strings.Contains(string(got[0].ToolInput), `"file_path":"`+host+`/a.txt"`) {
		t.Fatalf("the hook got %+v", got)
	}
	if string(res.UpdatedInput) != `{"content":"y","file_path":"/b.txt"}` {
		t.Errorf("updatedInput in the agent's dialect: %s", res.UpdatedInput)
	}
	got = nil
	r.Run(context.Background(), hooks.Input{HookEventName: hooks.PreToolUse, ToolName: "execute", ToolInput: json.RawMessage(`{"command":"ls","timeout":5}`)})
	if len(got) != 1 || got[0].ToolName != "Bash" || string(got[0].ToolInput) != `{"command":"ls","timeout":5000}` {
		t.Errorf("Bash got %+v", got)
	}
	r.Run(context.Background(), hooks.Input{HookEventName: hooks.PreToolUse, ToolName: "edit_file", ToolInput: json.RawMessage(`{"file_path":"/a.txt"}`)})
	if multi != 1 {
		t.Errorf("a MultiEdit matcher ran %d times on edit_file, want 1", multi)
	}
	// multi_edit is Claude Code's MultiEdit itself.
	r.Run(context.Background(), hooks.Input{HookEventName: hooks.PreToolUse, ToolName: "multi_edit", ToolInput: json.RawMessage(`{"file_path":"/a.txt","edits":[]}`)})
	if multi != 2 || multiNames[1] != "MultiEdit" {
		t.Errorf("a MultiEdit matcher on multi_edit: ran %d times, saw %v", multi, multiNames)
	}
}

// TestReadClaudeSettings reads a settings.json as Claude Code users write
// it: what runs here is kept, the rest is said.
func TestReadClaudeSettings(t *testing.T) {
	data := []byte(`{
  "permissions": {"allow": ["Bash(npm run lint)"]},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 validate.py", "timeout": 5}]}],
    "PostToolUse": [{"matcher": "Edit|MultiEdit|Write", "hooks": [{"type": "command", "command": "fmt.sh"}, {"type": "http", "url": "http://x", "headers": {"Authorization": "Bearer $T"}, "allowedEnvVars": ["T"]}, {"type": "prompt", "prompt": "ok?"}, {"type": "agent", "prompt": "check"}]}],
    "PermissionDenied": [{"hooks": [{"type": "command", "command": "x"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "stop.sh"}]}]
  }
}`)
	s, err := hooks.ReadClaudeSettings(data)
	if err != nil {
		t.Fatal(err)
	}
	hs, skipped, err := s.Hooks(hooks.DialectClaude)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 5 || hs[0].Event != hooks.PreToolUse || hs[0].Timeout != 5*time.Second || hs[0].Dialect != hooks.DialectClaude || hs[1].Matcher != "Edit|MultiEdit|Write" || hs[4].Event != hooks.Stop {
		t.Errorf("hooks %+v", hs)
	}
	if h := hs[2]; h.URL != "http://x" || h.Headers["Authorization"] != "Bearer $T" || len(h.AllowedEnvVars) != 1 {
		t.Errorf("the http hook: %+v", h)
	}
	if h := hs[3]; h.Prompt != "ok?" || h.Timeout != hooks.DefaultPromptTimeout {
		t.Errorf("the prompt hook: %+v", h)
	}
	if len(skipped) != 2 || !strings.Contains(strings.Join(skipped, "\n"), "PermissionDenied") || !strings.Contains(strings.Join(skipped, "\n"), `"agent"`) {
		t.Errorf("skipped %q", skipped)
	}
	for _, bad := range []string{
		`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": ""}]}]}}`,
		`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]}}`,
		`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": 1e300}]}]}}`,
		`{"hooks": {"Stop": [{"hooks": [{"type": "http", "url": ""}]}]}}`,
	} {
		s, err := hooks.ReadClaudeSettings([]byte(bad))
		if err == nil {
			_, _, err = s.Hooks(hooks.DialectClaude)
		}
		if err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	if _, err := hooks.ReadClaudeSettings([]byte(`{"hooks": [`)); err == nil {
		t.Error("accepted malformed JSON")
	}
}

// FuzzReadClaudeSettings: whatever a settings file holds, reading it and
// building its Runner fails cleanly or works.
func FuzzReadClaudeSettings(f *testing.F) {
	f.Add([]byte(`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"x"}]}]}}`))
	f.Add([]byte(`{"hooks":{"Stop":[{"matcher":"(","hooks":[{"type":"command","command":"x","timeout":1}]}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := hooks.ReadClaudeSettings(data)
		if err != nil {
			return
		}
		hs, _, err := s.Hooks(hooks.DialectClaude)
		if err != nil {
			return
		}
		hooks.New(hooks.Config{Hooks: hs}) //nolint:errcheck // a bad matcher is an error
	})
}

// TestGoHookTimeout: a Go hook that ignores its context does not hold the
// run past its timeout.
func TestGoHookTimeout(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	r, err := hooks.New(hooks.Config{Hooks: []hooks.Hook{{Event: hooks.Stop, Timeout: 50 * time.Millisecond, Func: func(context.Context, *hooks.Input) (*hooks.Output, error) {
		<-block
		return hooks.Block("never"), nil
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Run(context.Background(), hooks.Input{HookEventName: hooks.Stop})
	if res.Decision != "" || len(res.Notes) != 1 || !strings.Contains(res.Notes[0].Text, "did not finish within 50ms") {
		t.Errorf("%+v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res = r.Run(ctx, hooks.Input{HookEventName: hooks.Stop})
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0].Text, "cancelled") {
		t.Errorf("%+v", res)
	}
}

// Every event is described, and the list a command prints has them all.
func TestAbouts(t *testing.T) {
	for _, e := range hooks.Events {
		if a, ok := hooks.Abouts[e]; !ok || a.When == "" {
			t.Errorf("%s is not described", e)
		}
	}
	if len(hooks.Abouts) != len(hooks.Events) {
		t.Errorf("%d descriptions for %d events", len(hooks.Abouts), len(hooks.Events))
	}
}
