package mcp

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func init() {
	hideSelf = func() { unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
}

// TestStdioServerTreeDiesWithClient kills, with SIGKILL, a process that
// started a stdio server which started a child: the child must die too,
// though nothing could tear it down.
//
// "hidden" is a client that hid its environment first (HideEnviron in the
// CLI), which as another user than root changes how the server's
// namespaces are made (through unshare); as root, "hidden-user" is that
// client run as user 12345.
func TestStdioServerTreeDiesWithClient(t *testing.T) {
	t.Run("plain", func(t *testing.T) { serverTreeDies(t, false, false) })
	t.Run("hidden", func(t *testing.T) { serverTreeDies(t, true, false) })
	if os.Geteuid() == 0 {
		t.Run("hidden-user", func(t *testing.T) { serverTreeDies(t, true, true) })
	}
}

func serverTreeDies(t *testing.T, hide, asUser bool) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "child.pid")
	client := exec.Command(exe, "-test.run=^$")
	client.Env = append(os.Environ(), clientEnv+"="+marker)
	if asUser {
		client = clientAsUser(t, exe, marker)
	}
	if hide {
		client.Env = append(client.Env, clientEnv+"_HIDE=1")
	}
	out, err := client.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		client.Process.Kill()
		client.Wait()
		t.Fatalf("client: %q", line)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(processesWith(childEnv+"="+marker)) == 0 {
		if time.Now().After(deadline) {
			client.Process.Kill()
			client.Wait()
			t.Fatal("the server's child never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	client.Process.Signal(syscall.SIGKILL)
	client.Wait()
	waitNone(t, 5*time.Second, childEnv+"="+marker)
	if strings.Contains(line, "error") {
		t.Error(line)
	}
}

// clientAsUser is a client run as user otherUID, from a copy of exe that
// user can run (or the test skips where setpriv is missing).
func clientAsUser(t *testing.T, exe, marker string) *exec.Cmd {
	t.Helper()
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv is missing to run the client as another user")
	}
	// Not t.TempDir: its parent is private to root.
	dir, err := os.MkdirTemp("", "mcp-client-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	copy := filepath.Join(dir, "mcp.test")
	if err := os.WriteFile(copy, b, 0o755); err != nil {
		t.Fatal(err)
	}
	id := strconv.Itoa(otherUID)
	client := exec.Command(setpriv, "--reuid="+id, "--regid="+id, "--clear-groups", copy, "-test.run=^$")
	client.Dir = dir
	client.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir, clientEnv + "=" + marker}
	return client
}
