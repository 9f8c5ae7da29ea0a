package backend_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/internal/procinfo"
)

// hiddenUserEnv marks the run of a test in a process of its own, which may
// hide its environment without hiding the other tests'.
const hiddenUserEnv = "DEEPAGENTS_BACKEND_HIDDEN_USER"

// otherUID is the user root runs hidden-environment tests as: not 65534,
// which an unmapped user namespace shows for every user.
const otherUID = 12345

// TestLocalShellHiddenKeepsUser runs a command without sandbox from a
// process that is not root and hid its environment (procinfo.HideEnviron,
// as the CLI does): the command must see its own user, mapped in its user
// namespace (not the overflow user 65534, which makes ssh and git push
// fail), exit with its own status, and leave no process behind. As root
// the test runs itself as user 12345.
func TestLocalShellHiddenKeepsUser(t *testing.T) {
	if os.Getenv(hiddenUserEnv) == "" {
		runHidden(t, "TestLocalShellHiddenKeepsUser")
		return
	}
	if err := procinfo.HideEnviron(); err != nil {
		t.Fatal(err)
	}
	if probe := exec.Command("/bin/true"); !procinfo.UnshareCommand(probe) {
		t.Skip("util-linux's unshare cannot make user and PID namespaces here")
	}
	s, err := backend.NewLocalShell(t.TempDir(), backend.LocalShellOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uid := strconv.Itoa(os.Getuid())
	res, err := s.Execute(context.Background(), "id -u; cat /proc/self/uid_map", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(res.Output), "\n")
	if len(lines) != 2 || lines[0] != uid || strings.Join(strings.Fields(lines[1]), " ") != uid+" "+uid+" 1" {
		t.Fatalf("as uid %s the command saw (uid, then uid_map):\n%s", uid, res.Output)
	}
	if res, err := s.Execute(context.Background(), "exit 3", 10*time.Second); err != nil || res.ExitCode != 3 {
		t.Fatalf("exit 3: %+v, %v", res, err)
	}
	// What the command left in the background dies with it.
	if _, err := s.Execute(context.Background(), "setsid sleep 300 & sleep 0.2", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, _ := exec.Command("pgrep", "-u", uid, "-f", "^sleep 300$").Output()
		if len(strings.TrimSpace(string(out))) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command's background process outlived it: %s", out)
		}
		time.Sleep(50 * time.Millisecond)
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
	dir, err := os.MkdirTemp("", "backend-hidden-")
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
		exe = filepath.Join(dir, "backend.test")
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
