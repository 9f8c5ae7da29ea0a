//go:build unix

package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/backendtest"
	"github.com/deepagents-go/deepagents/backend/sandbox"
)

func newShell(t *testing.T, opts sandbox.LocalShellOptions) *sandbox.LocalShell {
	t.Helper()
	s, err := sandbox.NewLocalShell(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLocalShellConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend {
		return newShell(t, sandbox.LocalShellOptions{})
	})
}

func TestLocalShellWorkingDirAndEnv(t *testing.T) {
	t.Setenv("DEEPAGENTS_TEST_SECRET", "s3cret")
	ctx := context.Background()
	s := newShell(t, sandbox.LocalShellOptions{Env: []string{"EXTRA=yes"}})
	if err := s.Write(ctx, "/sub/f.txt", "content"); err != nil {
		t.Fatal(err)
	}
	r, err := s.Execute(ctx, "cat sub/f.txt; pwd; env", 0)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.EvalSymlinks(s.Root())
	if !strings.HasPrefix(r.Output, "content") || !strings.Contains(r.Output, root) {
		t.Errorf("output %q: want the file's content and the root %s as working directory", r.Output, root)
	}
	if strings.Contains(r.Output, "s3cret") {
		t.Error("the host environment leaked into the command")
	}
	if !strings.Contains(r.Output, "EXTRA=yes") || !strings.Contains(r.Output, "PATH="+sandbox.DefaultShellPath) {
		t.Errorf("environment: %q", r.Output)
	}
	inherit := newShell(t, sandbox.LocalShellOptions{InheritEnv: true})
	r, err = inherit.Execute(ctx, "echo $DEEPAGENTS_TEST_SECRET", 0)
	if err != nil || r.Output != "s3cret\n" {
		t.Errorf("InheritEnv: %q, %v", r.Output, err)
	}
}

func TestLocalShellOutputCap(t *testing.T) {
	s := newShell(t, sandbox.LocalShellOptions{MaxOutputBytes: 1000})
	r, err := s.Execute(context.Background(), "i=0; while [ $i -lt 500 ]; do echo 0123456789; i=$((i+1)); done; echo done >&2", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Output) != 1000 || !r.Truncated || r.ExitCode != 0 {
		t.Errorf("len %d, truncated %v, exit %d", len(r.Output), r.Truncated, r.ExitCode)
	}
	// A cut inside a multi-byte character does not leave half of it.
	s = newShell(t, sandbox.LocalShellOptions{MaxOutputBytes: 4})
	r, _ = s.Execute(context.Background(), "printf 'abcé'", 0)
	if r.Output != "abc" || !r.Truncated {
		t.Errorf("cut output %q, truncated %v", r.Output, r.Truncated)
	}
}

func TestLocalShellTimeoutKillsProcessGroup(t *testing.T) {
	s := newShell(t, sandbox.LocalShellOptions{Timeout: 500 * time.Millisecond})
	marker := filepath.Join(s.Root(), "marker")
	// A grandchild that would create the marker after the timeout.
	r, err := s.Execute(context.Background(), "(sleep 1; touch marker) & sleep 30", 0)
	if err == nil || r.ExitCode != -1 {
		t.Fatalf("timed-out command: %+v, %v", r, err)
	}
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Error("a grandchild survived the timeout")
	}
}

func TestLocalShellBackgroundOutputDetached(t *testing.T) {
	s := newShell(t, sandbox.LocalShellOptions{})
	start := time.Now()
	r, err := s.Execute(context.Background(), "sleep 20 & echo started", 0)
	if err != nil || r.ExitCode != 0 || r.Output != "started\n" {
		t.Fatalf("%+v, %v", r, err)
	}
	if time.Since(start) > 15*time.Second {
		t.Error("waited for a background process")
	}
}
