package backend

import (
	"os"
	"syscall"
)

// containedAttr runs the shell as the first process of a new PID namespace:
// when it exits, the kernel kills every other process in the namespace,
// wherever they moved (setsid, double forks). Pdeathsig kills the shell, and
// so the namespace, if this process dies first. Without root, a user
// namespace mapping this process's user to itself makes the PID namespace
// possible.
func containedAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{
		Setpgid:    true,
		Cloneflags: syscall.CLONE_NEWPID,
		Pdeathsig:  syscall.SIGKILL,
	}
	if uid, gid := os.Geteuid(), os.Getegid(); uid != 0 {
		a.Cloneflags |= syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	}
	return a
}
