package cli

import (
	"bytes"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The help reads as text: no control bytes (pflag aligns its columns with
// a NUL byte, which an optional value's default must not hold), and
// --resume shows as taking an ID.
func TestHelpReadsCleanly(t *testing.T) {
	w := newWorld(t)
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {}} {
		code, stdout, stderr := w.run(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if i := strings.IndexFunc(stdout, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f }); i >= 0 {
			t.Errorf("%v: a control byte %q in the help, at %q", args, stdout[i], stdout[max(0, i-40):min(len(stdout), i+20)])
		}
	}
	_, stdout, _ := w.run("--help")
	if !regexp.MustCompile(`(?m)^  -r, --resume ID +continue thread ID; --resume alone picks one of the recent threads$`).MatchString(stdout) ||
		!regexp.MustCompile(`(?m)^  -p, --print +run the task`).MatchString(stdout) || strings.Contains(stdout, "[=") {
		t.Errorf("--help shows --resume or --print badly:\n%s", stdout)
	}
}

// resumeArgs makes --resume's id its value, and --resume alone the pick,
// leaving other flags' values and what follows "--" alone.
func TestResumeArgs(t *testing.T) {
	fs := newRoot(Env{}).Flags()
	pick := "--resume=" + pickSentinel
	for _, c := range []struct{ in, want []string }{
		{[]string{"--resume", "T"}, []string{"--resume=T"}},
		{[]string{"-r", "T", "-p", "task"}, []string{"--resume=T", "-p", "task"}},
		{[]string{"-p", "--resume", "T", "task"}, []string{"-p", "--resume=T", "task"}},
		{[]string{"-pr", "T", "task"}, []string{"-p", "--resume=T", "task"}},
		{[]string{"--resume"}, []string{pick}},
		{[]string{"-r", "--model", "m"}, []string{pick, "--model", "m"}},
		{[]string{"-p", "task", "--resume"}, []string{"-p", "task", pick}},
		{[]string{"--resume", "-"}, []string{pick, "-"}},
		{[]string{"--resume=T", "-r=U", "-rV"}, []string{"--resume=T", "-r=U", "-rV"}},
		{[]string{"--dir", "--resume", "-r"}, []string{"--dir", "--resume", pick}},
		{[]string{"-p", "--", "--resume", "x"}, []string{"-p", "--", "--resume", "x"}},
	} {
		if got := resumeArgs(fs, slices.Clone(c.in)); !slices.Equal(got, c.want) {
			t.Errorf("resumeArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// -p is a switch: the prompt is the arguments, and a flag after -p is a
// flag. --resume takes the id after it, wherever the prompt is.
func TestPrintThenFlags(t *testing.T) {
	w := newWorld(t)
	s := w.script(`{"turns":[{"content":"Printed.","expect":{"last_message_contains":["a printed task"]}}]}`)
	code, stdout, stderr := w.run("-p", "--model", "replay:"+s, "--dir", w.dir, "--db", w.db, "--output", "jsonl", "a printed", "task")
	if code != 0 {
		t.Fatalf("-p --model: exit %d: %s %s", code, stderr, stdout)
	}
	id := runEnd(t, stdout).ThreadID
	s2 := w.script(`{"turns":[{"content":"Again.","expect":{"messages_contain":["a printed task"],"last_message_contains":["once more"]}}]}`)
	for _, args := range [][]string{
		{"-p", "--resume", id, "once more"},
		{"-pr", id, "once more"},
		{"--resume", id, "-p", "once more"},
	} {
		code, stdout, stderr := w.run(append(args, "--model", "replay:"+s2, "--dir", w.dir, "--db", w.db, "--output", "jsonl")...)
		if code != 0 || runEnd(t, stdout).ThreadID != id {
			t.Errorf("%q: exit %d: %s %s", args, code, stderr, stdout)
		}
	}
	// Without -p, arguments are no prompt; the error says how to give one,
	// or which command was meant.
	for args, want := range map[string]string{
		"a task": `deepagents: unknown command "a task" (a task is run with -p: deepagents -p "a task")` + "\n",
		"thread": `deepagents: unknown command "thread"; did you mean threads?` + "\n",
	} {
		if code, _, stderr := w.run(args); code != ExitUsage || stderr != want {
			t.Errorf("%q without -p: exit %d: %q, want %q", args, code, stderr, want)
		}
	}
}

// A prompt given as arguments is followed by what is piped to standard
// input (echo data | deepagents -p explain), up to 1 MiB.
func TestPipedInputFollowsThePrompt(t *testing.T) {
	w := newWorld(t)
	s := w.script(`{"turns":[{"content":"Explained.","expect":{"last_message_contains":["explain this\n\nthe piped data\n"]}}]}`)
	for _, args := range [][]string{{"-p", "explain", "this"}, {"run", "explain this"}} {
		code, stdout, stderr := w.withStdin(strings.NewReader("the piped data\n"), append(args, "--model", "replay:"+s, "--dir", w.dir, "--db", w.db)...)
		if code != 0 || stdout != "Explained.\n" {
			t.Errorf("%q: exit %d: %q %s", args, code, stdout, stderr)
		}
	}
	big := strings.Repeat("x", maxPromptBytes+1)
	code, stdout, stderr := w.withStdin(strings.NewReader(big), "-p", "explain", "--model", "replay:"+s, "--dir", w.dir, "--db", w.db)
	if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "standard input is over 1048576 bytes") {
		t.Errorf("over 1 MiB: exit %d: %q %s", code, stdout, stderr)
	}
}

// A standard input that stays open without data holds the prompt back for
// stdinWait at most.
func TestSilentStdinIsNotWaitedFor(t *testing.T) {
	old := stdinWait
	stdinWait = 50 * time.Millisecond
	t.Cleanup(func() { stdinWait = old })
	r, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	var errb bytes.Buffer
	p, err := promptOf(t.Context(), Env{Stdin: r, Stderr: &errb}, []string{"explain"})
	if err != nil || p != "explain" || !strings.Contains(errb.String(), "nothing came on standard input within 50ms") {
		t.Errorf("promptOf = %q, %v; stderr %q", p, err, errb.String())
	}
	// Data that starts within the wait is read to its end, however long.
	r2, pw2 := io.Pipe()
	go func() {
		pw2.Write([]byte("first "))
		time.Sleep(200 * time.Millisecond)
		pw2.Write([]byte("and last"))
		pw2.Close()
	}()
	if p, err := promptOf(t.Context(), Env{Stdin: r2, Stderr: io.Discard}, []string{"explain"}); err != nil || p != "explain\n\nfirst and last" {
		t.Errorf("slow data: %q, %v", p, err)
	}
}

// Without a terminal, --resume needs the id: a usage error, not the help.
func TestResumeWithoutTerminalNeedsID(t *testing.T) {
	w := newWorld(t)
	for _, args := range [][]string{{"--resume"}, {"-r", "--db", w.db}, {"--resume", "-p", "task", "--db", w.db}} {
		code, stdout, stderr := w.withStdin(nil, args...) // stdin is /dev/null
		if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "--resume without a thread id needs a terminal to pick one on; give the id") {
			t.Errorf("%q: exit %d: %q %q", args, code, stdout, stderr)
		}
	}
	// With nothing asked, the help.
	if code, stdout, _ := w.withStdin(nil); code != 0 || !strings.Contains(stdout, "Available Commands") {
		t.Errorf("no arguments: exit %d: %q", code, stdout)
	}
}
