package sandbox_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/backendtest"
	"github.com/deepagents-go/deepagents/backend/sandbox"
)

// sandboxShell returns a LocalShell whose commands run in bubblewrap. It
// skips the test where bubblewrap is missing, except in CI, which installs
// it (.ci/run): there a missing sandbox fails.
func sandboxShell(t *testing.T, root string, bw sandbox.Bubblewrap) *sandbox.LocalShell {
	t.Helper()
	s, err := sandbox.NewLocalShell(root, sandbox.LocalShellOptions{Sandbox: &bw, Timeout: 20 * time.Second})
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("no sandbox here: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() }) // the commands' cgroups go before the test binary exits
	return s
}

func TestSandboxConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend {
		return sandboxShell(t, t.TempDir(), sandbox.Bubblewrap{})
	})
}

func run(t *testing.T, s *sandbox.LocalShell, command string) backend.ExecResult {
	t.Helper()
	r, err := s.Execute(context.Background(), command, 0)
	if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	return r
}

// TestSandboxEscapes tries the ways out of the sandbox a hostile command
// would: each must fail and leave the host as it was.
func TestSandboxEscapes(t *testing.T) {
	const secret = "deepagents-sandbox-secret-value"
	t.Setenv("DEEPAGENTS_TEST_API_KEY", secret)
	ws := t.TempDir()
	s := sandboxShell(t, ws, sandbox.Bubblewrap{})

	t.Run("parent environment", func(t *testing.T) {
		r := run(t, s, `env; for f in /proc/[0-9]*/environ; do cat "$f"; echo; done; echo "ppid=$PPID"`)
		if strings.Contains(r.Output, secret) {
			t.Errorf("the host's environment is visible: %q", r.Output)
		}
		if !strings.Contains(r.Output, "HOME="+sandbox.SandboxHome) || !strings.Contains(r.Output, "PATH="+sandbox.SandboxPath) {
			t.Errorf("environment inside: %q", r.Output)
		}
	})

	t.Run("other processes", func(t *testing.T) {
		r := run(t, s, `ls /proc | grep -c '^[0-9]'`)
		if n, err := strconv.Atoi(strings.TrimSpace(r.Output)); err != nil || n > 4 {
			t.Errorf("processes visible in the sandbox: %q", r.Output)
		}
	})

	t.Run("writing outside the workspace", func(t *testing.T) {
		outside := t.TempDir()
		target := filepath.Join(outside, "escaped")
		for _, cmd := range []string{
			"echo x > " + target,
			"echo x > " + filepath.Join(ws, "..", filepath.Base(outside), "escaped"),
			"touch /usr/escaped",
			"echo x >> /etc/hosts",
			"ln -s " + outside + " link && echo x > link/escaped",
		} {
			s.Execute(context.Background(), cmd, 0)
		}
		if _, err := os.Stat(target); err == nil {
			t.Error("a command wrote outside the workspace")
		}
		if _, err := os.Stat("/usr/escaped"); err == nil {
			os.Remove("/usr/escaped")
			t.Error("a command wrote into /usr")
		}
		// Writes inside the workspace land; /tmp and HOME are the
		// sandbox's own.
		marker := "sandbox-tmp-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		r := run(t, s, "echo in > inside.txt && echo t > /tmp/"+marker+" && echo h > $HOME/h && cat /tmp/"+marker+" $HOME/h")
		if r.ExitCode != 0 || r.Output != "t\nh\n" {
			t.Errorf("private /tmp and HOME: %+v", r)
		}
		if b, err := os.ReadFile(filepath.Join(ws, "inside.txt")); err != nil || string(b) != "in\n" {
			t.Errorf("workspace write: %q %v", b, err)
		}
		if _, err := os.Stat(filepath.Join(os.TempDir(), marker)); err == nil {
			t.Error("the sandbox's /tmp is the host's")
		}
	})

	t.Run("secrets of the system", func(t *testing.T) {
		r := run(t, s, "cat /etc/shadow; echo end")
		if strings.Contains(r.Output, "root:") {
			t.Errorf("/etc/shadow readable: %q", r.Output)
		}
	})

	t.Run("network", func(t *testing.T) {
		var accepted atomic.Int32
		ln := listen(t, &accepted)
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		r := run(t, s, "bash -c 'echo hi > /dev/tcp/127.0.0.1/"+port+"' && echo connected")
		time.Sleep(100 * time.Millisecond)
		if strings.Contains(r.Output, "connected") || accepted.Load() != 0 {
			t.Errorf("reached the host's loopback with the network off: %q", r.Output)
		}
		// The same command reaches it when the operator allows the
		// network: the test above can fail.
		open := sandboxShell(t, t.TempDir(), sandbox.Bubblewrap{Network: true})
		r = run(t, open, "bash -c 'echo hi > /dev/tcp/127.0.0.1/"+port+"' && echo connected")
		if !strings.Contains(r.Output, "connected") {
			t.Errorf("with Network the connection failed: %q", r.Output)
		}
	})

	t.Run("processes outliving the command", func(t *testing.T) {
		for name, escape := range map[string]string{
			"background": "sleep 300 &",
			"setsid":     "setsid sleep 300 &",
			"double":     "sh -c 'setsid sh -c \"sleep 300\" &' &",
		} {
			var b [8]byte
			_, _ = rand.Read(b[:])
			token := "deepagents-test-" + hex.EncodeToString(b[:])
			run(t, s, "export DEEPAGENTS_TEST_TOKEN="+token+"\n"+escape+"\necho started")
			waitGone(t, 2*time.Second, name+": processes", func() []string { return processesWith(t, token) })
		}
	})

	t.Run("toolchains on PATH", func(t *testing.T) {
		if _, err := exec.LookPath("/usr/local/go/bin/go"); err != nil {
			t.Skip("no Go in /usr/local/go here")
		}
		if r := run(t, s, "go version"); r.ExitCode != 0 || !strings.HasPrefix(r.Output, "go version") {
			t.Errorf("go in the sandbox: %+v", r)
		}
	})
}

func listen(t *testing.T, accepted *atomic.Int32) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	return ln
}

func TestSandboxRefusesInheritedEnvironment(t *testing.T) {
	_, err := sandbox.NewLocalShell(t.TempDir(), sandbox.LocalShellOptions{Sandbox: &sandbox.Bubblewrap{}, InheritEnv: true})
	if err == nil {
		t.Error("a sandbox inheriting the environment was accepted")
	}
	// A workspace that is a system folder would make it writable.
	for _, dir := range []string{"/", "/etc", "/usr", "/opt"} {
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		if _, err := sandbox.NewLocalShell(dir, sandbox.LocalShellOptions{Sandbox: &sandbox.Bubblewrap{}}); !errors.Is(err, sandbox.ErrNoSandbox) {
			t.Errorf("a sandbox with the workspace %s: %v", dir, err)
		}
	}
	_, err = sandbox.NewLocalShell(t.TempDir(), sandbox.LocalShellOptions{Sandbox: &sandbox.Bubblewrap{Path: "/nonexistent/bwrap"}})
	if err == nil || !strings.Contains(err.Error(), "bubblewrap") {
		t.Errorf("missing bwrap: %v", err)
	}
}

// TestSandboxForkBomb runs a fork bomb in the sandbox: it must hit the
// process cap, end with its command, and leave the machine able to fork.
func TestSandboxForkBomb(t *testing.T) {
	if sandbox.PidsRoot() == "" {
		t.Skip("no pids cgroup can be made here: the process cap is not enforced, and a fork bomb would take the machine")
	}
	s, err := sandbox.NewLocalShell(t.TempDir(), sandbox.LocalShellOptions{
		Sandbox: &sandbox.Bubblewrap{MaxProcesses: 64}, Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var b [8]byte
	_, _ = rand.Read(b[:])
	token := "deepagents-test-" + hex.EncodeToString(b[:])
	start := time.Now()
	r, err := s.Execute(context.Background(), "export DEEPAGENTS_TEST_TOKEN="+token+"\nbomb() { bomb | bomb & }; bomb; sleep 30", 0)
	if err == nil && r.ExitCode == 0 {
		t.Errorf("the fork bomb's command succeeded: %+v", r)
	}
	// The shell says when the cap refuses it a process.
	if !strings.Contains(r.Output, "Cannot fork") {
		t.Errorf("the bomb never hit the process cap: %.300q", r.Output)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the fork bomb ran %v", d)
	}
	if err := exec.Command("true").Run(); err != nil {
		t.Fatalf("the machine cannot fork after the bomb: %v", err)
	}
	waitGone(t, 3*time.Second, "bomb processes", func() []string { return processesWith(t, token) })
	dirs := s.CgroupDirs()
	if len(dirs) == 0 {
		t.Fatal("the shell made no cgroup")
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("cgroup %s left after Close", d)
		}
	}
}

// TestSandboxSweepsStaleCgroups checks that a new sandboxed shell removes
// the empty cgroups a killed process left, and only old ones.
func TestSandboxSweepsStaleCgroups(t *testing.T) {
	root := sandbox.PidsRoot()
	if root == "" {
		t.Skip("no pids cgroup can be made here")
	}
	stale := filepath.Join(root, "deepagents-test-stale-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	fresh := stale + "-fresh"
	for _, d := range []string{stale, fresh} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(d) })
	}
	old := time.Now().Add(-2 * time.Minute)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Skip("cannot age a cgroup here:", err)
	}
	sandboxShell(t, t.TempDir(), sandbox.Bubblewrap{})
	if _, err := os.Stat(stale); err == nil {
		t.Error("a stale cgroup was left")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("a fresh cgroup, perhaps another shell's, was removed")
	}
}
