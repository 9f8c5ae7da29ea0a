package hooks_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/deepagents-go/deepagents/hooks"
)

// BenchmarkPreToolUse is what a PreToolUse hook adds to a tool call: a
// command hook (a shell started, the event on its standard input, its JSON
// answer read) and a Go hook.
func BenchmarkPreToolUse(b *testing.B) {
	in := hooks.Input{HookEventName: hooks.PreToolUse, ToolName: "execute", ToolInput: json.RawMessage(`{"command":"go test ./..."}`)}
	for _, bc := range []struct {
		name string
		hook hooks.Hook
	}{
		{"command", hooks.Hook{Event: hooks.PreToolUse, Matcher: "Bash", Dialect: hooks.DialectClaude,
			Command: `cat >/dev/null; echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`}},
		{"go", hooks.Hook{Event: hooks.PreToolUse, Matcher: "execute", Func: func(context.Context, *hooks.Input) (*hooks.Output, error) {
			return hooks.Allow(""), nil
		}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r, err := hooks.New(hooks.Config{Dir: b.TempDir(), Hooks: []hooks.Hook{bc.hook}})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if res := r.Run(context.Background(), in); res.Decision != hooks.DecisionAllow {
					b.Fatalf("%+v", res)
				}
			}
		})
	}
}
