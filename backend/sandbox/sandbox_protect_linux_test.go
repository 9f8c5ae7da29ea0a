package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/sandbox"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkFiles fails the test for each file whose content is not as given
// ("" meaning that it must not exist).
func checkFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, want := range files {
		b, err := os.ReadFile(filepath.Join(root, name))
		switch {
		case want == "" && err == nil:
			t.Errorf("%s exists: %q", name, b)
		case want != "" && string(b) != want:
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
}

// TestSandboxProtected tries every way to change a protected path from a
// writable workspace and HOME: writing, removing, renaming the folder
// above it, and creating it when it is missing.
func TestSandboxProtected(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	orig := map[string]string{
		".git/hooks/pre-commit": "orig hook\n",
		".git/config":           "[core]\n",
		".git/HEAD":             "ref: refs/heads/main\n",
		".envrc":                "orig envrc\n",
		"main.go":               "package main\n",
	}
	writeFiles(t, ws, orig)
	writeFiles(t, home, map[string]string{".bashrc": "orig bashrc\n"})
	s := sandboxShell(t, ws, sandbox.Bubblewrap{
		Home:      home,
		Protected: append(append([]string(nil), backend.ProtectedPaths...), filepath.Join(home, ".bashrc")),
	})
	for _, cmd := range []string{
		"echo evil >> .git/hooks/pre-commit",
		"echo evil > .git/hooks/post-checkout",
		"printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config",
		"rm -rf .git/hooks",
		"mv .git/hooks .git/hooks-old",
		"mv .git .git-old && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit",
		"echo evil >> .envrc",
		"rm -f .envrc; echo evil > .envrc",
		"mv .envrc envrc-old",
		"echo evil >> ~/.bashrc",
		"rm -f ~/.bashrc; echo evil > ~/.bashrc",
	} {
		s.Execute(t.Context(), cmd, 0)
	}
	checkFiles(t, ws, orig)
	checkFiles(t, ws, map[string]string{".git/hooks/post-checkout": "", ".git-old/HEAD": "", "envrc-old": ""})
	checkFiles(t, home, map[string]string{".bashrc": "orig bashrc\n"})

	// The rest of the workspace and of .git stays writable.
	r := run(t, s, "echo more >> main.go && echo ref > .git/ORIG_HEAD && mkdir -p .git/objects/ab && echo ok")
	if r.Output != "ok\n" {
		t.Errorf("writing the workspace: %+v", r)
	}

	// A missing protected path cannot be created while a command runs: an
	// empty read-only folder stands in for it, gone when the command ends.
	r = run(t, s, "mkdir .vscode 2>/dev/null; echo '{}' > .vscode/tasks.json; mkdir -p .git/modules/x/hooks; touch .idea/x; ls -A .vscode .idea; echo done")
	if !strings.Contains(r.Output, "done") || strings.Contains(r.Output, "tasks.json\n") {
		t.Errorf("creating missing protected paths: %q", r.Output)
	}
	checkFiles(t, ws, map[string]string{".vscode/tasks.json": "", ".git/modules/x/hooks": "", ".idea/x": ""})
	for _, p := range []string{".vscode", ".idea", ".git/modules"} {
		if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%s was left on the host", p)
		}
	}
	// Two commands at once: the first to end leaves the placeholder to
	// the other, which still cannot plant anything there.
	done := make(chan backend.ExecResult)
	go func() {
		r, _ := s.Execute(context.Background(), "sleep 1.5; mkdir -p .vscode/x 2>/dev/null; test -e .vscode/x && echo planted || echo blocked", 0)
		done <- r
	}()
	time.Sleep(500 * time.Millisecond)
	run(t, s, "true")
	if r := <-done; !strings.Contains(r.Output, "blocked") {
		t.Errorf("a placeholder removed under a running command: %q", r.Output)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".vscode")); err == nil {
		t.Error(".vscode was left on the host")
	}
}

// TestSandboxProtectedGitLink covers a .git that is a symbolic link, or a
// file naming the git directory: neither is a way around the protection.
func TestSandboxProtectedGitLink(t *testing.T) {
	t.Run("symlink", func(t *testing.T) {
		ws := t.TempDir()
		orig := map[string]string{"repo.git/hooks/pre-commit": "orig\n", "repo.git/config": "[core]\n"}
		writeFiles(t, ws, orig)
		if err := os.Symlink("repo.git", filepath.Join(ws, ".git")); err != nil {
			t.Fatal(err)
		}
		s := sandboxShell(t, ws, sandbox.Bubblewrap{Protected: backend.ProtectedPaths})
		for _, cmd := range []string{
			"echo evil >> .git/hooks/pre-commit",
			"echo evil >> .git/config",
			"mv repo.git repo2.git",
		} {
			s.Execute(t.Context(), cmd, 0)
		}
		checkFiles(t, ws, orig)
		r := run(t, s, "rm .git && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit && echo evil > .git/config && echo replaced")
		if !strings.Contains(r.Output, "replaced") || !strings.Contains(r.Output, "removed .git/hooks") {
			t.Errorf("replacing the .git link: %q", r.Output)
		}
		checkFiles(t, ws, map[string]string{".git/hooks/pre-commit": "", ".git/config": ""})
		checkFiles(t, ws, orig)
	})
	t.Run("gitdir file", func(t *testing.T) {
		ws := t.TempDir()
		orig := map[string]string{
			".git":                           "gitdir: .bare/worktrees/main\n",
			".bare/worktrees/main/HEAD":      "ref: refs/heads/main\n",
			".bare/worktrees/main/commondir": "../..\n",
			".bare/hooks/pre-commit":         "orig\n",
			".bare/config":                   "[core]\n",
		}
		writeFiles(t, ws, orig)
		s := sandboxShell(t, ws, sandbox.Bubblewrap{Protected: backend.ProtectedPaths})
		for _, cmd := range []string{
			"echo 'gitdir: evil' > .git",
			"rm -f .git",
			"echo evil >> .bare/hooks/pre-commit",
			"echo evil >> .bare/config",
			"mv .bare .bare2",
		} {
			s.Execute(t.Context(), cmd, 0)
		}
		checkFiles(t, ws, orig)
	})
}

// TestSandboxProtectedAbove protects a folder holding the workspace: all
// of the workspace is then read-only.
func TestSandboxProtectedAbove(t *testing.T) {
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	s := sandboxShell(t, ws, sandbox.Bubblewrap{Protected: []string{parent}})
	run(t, s, "echo x > new")
	checkFiles(t, ws, map[string]string{"new": ""})
}

// TestSandboxHidden masks files and folders of the workspace, of HOME and
// of the system.
func TestSandboxHidden(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	const secret = "deepagents-hidden-secret"
	writeFiles(t, ws, map[string]string{"keys.env": secret, "secrets/a": secret, "visible": "ok"})
	writeFiles(t, home, map[string]string{".config/tool/token": secret})
	if err := os.Symlink("keys.env", filepath.Join(ws, "link.env")); err != nil {
		t.Fatal(err)
	}
	s := sandboxShell(t, ws, sandbox.Bubblewrap{Home: home, Hidden: []string{
		filepath.Join(ws, "keys.env"), filepath.Join(ws, "secrets"), filepath.Join(home, ".config/tool"),
		filepath.Join(ws, "missing"), "/etc/hostname",
	}})
	r := run(t, s, "cat keys.env link.env secrets/a ~/.config/tool/token /etc/hostname visible 2>&1; ls -A secrets ~/.config/tool; "+
		"rm -f keys.env; mv secrets s2; echo x > secrets/b")
	if strings.Contains(r.Output, secret) {
		t.Errorf("a hidden path was read: %q", r.Output)
	}
	if host, err := os.ReadFile("/etc/hostname"); err == nil && len(strings.TrimSpace(string(host))) > 3 && strings.Contains(r.Output, strings.TrimSpace(string(host))) {
		t.Errorf("/etc/hostname was read: %q", r.Output)
	}
	if !strings.Contains(r.Output, "ok") {
		t.Errorf("a visible file: %q", r.Output)
	}
	checkFiles(t, ws, map[string]string{"keys.env": secret, "secrets/a": secret, "secrets/b": ""})
}

// TestSandboxHiddenGlobs masks what globs of workspace paths match when a
// command starts: files at any depth, a matching folder whole, and the
// file behind a link; more matches than MaxHiddenMatches refuse the
// command.
func TestSandboxHiddenGlobs(t *testing.T) {
	ws := t.TempDir()
	const secret = "deepagents-glob-secret"
	writeFiles(t, ws, map[string]string{
		".env": secret, "app/.env": secret, "app/deep/er/.env": secret, ".config/.env": secret,
		"vault/a": secret, "vault/sub/b": secret, "vaulted": "ok1", "app/main.go": "ok2",
	})
	if err := os.Symlink("app/.env", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	s := sandboxShell(t, ws, sandbox.Bubblewrap{HiddenGlobs: []string{"**/.env", "/vault/**"}})
	r := run(t, s, "cat .env app/.env app/deep/er/.env .config/.env link vault/a vault/sub/b vaulted app/main.go 2>&1; ls -A vault; grep -r glob-secret . 2>&1")
	if strings.Contains(r.Output, secret) {
		t.Errorf("a hidden file was read: %q", r.Output)
	}
	if !strings.Contains(r.Output, "ok1") || !strings.Contains(r.Output, "ok2") {
		t.Errorf("files the globs do not match were hidden: %q", r.Output)
	}
	// A file made after the shell was: masked from the next command on.
	writeFiles(t, ws, map[string]string{"late/.env": secret})
	if r := run(t, s, "cat late/.env"); strings.Contains(r.Output, secret) {
		t.Errorf("a file made later was read: %q", r.Output)
	}
	checkFiles(t, ws, map[string]string{".env": secret, "vault/a": secret})

	many := t.TempDir()
	for i := 0; i <= sandbox.MaxHiddenMatches; i++ {
		writeFiles(t, many, map[string]string{fmt.Sprintf("d%d/.env", i): secret})
	}
	s = sandboxShell(t, many, sandbox.Bubblewrap{HiddenGlobs: []string{"**/.env"}})
	if _, err := s.Execute(t.Context(), "cat d1/.env", 0); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("with more matches than MaxHiddenMatches: %v", err)
	}
}
