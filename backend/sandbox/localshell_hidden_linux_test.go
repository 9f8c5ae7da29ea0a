package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/backend/sandbox"
	"github.com/deepagents-go/deepagents/internal/asuser"
	"github.com/deepagents-go/deepagents/internal/procinfo"
)

// hiddenUserEnv marks the run of a test in a process of its own, which may
// hide its environment without hiding the other tests'.
const hiddenUserEnv = "DEEPAGENTS_BACKEND_HIDDEN_USER"

// TestLocalShellHiddenKeepsUser runs a command without sandbox from a
// process that is not root and hid its environment (procinfo.HideEnviron,
// as the CLI does): the command must see its own user, mapped in its user
// namespace (not the overflow user 65534, which makes ssh and git push
// fail), exit with its own status, and leave no process behind. As root
// the test runs itself as user 12345.
func TestLocalShellHiddenKeepsUser(t *testing.T) {
	if os.Getenv(hiddenUserEnv) == "" {
		asuser.RunTest(t, asuser.OtherUID, "TestLocalShellHiddenKeepsUser", hiddenUserEnv+"=1")
		return
	}
	if err := procinfo.HideEnviron(); err != nil {
		t.Fatal(err)
	}
	if probe := exec.Command("/bin/true"); !procinfo.UnshareCommand(probe) {
		t.Skip("util-linux's unshare cannot make user and PID namespaces here")
	}
	s, err := sandbox.NewLocalShell(t.TempDir(), sandbox.LocalShellOptions{})
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
