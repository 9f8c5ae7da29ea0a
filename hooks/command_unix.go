//go:build unix

package hooks

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, which a timeout
// kills whole: a hook's children die with it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
