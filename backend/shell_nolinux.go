//go:build unix && !linux

package backend

import "syscall"

// containedAttr is nil: this system has no PID namespaces, so commands run
// in a process group only (see LocalShell).
func containedAttr() *syscall.SysProcAttr { return nil }
