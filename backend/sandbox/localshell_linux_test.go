package sandbox_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/backend/sandbox"
)

// processesWith returns the PIDs of live processes whose environment holds
// token.
// waitGone waits up to d for left to return nothing, and fails the test
// with what is left when it does not.
func waitGone(t *testing.T, d time.Duration, what string, left func() []string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		l := left()
		if len(l) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s survived: %v", what, l)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func processesWith(t *testing.T, token string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, d := range dirs {
		environ, err := os.ReadFile(d + "/environ")
		if err != nil {
			continue // gone meanwhile
		}
		if stat, err := os.ReadFile(d + "/stat"); err == nil && bytes.Contains(stat, []byte(") Z ")) {
			continue // a zombie is dead already
		}
		if bytes.Contains(environ, []byte(token)) {
			pids = append(pids, filepath.Base(d))
		}
	}
	return pids
}

// TestLocalShellLeavesNoProcess checks that no process an execute call
// started survives the call, however it tried to get away and however the
// call ended.
func TestLocalShellLeavesNoProcess(t *testing.T) {
	escapes := map[string]string{
		"background": "sleep 300 &",
		"subshell":   "(sleep 300 &)",
		"setsid":     "setsid sleep 300 &",
		"nohup":      "nohup sh -c 'sleep 300' >/dev/null 2>&1 &",
		"double":     "sh -c 'setsid sh -c \"sleep 300\" &' &",
	}
	ends := map[string]struct {
		tail    string
		timeout time.Duration
		cancel  bool
	}{
		"exits":     {tail: "echo started"},
		"times out": {tail: "echo started; sleep 300", timeout: 300 * time.Millisecond},
		"cancelled": {tail: "echo started; sleep 300", cancel: true},
	}
	s := newShell(t, sandbox.LocalShellOptions{})
	for ename, escape := range escapes {
		for end, how := range ends {
			t.Run(ename+"/"+end, func(t *testing.T) {
				var b [8]byte
				_, _ = rand.Read(b[:])
				token := "deepagents-test-" + hex.EncodeToString(b[:])
				// Every process the command starts inherits the token in
				// its environment, so the test can find them.
				cmd := "export DEEPAGENTS_TEST_TOKEN=" + token + "\n" + escape + "\n" + how.tail
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if how.cancel {
					time.AfterFunc(300*time.Millisecond, cancel)
				}
				start := time.Now()
				r, err := s.Execute(ctx, cmd, how.timeout)
				if how.tail == "echo started" && (err != nil || r.ExitCode != 0) {
					t.Fatalf("command: %+v, %v", r, err)
				}
				if time.Since(start) > 30*time.Second {
					t.Fatal("execute waited for a background process")
				}
				// The kernel's kill is delivered at once; allow the
				// scheduler a moment to reap.
				waitGone(t, 2*time.Second, "processes of the command", func() []string { return processesWith(t, token) })
			})
		}
	}
}

func TestLocalShellTimeoutCannotExceedMaximum(t *testing.T) {
	s := newShell(t, sandbox.LocalShellOptions{Timeout: 100 * time.Millisecond, MaxTimeout: 400 * time.Millisecond})
	for _, asked := range []time.Duration{time.Hour, time.Duration(1<<63 - 1)} {
		start := time.Now()
		r, err := s.Execute(context.Background(), "sleep 30", asked)
		if err == nil || r.ExitCode != -1 {
			t.Fatalf("asked %v: %+v, %v", asked, r, err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("asked %v: ran %v, past the maximum", asked, d)
		}
	}
}
