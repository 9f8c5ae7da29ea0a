package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/sandbox"
)

// TestShellFollowsRedirect runs commands in a context that redirects the
// shell's folder to another (a subagent's workspace), without the sandbox
// and in it: they run there, write there and not in the shell's folder,
// and in the sandbox a path protected in the folder is protected in the
// other folder too.
func TestShellFollowsRedirect(t *testing.T) {
	for _, sandboxed := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "sandbox"}[sandboxed], func(t *testing.T) {
			from, to := t.TempDir(), t.TempDir()
			for _, d := range []string{from, to} {
				if err := os.MkdirAll(filepath.Join(d, "locked"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			var s *sandbox.LocalShell
			if sandboxed {
				s = sandboxShell(t, from, sandbox.Bubblewrap{Protected: []string{filepath.Join(from, "locked")}})
			} else {
				var err error
				if s, err = sandbox.NewLocalShell(from, sandbox.LocalShellOptions{Timeout: 20 * time.Second}); err != nil {
					t.Fatal(err)
				}
			}
			r, err := backend.NewRedirect(from, to)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			ctx := backend.WithRedirect(context.Background(), r)
			res, err := s.Execute(ctx, "pwd; echo hi > made.txt", 0)
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("execute: %+v, %v", res, err)
			}
			if got := strings.TrimSpace(res.Output); got != to {
				t.Errorf("pwd = %q, want %q", got, to)
			}
			if _, err := os.Stat(filepath.Join(to, "made.txt")); err != nil {
				t.Errorf("not written in the other folder: %v", err)
			}
			if _, err := os.Stat(filepath.Join(from, "made.txt")); err == nil {
				t.Error("written in the shell's folder")
			}
			if sandboxed {
				res, _ := s.Execute(ctx, "echo x > locked/f", 0)
				if res.ExitCode == 0 {
					t.Error("a protected path was written in the other folder")
				}
				res, _ = s.Execute(ctx, "echo x > "+filepath.Join(from, "escape.txt"), 0)
				if _, err := os.Stat(filepath.Join(from, "escape.txt")); err == nil || res.ExitCode == 0 {
					t.Errorf("a redirected command wrote the shell's folder: %+v", res)
				}
			}
			// The shell's own calls are as they were.
			res, err = s.Execute(context.Background(), "pwd", 0)
			if err != nil || strings.TrimSpace(res.Output) != from {
				t.Errorf("pwd without the redirect = %q, %v", res.Output, err)
			}
		})
	}
}
