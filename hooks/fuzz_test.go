package hooks

import (
	"encoding/json"
	"testing"
)

// FuzzHookAnswer: whatever a hook prints, for whatever tool input, the
// runner reads it without failing, and what it hands on is bounded and,
// for updatedInput, a JSON object.
func FuzzHookAnswer(f *testing.F) {
	f.Add(`{"hookSpecificOutput":{"permissionDecision":"deny","updatedInput":{"file_path":"/x"}}}`, `{"file_path":"/a","timeout":3}`, "write_file")
	f.Add(`{"continue":false,"decision":"block","reason":"r"}`, `{"description":"do it"}`, "task")
	f.Add("plain", `[1,2]`, "execute")
	r := &Runner{cfg: Config{
		HostPath:  func(p string) (string, bool) { return "/host" + p, true },
		AgentPath: func(p string) (string, bool) { return p[min(len(p), 5):], true },
	}}
	f.Fuzz(func(t *testing.T, stdout, toolInput, tool string) {
		for _, e := range Events {
			for _, d := range []Dialect{DialectAgent, DialectClaude} {
				h := compiled{Hook: Hook{Event: e, Dialect: d, Name: "fuzz"}}
				in := &Input{HookEventName: e, ToolName: tool, ToolInput: json.RawMessage(toolInput), ToolResponse: json.RawMessage(toolInput)}
				if d == DialectClaude {
					r.toClaude(in)
				}
				var res Result
				r.reduce(&res, h, in, parseStdout(stdout))
				if res.UpdatedInput != nil {
					var obj map[string]any
					if json.Unmarshal(res.UpdatedInput, &obj) != nil {
						t.Fatalf("updatedInput %s is not an object", res.UpdatedInput)
					}
				}
				for _, c := range res.Context {
					if len(c) > maxText+64 {
						t.Fatalf("context of %d bytes", len(c))
					}
				}
			}
		}
	})
}
