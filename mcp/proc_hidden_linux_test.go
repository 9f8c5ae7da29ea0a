package mcp

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/internal/procinfo"
)

// hiddenUserEnv marks the run of a test in a process of its own, which may
// hide its environment without hiding the other tests'.
const hiddenUserEnv = "DEEPAGENTS_MCP_HIDDEN_USER"

// otherUID is the user root runs hidden-environment tests as: not 65534,
// which an unmapped user namespace shows for every user.
const otherUID = 12345

// TestStdioServerHiddenKeepsUser starts a stdio server's process, as
// Connect does, from a process that is not root and hid its environment
// (procinfo.HideEnviron, as the CLI does): the server must see its own
// user, mapped in its user namespace (not the overflow user 65534, which
// makes ssh and git fail), and be the first process of its PID namespace.
// As root the test runs itself as user 12345.
// TestStdioServerTreeDiesWithClient/hidden checks that its tree dies with
// the client.
func TestStdioServerHiddenKeepsUser(t *testing.T) {
	if os.Getenv(hiddenUserEnv) == "" {
		runHidden(t, "TestStdioServerHiddenKeepsUser")
		return
	}
	if err := procinfo.HideEnviron(); err != nil {
		t.Fatal(err)
	}
	if probe := exec.Command("/bin/true"); !procinfo.UnshareCommand(probe) {
		t.Skip("util-linux's unshare cannot make user and PID namespaces here")
	}
	var out bytes.Buffer
	cmd, err := startContained(func() *exec.Cmd {
		cmd := exec.Command("/bin/sh", "-c", "id -u; cat /proc/self/uid_map; echo $$")
		cmd.Stdout = &out
		return cmd
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	uid := strconv.Itoa(os.Getuid())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || lines[0] != uid || strings.Join(strings.Fields(lines[1]), " ") != uid+" "+uid+" 1" || lines[2] != "1" {
		t.Fatalf("as uid %s the server saw (uid, uid_map, its PID):\n%s", uid, out.String())
	}
}

// runHidden runs the test named run of this binary in a process of its
// own, marked with hiddenUserEnv; as root, as user otherUID (with setpriv,
// or it skips). It fails if that run fails.
func runHidden(t *testing.T, run string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: its parent is private to this user.
	dir, err := os.MkdirTemp("", "mcp-hidden-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	args := []string{"-test.run=^" + run + "$", "-test.v", "-test.count=1"}
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("setpriv is missing to run this test as a user other than root")
		}
		b, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		exe = filepath.Join(dir, "mcp.test")
		if err := os.WriteFile(exe, b, 0o755); err != nil {
			t.Fatal(err)
		}
		id := strconv.Itoa(otherUID)
		cmd = exec.Command(setpriv, append([]string{"--reuid=" + id, "--regid=" + id, "--clear-groups", exe}, args...)...)
	} else {
		cmd = exec.Command(exe, args...)
	}
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir, hiddenUserEnv + "=1"}
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "--- SKIP: "+run) {
		t.Skipf("%s", out)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+run) {
		t.Fatalf("in a process of its own: %v\n%s", err, out)
	}
}
