//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// ownGroup puts the command in a process group of its own and makes
// cancelling it kill the whole group, so that a timeout also stops the
// program that GNU time (or node) started.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
