package permission

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCommands holds the cases of the old TestSplit (the hand-written
// splitter's): the simple commands of plain lines are the same; what it
// refused as unparsable is now taken apart, and what it runs is listed
// (or marked Unsure where the rules cannot know).
func TestCommands(t *testing.T) {
	type cmd struct {
		args   []string
		unsure bool
	}
	c := func(args ...string) cmd { return cmd{args: args} }
	u := func(args ...string) cmd { return cmd{args: args, unsure: true} }
	tests := []struct {
		line string
		want []cmd // nil: ErrUnparsable
	}{
		{"git status", []cmd{c("git", "status")}},
		{"  git   status  -s ", []cmd{c("git", "status", "-s")}},
		{"git status; rm -rf x", []cmd{c("git", "status"), c("rm", "-rf", "x")}},
		{"a && b || c | d & e\nf", []cmd{c("a"), c("b"), c("c"), c("d"), c("e"), c("f")}},
		{"echo 'a; rm -rf x'", []cmd{c("echo", "a; rm -rf x")}},
		{`echo "a && b" c\;d`, []cmd{c("echo", "a && b", "c;d")}},
		{`echo ""`, []cmd{c("echo", "")}},
		{"FOO=1 BAR=2 rm -rf x", []cmd{c("rm", "-rf", "x")}},
		// Redirections are not words of the command any more.
		{"go test ./... 2>&1 | tail -5", []cmd{c("go", "test", "./..."), c("tail", "-5")}},
		{"make &> log", []cmd{c("make")}},
		{"ls # ; rm -rf x", []cmd{c("ls")}},
		{"/bin/rm -rf x", []cmd{c("/bin/rm", "-rf", "x")}},
		{"echo $HOME", []cmd{c("echo", "$HOME")}},
		{"echo ${HOME}", []cmd{c("echo", "${HOME}")}},
		// Once refused, now walked.
		{"echo $(rm -rf x)", []cmd{c("echo", "$(rm -rf x)"), c("rm", "-rf", "x")}},
		{"echo `rm -rf x`", []cmd{c("echo", "`rm -rf x`"), c("rm", "-rf", "x")}},
		{`echo "$(rm -rf x)"`, []cmd{c("echo", `"$(rm -rf x)"`), c("rm", "-rf", "x")}},
		{"(cd x && rm -rf y)", []cmd{c("cd", "x"), c("rm", "-rf", "y")}},
		{"{ rm -rf x; }", []cmd{c("rm", "-rf", "x")}},
		{"cat <<EOF\nx\nEOF", []cmd{c("cat")}},
		{"diff <(ls a) <(ls b)", []cmd{c("diff", "<(ls a)", "<(ls b)"), c("ls", "a"), c("ls", "b")}},
		{"sh -c 'rm -rf x'", []cmd{c("sh", "-c", "rm -rf x"), c("rm", "-rf", "x")}},
		{"bash -c rm", []cmd{c("bash", "-c", "rm"), c("rm")}},
		{"sudo rm -rf /", []cmd{c("sudo", "rm", "-rf", "/"), c("rm", "-rf", "/")}},
		{"xargs rm < list", []cmd{c("xargs", "rm"), c("rm")}},
		{"env rm -rf x", []cmd{c("env", "rm", "-rf", "x"), c("rm", "-rf", "x")}},
		{"find . -exec rm {} +", []cmd{c("find", ".", "-exec", "rm", "{}", "+"), c("rm", "{}")}},
		// Still unknown.
		{"X=rm; $X -rf x", []cmd{u("$X", "-rf", "x")}},
		{"r? -rf x", []cmd{u("r?", "-rf", "x")}},
		{"bash script.sh", []cmd{u("bash", "script.sh")}},
		{"eval \"$X\"", []cmd{u("eval", `"$X"`)}},
		// Markdown in a here-document: backquotes pair up.
		{"cat > README.md <<'EOF'\n" + strings.Repeat("```go\nx()\n```\n", 100) + "EOF", []cmd{c("cat")}},
		// Unparsable.
		{"echo 'unbalanced", nil},
		{`echo "unbalanced`, nil},
		{"if true; then", nil},
		{strings.Repeat("(", 300) + "x" + strings.Repeat(")", 300), nil},
		{"echo " + strings.Repeat("a", MaxCommandBytes), nil},
	}
	for _, tt := range tests {
		got, err := Commands(tt.line)
		if tt.want == nil {
			if !errors.Is(err, ErrUnparsable) {
				t.Errorf("Commands(%.40q) = %v, %v; want ErrUnparsable", tt.line, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Commands(%q): %v", tt.line, err)
			continue
		}
		var have []cmd
		for _, g := range got {
			if g.Maybe {
				continue
			}
			have = append(have, cmd{args: g.Args, unsure: g.Unsure != ""})
		}
		if !reflect.DeepEqual(have, tt.want) {
			t.Errorf("Commands(%q) = %v, want %v", tt.line, have, tt.want)
		}
	}
}

// TestCommandsEnvironment: what changes the environment marks the
// commands Assigned.
func TestCommandsEnvironment(t *testing.T) {
	for line, want := range map[string]bool{
		"git status":                       false,
		"FOO=1 git status":                 true,
		"export FOO=1; git status":         true,
		"git status; FOO=1":                true,
		"env FOO=1 git status":             true,
		"env -i git status":                false,
		"git -c core.pager=x status":       true,
		"git --config-env=a=B status":      true,
		"git --exec-path=/tmp status":      true,
		"git -C . status":                  false,
		"FOO=1 sh -c 'git status'":         true,
		"systemd-run -E A=1 git status":    true,
		"sudo LD_PRELOAD=x.so git status":  true,
		"declare -x PATH=/tmp; git status": true,
	} {
		cmds, err := Commands(line)
		if err != nil {
			t.Fatal(err)
		}
		cmds = slices.DeleteFunc(cmds, func(c Command) bool { return c.Maybe })
		last := cmds[len(cmds)-1]
		if last.Assigned != want {
			t.Errorf("%q: %v Assigned %v, want %v", line, last.Args, last.Assigned, want)
		}
	}
}

// TestCommandsBounds: lines built to make the walk quadratic or deep
// finish quickly, and are never allowed.
func TestCommandsBounds(t *testing.T) {
	for _, line := range []string{
		strings.Repeat("timeout 1 ", 20000) + "rm x",
		strings.Repeat("eval ", 50000) + "x",
		strings.Repeat("sh -c ", 40000) + "x",
		strings.Repeat("runuser -u x ", 15000) + "x",
		strings.Repeat("echo x; ", 30000),
		strings.Repeat("$(", 150) + "x" + strings.Repeat(")", 150),
	} {
		start := time.Now()
		cmds, err := Commands(line)
		if took := time.Since(start); took > 20*time.Second { // quadratic, 10,000 wrappers took 11 s
			t.Errorf("%.30q...: %s", line, took)
		}
		if err != nil {
			if !errors.Is(err, ErrUnparsable) {
				t.Errorf("%.30q...: %v", line, err)
			}
			continue
		}
		if strings.HasPrefix(line, "timeout") && cmds[len(cmds)-1].Unsure == "" {
			t.Errorf("a chain of wrappers is not unsure: %q", cmds[len(cmds)-1].Args[:3])
		}
	}
}
