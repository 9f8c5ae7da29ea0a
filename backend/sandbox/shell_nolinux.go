//go:build unix && !linux

package sandbox

import (
	"os/exec"
	"syscall"
)

// containedAttr is nil: this system has no PID namespaces, so commands run
// in a process group only (see LocalShell).
func containedAttr() *syscall.SysProcAttr { return nil }

// unshareAttr is nil: there is no unshare to start commands through.
func unshareAttr(*exec.Cmd) *syscall.SysProcAttr { return nil }
