package sandbox_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/sandbox"
)

// parallel runs the commands at once on s and returns their results.
func parallel(t *testing.T, s *sandbox.LocalShell, cmds ...string) []backend.ExecResult {
	t.Helper()
	res := make([]backend.ExecResult, len(cmds))
	var wg sync.WaitGroup
	for i, c := range cmds {
		wg.Go(func() {
			r, err := s.Execute(context.Background(), c, 0)
			if err != nil {
				t.Errorf("%s: %v", c, err)
			}
			res[i] = r
		})
	}
	wg.Wait()
	return res
}

// TestSandboxProcessCapIsPerShell runs commands in parallel that together,
// not one by one, go beyond the shell's process cap: some of their forks
// must fail.
func TestSandboxProcessCapIsPerShell(t *testing.T) {
	if sandbox.PidsRoot() == "" {
		t.Skip("no pids cgroup can be made here")
	}
	s := sandboxShell(t, t.TempDir(), sandbox.Bubblewrap{MaxProcesses: 40})
	// Each command holds about 25 processes (20 sleeps, its shell and
	// bwrap's), well under the cap alone; three together are not.
	cmd := "n=0; for i in $(seq 20); do sleep 3 & n=$((n+1)); done 2>&1; wait; echo finished"
	res := parallel(t, s, cmd, cmd, cmd)
	failed := 0
	for _, r := range res {
		if strings.Contains(r.Output, "fork") {
			failed++
		}
	}
	if failed == 0 {
		t.Errorf("three commands of 25 processes each all ran under a cap of 40: %+v", res)
	}
}

// TestSandboxMemoryCap allocates beyond MaxMemory, in a process and in the
// sandbox's tmpfs: both must fail, and the shell and the host go on.
func TestSandboxMemoryCap(t *testing.T) {
	if sandbox.MemoryRoot() == "" {
		t.Skip("no memory cgroup can be made here")
	}
	s := sandboxShell(t, t.TempDir(), sandbox.Bubblewrap{MaxMemory: 64 << 20, TmpfsSize: 512 << 20})
	for _, cmd := range []string{
		// tail keeps a line (here, all its input) in memory.
		"head -c 300M /dev/zero | tail > /dev/null; echo status=$?",
		// tmpfs pages are charged to the cgroup too.
		"head -c 300M /dev/zero > /tmp/big; echo status=$?",
	} {
		r, err := s.Execute(context.Background(), cmd, 0)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(r.Output, "status=0") {
			t.Errorf("%s: allocated 300 MB under a cap of 64 MB: %q", cmd, r.Output)
		}
	}
	// Parallel commands share the cap: two of 40 MB each do not fit.
	res := parallel(t, s, "head -c 40M /dev/zero > /tmp/a && sleep 2 && echo kept", "head -c 40M /dev/zero > /tmp/a && sleep 2 && echo kept")
	if strings.Contains(res[0].Output, "kept") && strings.Contains(res[1].Output, "kept") {
		t.Errorf("two commands held 80 MB under a cap of 64 MB: %+v", res)
	}
	if r := run(t, s, "echo alive"); r.Output != "alive\n" {
		t.Errorf("the shell after its memory cap: %+v", r)
	}
	if err := exec.Command("true").Run(); err != nil {
		t.Errorf("the host after the sandbox's memory cap: %v", err)
	}
}

// TestSandboxTmpfsSize fills each RAM-backed mount of the sandbox: each
// must be full at TmpfsSize. It holds without cgroups too.
func TestSandboxTmpfsSize(t *testing.T) {
	s := sandboxShell(t, t.TempDir(), sandbox.Bubblewrap{TmpfsSize: 8 << 20})
	for _, dir := range []string{"/tmp", "$HOME", "/dev/shm"} {
		r := run(t, s, "head -c 20M /dev/zero > "+dir+"/f; echo status=$?; wc -c < "+dir+"/f")
		if !strings.Contains(r.Output, "No space left on device") || !strings.Contains(r.Output, "status=1") {
			t.Errorf("%s took 20 MB with a size of 8 MB: %q", dir, r.Output)
		}
	}
	if r := run(t, s, "touch /dev/x 2>&1; echo status=$?"); strings.Contains(r.Output, "status=0") {
		t.Errorf("/dev takes files: %q", r.Output)
	}
}

// TestSandboxMaxCommands runs more commands at once than MaxCommands: the
// others wait for a slot.
func TestSandboxMaxCommands(t *testing.T) {
	s := sandboxShell(t, t.TempDir(), sandbox.Bubblewrap{MaxCommands: 2})
	start := time.Now()
	parallel(t, s, "sleep 1", "sleep 1", "sleep 1", "sleep 1")
	if d := time.Since(start); d < 2*time.Second {
		t.Errorf("four commands of a second ran in %v with two slots", d)
	}
	// A command waiting for a slot still ends with its context.
	done := make(chan struct{})
	go func() {
		parallel(t, s, "sleep 2", "sleep 2")
		close(done)
	}()
	time.Sleep(300 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := s.Execute(ctx, "echo late", 0); err == nil {
		t.Error("a command waiting for a slot ignored its context")
	}
	<-done
}

// TestSandboxWarnsOnceWithoutCgroup checks, where no cgroup can be made
// (a normal user without delegation: .ci/unprivileged runs it so), that
// the shells say it once, with what is not capped and how to get a cgroup.
func TestSandboxWarnsOnceWithoutCgroup(t *testing.T) {
	if sandbox.PidsRoot() != "" && sandbox.MemoryRoot() != "" {
		t.Skip("cgroups can be made here")
	}
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	sandbox.ResetCgroupWarning()
	sandboxShell(t, t.TempDir(), sandbox.Bubblewrap{})
	sandboxShell(t, t.TempDir(), sandbox.Bubblewrap{})
	if n := strings.Count(buf.String(), "no cgroup"); n != 1 {
		t.Errorf("%d warnings: %s", n, buf.String())
	}
	if !strings.Contains(buf.String(), "systemd-run --user --scope -p Delegate=yes") || !strings.Contains(buf.String(), "memory") {
		t.Errorf("the warning does not say what is not capped and how to get a cgroup: %s", buf.String())
	}
}

// TestSandboxWarnsOfForeignWorkspace: as root, a workspace of another
// user is one the sandbox's commands cannot change; the shell says so.
func TestSandboxWarnsOfForeignWorkspace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can give a folder to another user")
	}
	ws := t.TempDir()
	if err := os.Chown(ws, 4321, 4321); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	s := sandboxShell(t, ws, sandbox.Bubblewrap{})
	if !strings.Contains(buf.String(), "belongs to another user") || !strings.Contains(buf.String(), "uid=4321") {
		t.Errorf("no warning: %q", buf.String())
	}
	if r := run(t, s, "touch x 2>&1"); !strings.Contains(r.Output, "Permission denied") {
		t.Errorf("the warning is wrong: %q", r.Output)
	}
}
