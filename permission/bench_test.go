package permission_test

import (
	"encoding/json"
	"testing"

	"github.com/deepagents-go/deepagents/permission"
	"github.com/deepagents-go/deepagents/tool"
)

// BenchmarkDecide decides execute calls against a typical rule set: what
// every execute call costs when rules are configured.
func BenchmarkDecide(b *testing.B) {
	var rules []permission.Rule
	for _, r := range []struct {
		e permission.Effect
		s string
	}{
		{permission.Allow, "execute(go test)"}, {permission.Allow, "execute(git status)"}, {permission.Allow, "execute(ls)"},
		{permission.Ask, "execute(git push)"}, {permission.Deny, "execute(rm)"}, {permission.Deny, "read_file(**/.env)"},
	} {
		rule, err := permission.ParseRule(r.e, r.s)
		if err != nil {
			b.Fatal(err)
		}
		rules = append(rules, rule)
	}
	rs := permission.New(rules...)
	for _, c := range []struct{ name, cmd string }{
		{"simple", "go test ./..."},
		{"pipeline", "git status --short && go test -race ./... 2>&1 | tail -20"},
		{"script", "for f in $(git ls-files '*.go'); do gofmt -l \"$f\"; done; if [ -n \"$x\" ]; then timeout 5 make test; fi"},
	} {
		args, _ := json.Marshal(map[string]string{"command": c.cmd})
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rs.Decide(permission.ExecuteTool, tool.Traits{RunsCommands: true}, args)
			}
		})
	}
}
