package mcp

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, killed with it, and
// kills it if this process dies first.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills cmd's process group: the server and what it started.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
