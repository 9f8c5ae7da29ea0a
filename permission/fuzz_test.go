package permission_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/deepagents-go/deepagents/permission"
	"github.com/deepagents-go/deepagents/tool"
)

// ran runs line in mvdan.cc/sh's interpreter, with nothing executed and
// no file touched, and returns the programs it would have started (sh -c
// and bash -c strings are run the same way). It is the oracle of the
// fuzz tests: independent of the walk in Commands, it knows what a line
// of shell keywords, functions, traps, eval and aliases really runs. ok
// is false when the line does not parse.
func ran(line string, depth int) (progs [][]string, ok bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, false
	}
	defer func() { _ = recover() }() // the interpreter's own bugs are not the rules'
	var (
		mu   sync.Mutex // pipelines and background jobs call the handler concurrently
		done bool       // a job still running after Run records no more
	)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	r, err := interp.New(
		interp.Env(expand.ListEnviron("PATH=/usr/bin:/bin", "HOME=/nonexistent")),
		interp.Dir("/"),
		interp.StdIO(nil, io.Discard, io.Discard),
		interp.ExecHandler(func(ctx context.Context, args []string) error {
			var inner [][]string
			if len(args) >= 3 && (args[0] == "sh" || args[0] == "bash") && args[1] == "-c" && depth < 3 {
				inner, _ = ran(args[2], depth+1)
			}
			if depth < 3 {
				for _, c := range optionCommands(args) {
					more, _ := ran(c, depth+1)
					inner = append(inner, more...)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if done {
				return nil
			}
			progs = append(progs, args)
			progs = append(progs, inner...)
			return nil
		}),
		interp.OpenHandler(func(ctx context.Context, p string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
			return nopFile{bytes.NewReader(nil)}, nil
		}),
		interp.ReadDirHandler2(func(ctx context.Context, p string) ([]fs.DirEntry, error) { return nil, nil }),
	)
	if err != nil {
		return nil, true
	}
	_ = r.Run(ctx, f)
	mu.Lock()
	found, done := slices.Clone(progs), true
	mu.Unlock()
	return found, true
}

// optionCommands are the shell commands a program runs from its options,
// as the programs themselves read them: man's pager (-P, --pager, sh -c
// of the value), less's +!cmd, vim's -c and + Ex commands that start with
// "!". The oracle's model of them, written apart from the rules' walk.
func optionCommands(args []string) []string {
	var out []string
	prog := path.Base(args[0])
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case prog == "man" && (a == "-P" || a == "--pager") && i+1 < len(args):
			out = append(out, args[i+1])
			i++
		case prog == "man" && strings.HasPrefix(a, "--pager="):
			out = append(out, strings.TrimPrefix(a, "--pager="))
		case prog == "man" && strings.HasPrefix(a, "-P") && len(a) > 2:
			out = append(out, a[2:])
		case (prog == "less" || prog == "more") && strings.HasPrefix(a, "+") && strings.Contains(a, "!"):
			out = append(out, a[strings.Index(a, "!")+1:])
		case (prog == "vim" || prog == "vi" || prog == "nvim") && a == "-c" && i+1 < len(args):
			if ex := strings.TrimLeft(args[i+1], ": "); strings.HasPrefix(ex, "!") {
				out = append(out, ex[1:])
			}
			i++
		case (prog == "vim" || prog == "vi" || prog == "nvim") && strings.HasPrefix(a, "+"):
			if ex := strings.TrimLeft(a[1:], ": "); strings.HasPrefix(ex, "!") {
				out = append(out, ex[1:])
			}
		}
	}
	return out
}

type nopFile struct{ *bytes.Reader }

func (nopFile) Write(p []byte) (int, error) { return len(p), nil }
func (nopFile) Close() error                { return nil }

// checkLine holds the rules' promises for one line under deny rm and
// allow git status, echo: nothing panics; a line that runs rm is denied
// or asked about; an allowed line runs nothing but git and echo; a line
// that does not parse is asked about.
func checkLine(t *testing.T, rs *permission.Rules, line string) {
	raw, _ := json.Marshal(map[string]string{"command": line})
	var in struct{ Command string }
	_ = json.Unmarshal(raw, &in)
	line = in.Command // what the tool gets: JSON has no invalid UTF-8
	start := time.Now()
	d := rs.Decide("execute", tool.Traits{RunsCommands: true}, raw)
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("%.60q: deciding took %s", line, took)
	}
	cmds, err := permission.Commands(line)
	if d.Effect == permission.Allow && err != nil {
		t.Fatalf("%q: an unparsable command was allowed", line)
	}
	if errors.Is(err, permission.ErrUnparsable) && d.Effect != permission.Ask {
		t.Fatalf("%q: unparsable but %s", line, d.Effect)
	}
	for _, c := range cmds {
		if len(c.Args) == 0 {
			t.Fatalf("%q: a command without words", line)
		}
	}
	type result struct {
		progs [][]string
		ok    bool
	}
	done := make(chan result, 1)
	go func() {
		p, ok := ran(line, 0)
		done <- result{p, ok}
	}()
	var res result
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%q: the interpreter hangs", line)
	}
	progs, ok := res.progs, res.ok
	if !ok {
		return
	}
	for _, p := range progs {
		if len(p) == 0 {
			continue
		}
		name := path.Base(p[0])
		if name == "rm" && d.Effect != permission.Deny && d.Effect != permission.Ask {
			t.Fatalf("%q runs %q but is %s (%s)", line, p, d.Effect, d.Reason)
		}
		if d.Effect == permission.Allow && name != "git" && name != "echo" {
			t.Fatalf("%q allowed (%s) but runs %q", line, d.Reason, p)
		}
	}
}

func fuzzRules(f *testing.F) *permission.Rules {
	return mustRules(f, map[permission.Effect][]string{
		permission.Allow: {"execute(git status)", "execute(echo)"},
		permission.Deny:  {"execute(rm)"},
	})
}

// FuzzDecide feeds arbitrary lines to the rules (see checkLine).
func FuzzDecide(f *testing.F) {
	for _, s := range []string{"git status; rm -rf x", "echo $(rm x)", "a 'b; c' && d", `x "y\"z"`, "FOO=1 rm", "a 2>&1 | b &> c", "# c\nrm",
		"f() { rm x; }; f", "trap 'rm x' EXIT", "eval 'r''m' x", "alias r=rm\nr x", "x=rm; $x y", "echo ${a:-$(rm x)}", "cat <<EOF\n$(rm x)\nEOF",
		"if ! rm x; then :; fi", "case a in *) rm x;; esac", "sh -c 'eval \"rm x\"'", "command rm x", "exec rm x", "time rm x"} {
		f.Add(s)
	}
	rs := fuzzRules(f)
	f.Fuzz(func(t *testing.T, line string) { checkLine(t, rs, line) })
}

// FuzzDecideAroundRm puts text before and after "rm x": wherever the
// shell would run it, the line is denied or asked about, never allowed.
func FuzzDecideAroundRm(f *testing.F) {
	for _, s := range [][2]string{
		{"", ""}, {"! ", ""}, {"if ", "; then :; fi"}, {"if true; then ", "; fi"}, {"while ", "; do break; done"},
		{"until ", "; do :; done"}, {"for i in 1; do ", "; done"}, {"case a in a) ", ";; esac"}, {"{ ", "; }"}, {"(", ")"},
		{"f() { ", "; }; f"}, {"function f { ", "; }; f"}, {"trap '", "' EXIT"}, {"eval '", "'"}, {"eval ", ""}, {"sh -c '", "'"},
		{"bash -c \"", "\""}, {"echo $(", ")"}, {"echo `", "`"}, {"x=$(", ")"}, {"cat <(", ")"}, {"echo $(( $(", ") ))"},
		{"cat <<EOF\n$(", ")\nEOF"}, {"echo '", "'"}, {"# ", ""}, {"git status && ", ""}, {"git status || ", ""}, {"git status | ", ""},
		{"time ", ""}, {"command ", ""}, {"builtin command ", ""}, {"exec ", ""}, {"coproc ", ""}, {"echo x > $(", ")"},
		{"[[ $(", ") ]]"}, {"declare y=$(", ")"}, {"select i in a; do ", "; break; done"}, {"alias r='", "'; r"},
		{"shopt -s expand_aliases\nalias r='", "'\nr"}, {"FOO=1 ", ""}, {"\\", ""}, {"r''", ""}, {"\"", "\""},
		{"man -P '", "' ls"}, {"man --pager='", "' ls"}, {"man -P'", "' ls"}, {"less '+!", "' f"}, {"vim -c '!", "' f"},
		{"vim '+!", "' f"}, {"echo 'a[$(", ")]'; echo $((_))"}, {"x='a[$(", ")]'; echo $((x))"}, {"x='$(", ")'; echo ${x@P}"},
	} {
		f.Add(s[0], s[1])
	}
	rs := fuzzRules(f)
	f.Fuzz(func(t *testing.T, pre, post string) { checkLine(t, rs, pre+"rm x"+post) })
}

// TestOracle checks the fuzz tests' oracle: it sees what these lines run.
func TestOracle(t *testing.T) {
	for _, line := range []string{"if rm x; then :; fi", "trap 'rm x' EXIT", "f(){ rm x; }; f", "shopt -s expand_aliases\nalias r='rm x'\nr",
		"sh -c 'rm x'", "eval 'rm x'", "echo $(rm x)", "cat <<EOF\n$(rm x)\nEOF", "command rm x",
		"man -P 'rm x' ls", "man --pager='rm x' ls", "less '+!rm x' f", "vim -c '!rm x' f", "vim '+!rm x' f"} {
		progs, ok := ran(line, 0)
		found := false
		for _, p := range progs {
			found = found || p[0] == "rm"
		}
		if !ok || !found {
			t.Errorf("the oracle misses rm in %q: %q", line, progs)
		}
	}
}
