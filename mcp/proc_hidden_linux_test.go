package mcp

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/internal/asuser"
	"github.com/deepagents-go/deepagents/internal/procinfo"
)

// hiddenUserEnv marks the run of a test in a process of its own, which may
// hide its environment without hiding the other tests'.
const hiddenUserEnv = "DEEPAGENTS_MCP_HIDDEN_USER"

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
		asuser.RunTest(t, asuser.OtherUID, "TestStdioServerHiddenKeepsUser", hiddenUserEnv+"=1")
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
