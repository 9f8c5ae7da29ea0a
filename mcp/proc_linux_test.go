package mcp

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/deepagents-go/deepagents/internal/asuser"
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
		client = asuser.Command(t, asuser.OtherUID, []string{clientEnv + "=" + marker}, "-test.run=^$")
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
