package cli

import (
	"bytes"
	"io"
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

// The interactive session, on a terminal that answers none of its
// queries, draws at once; ctrl+d leaves it.
func TestSessionDoesNotWaitForTheTerminal(t *testing.T) {
	w := newWorld(t)
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("needs script (util-linux)")
	}
	s := w.script(`{"turns":[{"content":"never"}]}`)
	quoted := make([]string, 0, 8)
	for _, a := range []string{binary(t), "--model", "replay:" + s, "--dir", w.dir, "--db", w.db} {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	cmd := exec.Command("script", "-qec", strings.Join(quoted, " "), "/dev/null")
	cmd.Env = append(w.env(), "TERM=xterm-256color")
	keys, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	drawn := make(chan time.Duration, 1)
	var screen bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := out.Read(buf)
			screen.Write(buf[:n])
			if strings.Contains(screen.String(), "/help for commands") {
				drawn <- time.Since(start)
				io.Copy(io.Discard, out)
				return
			}
			if err != nil {
				close(drawn)
				return
			}
		}
	}()
	select {
	case took, ok := <-drawn:
		if !ok {
			t.Fatalf("the session ended without drawing")
		}
		if took > 2*time.Second {
			t.Errorf("the session took %s to draw on a terminal that does not answer", took)
		}
	case <-time.After(10 * time.Second):
		t.Error("the session did not draw within 10 s")
	}
	keys.Write([]byte{4}) // ctrl+d
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Error("ctrl+d did not end the session")
	}
}
