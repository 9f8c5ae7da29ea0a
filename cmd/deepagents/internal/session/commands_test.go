package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCommandExpand(t *testing.T) {
	for _, tc := range []struct{ body, args, want string }{
		{"Fix issue $ARGUMENTS now.", "42 fast", "Fix issue 42 fast now."},
		{"Compare $1 with $2 ($3).", "a.go b.go", "Compare a.go with b.go ()."},
		{"Review the diff.", "carefully", "Review the diff.\n\nARGUMENTS: carefully"},
		{"Review the diff.", "  ", "Review the diff."},
		{"Costs $10 for $1.", "x", "Costs x0 for x."}, // $1 is replaced wherever it appears
	} {
		if got := (Command{Body: tc.body}).Expand(tc.args); got != tc.want {
			t.Errorf("Expand(%q, %q) = %q, want %q", tc.body, tc.args, got, tc.want)
		}
	}
}

func TestFindCommand(t *testing.T) {
	cmds := []Command{{Name: "review"}, {Name: "fix-issue"}}
	for _, tc := range []struct {
		text, name, args string
		ok               bool
	}{
		{"/fix-issue 42", "fix-issue", "42", true},
		{"/review\n\ndiff --git a b", "review", "\ndiff --git a b", true},
		{"/review", "review", "", true},
		{"/usr/bin is where", "", "", false},
		{"review", "", "", false},
		{"/fix", "", "", false},
	} {
		c, args, ok := FindCommand(cmds, tc.text)
		if ok != tc.ok || c.Name != tc.name || args != tc.args {
			t.Errorf("FindCommand(%q) = %q, %q, %v", tc.text, c.Name, args, ok)
		}
	}
}

// Command files: their front matter's description and hint, what is not
// used noted, names that cannot be typed and files too long refused.
func TestReadCommands(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("fix-issue.md", "---\ndescription: Fix an issue\nargument-hint: NUMBER\nallowed-tools: Bash(git:*)\nmodel: haiku\n---\nFix issue $ARGUMENTS.\n")
	write("frontend/component.md", "Make a component: !`ls src`\n")
	write("bad name.md", "x")
	write("notes.txt", "not a command")
	write("big.md", strings.Repeat("x", maxCommandBytes+1))
	cmds, left := readCommands(dir)
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "fix-issue,component" {
		t.Fatalf("commands %v", names)
	}
	if c := cmds[0]; c.Description != "Fix an issue" || c.ArgumentHint != "NUMBER" || c.Body != "Fix issue $ARGUMENTS." {
		t.Errorf("fix-issue: %+v", c)
	}
	joined := strings.Join(left, "\n")
	for _, want := range []string{"fix-issue.md: allowed-tools, model", "component.md: !`command` lines", `"bad name" is not a command name`, "big.md: over 256 KiB"} {
		if !strings.Contains(joined, want) {
			t.Errorf("left %q lacks %q", joined, want)
		}
	}
}
