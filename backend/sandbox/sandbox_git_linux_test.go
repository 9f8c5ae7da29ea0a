package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/sandbox"
)

// gitRepo makes a repository with one commit in a new folder.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is missing in CI")
		}
		t.Skip("needs git")
	}
	ws := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "T"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	writeFiles(t, ws, map[string]string{"main.go": "package main\n"})
	if out, err := exec.Command("sh", "-c", "cd "+ws+" && git add . && git commit -qm first").CombinedOutput(); err != nil {
		t.Fatalf("commit: %v %s", err, out)
	}
	return ws
}

// The files git reads as code or configuration from its folder stay as
// they were whatever a sandboxed command does (issue 42: a commondir that
// points git at a folder of the command's making, whose config runs
// core.fsmonitor at the user's next git status), while git itself still
// works inside: status, log, commit.
func TestSandboxProtectsGitsFiles(t *testing.T) {
	ws := gitRepo(t)
	s := sandboxShell(t, ws, sandbox.Bubblewrap{Protected: backend.ProtectedPaths})
	canary := filepath.Join(t.TempDir(), "canary")
	attacks := []string{
		"mkdir -p .g && ln -s ../.git/objects .g/objects && ln -s ../.git/refs .g/refs && ln -s ../.git/HEAD .g/HEAD && " +
			"cp .git/config .g/config && printf '[core]\\n\\tfsmonitor = \"touch " + canary + "; false\"\\n' >> .g/config && echo ../.g > .git/commondir",
		"printf '[core]\\n\\tfsmonitor = \"touch " + canary + "; false\"\\n' > .git/config.worktree",
		"mkdir -p .git/info && echo '* filter=evil' >> .git/info/attributes",
		"echo /tmp/elsewhere/objects > .git/objects/info/alternates",
		"mkdir -p .git/worktrees/w && echo ../.. > .git/worktrees/w/commondir",
	}
	for _, cmd := range attacks {
		s.Execute(t.Context(), cmd, 0)
	}
	for _, p := range []string{".git/commondir", ".git/config.worktree", ".git/objects/info/alternates", ".git/worktrees/w", ".git/info/attributes"} {
		if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%s was left in the repository", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); strings.Contains(string(b), "fsmonitor") {
		t.Errorf(".git/config changed: %s", b)
	}
	// The user's git on the host runs nothing of the command's.
	if out, err := exec.Command("git", "-C", ws, "status", "--short").CombinedOutput(); err != nil {
		t.Fatalf("git status on the host: %v %s", err, out)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("the host's git status ran the command's fsmonitor")
	}
	// The file cannot be written while a command runs either: the host's
	// git, running meanwhile (an editor's, say), sees nothing of it; and
	// a command that makes .git read-only leaves nothing behind.
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Execute(t.Context(), "echo ../.g > .git/commondir; touch started; while [ ! -e stop ]; do sleep 0.05; done", 0)
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(ws, "started")); err == nil {
			break // the command has tried, and goes on
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
	}
	if b, err := os.ReadFile(filepath.Join(ws, ".git", "commondir")); err == nil && strings.TrimSpace(string(b)) != "." {
		t.Errorf("while a command runs, .git/commondir holds %q", b)
	}
	if out, err := exec.Command("git", "-C", ws, "status", "--short").CombinedOutput(); err != nil {
		t.Errorf("git status on the host while a command runs: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(ws, "stop"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	<-done
	s.Execute(t.Context(), "echo ../.g > .git/commondir; chmod a-w .git", 0)
	os.Chmod(filepath.Join(ws, ".git"), 0o755)
	if b, err := os.ReadFile(filepath.Join(ws, ".git", "commondir")); err == nil && strings.TrimSpace(string(b)) != "." {
		t.Errorf("after chmod a-w .git, .git/commondir holds %q", b)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("the host's git status ran the command's fsmonitor")
	}

	// git works in the sandbox.
	r := run(t, s, "git status --short && echo more >> main.go && git commit -qam second && git log --oneline | wc -l")
	if r.ExitCode != 0 || !strings.HasSuffix(strings.TrimSpace(r.Output), "2") {
		t.Errorf("git in the sandbox: %+v", r)
	}
}
