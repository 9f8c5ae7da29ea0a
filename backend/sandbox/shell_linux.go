package sandbox

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/deepagents-go/deepagents/internal/procinfo"
)

// containedAttr runs the shell as the first process of a new PID namespace
// (procinfo.PIDNamespaceAttr): nothing the command starts outlives it.
func containedAttr() *syscall.SysProcAttr { return procinfo.PIDNamespaceAttr() }

// unshareAttr makes cmd start the shell through util-linux's unshare where
// this process is not root and hid its environment: unshare makes the
// namespaces containedAttr would, mapping this user to itself, which this
// process cannot do then (procinfo.UnshareCommand). It returns the
// attributes of unshare itself, in a process group of its own (which the
// shell, its child, shares: killing the group kills both) and killed if
// this process dies, or nil, with cmd unchanged, where this is not needed
// or unshare cannot do it.
func unshareAttr(cmd *exec.Cmd) *syscall.SysProcAttr {
	if os.Geteuid() == 0 || procinfo.Dumpable() || !procinfo.UnshareCommand(cmd) {
		return nil
	}
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
