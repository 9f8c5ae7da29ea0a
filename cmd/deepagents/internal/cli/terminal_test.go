package cli

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// inPty runs the binary on a pseudo-terminal (script(1) makes it) that
// answers nothing, and returns what the binary wrote to it and how long
// it took.
func (w *world) inPty(args ...string) (string, time.Duration) {
	w.t.Helper()
	if _, err := exec.LookPath("script"); err != nil {
		if os.Getenv("CI") != "" {
			w.t.Fatal("script (util-linux) is missing in CI")
		}
		w.t.Skip("needs script (util-linux)")
	}
	quoted := make([]string, 0, len(args)+1)
	for _, a := range append([]string{binary(w.t)}, args...) {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	cmd := exec.Command("script", "-qec", strings.Join(quoted, " "), "/dev/null")
	// A terminal that termenv would ask its colours (not screen or tmux,
	// which it leaves alone).
	cmd.Env = append(w.env(), "TERM=xterm-256color")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		w.t.Fatalf("%v: %v: %q", args, err, out.String())
	}
	return out.String(), time.Since(start)
}

// No command but the interactive session asks the terminal anything: on a
// terminal that never answers, --version and run neither write a query
// (the background colour's OSC 11, the cursor position's CSI 6n) nor
// wait for an answer.
func TestNoTerminalQueries(t *testing.T) {
	w := newWorld(t)
	s := w.script(`{"turns":[{"content":"Done."}]}`)
	for _, args := range [][]string{
		{"--version"},
		{"run", "--model", "replay:" + s, "--dir", w.dir, "--db", w.db, "go"},
		{"threads", "--db", w.db},
	} {
		out, took := w.inPty(args...)
		if strings.Contains(out, "\x1b]11;?") || strings.Contains(out, "\x1b[6n") {
			t.Errorf("%v queried the terminal: %q", args, out)
		}
		if took > 2*time.Second {
			t.Errorf("%v took %s on a terminal that does not answer", args, took)
		}
		if args[0] == "--version" && !strings.Contains(out, "deepagents version ") {
			t.Errorf("--version wrote %q", out)
		}
	}
}
