package backend

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
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
		if dumpable() {
			a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
			a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		}
		// Else this process hid its memory and environment
		// (PR_SET_DUMPABLE 0, procinfo.HideEnviron), and its child, not
		// dumpable either until it runs its program, has a /proc entry that
		// belongs to root: this process cannot write its uid_map. The child
		// then runs unmapped: the kernel still checks its files as this user,
		// but it sees its uid (and every other user's) as 65534, the overflow
		// ID.
	}
	return a
}

// dumpable reports whether this process's /proc entries are its own
// (see PR_SET_DUMPABLE in prctl(2)).
func dumpable() bool {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	return err != nil || v != 0
}
