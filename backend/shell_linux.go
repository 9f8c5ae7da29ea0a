package backend

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/deepagents-go/deepagents/internal/procinfo"
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
		if procinfo.Dumpable() {
			a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
			a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		}
		// Else this process hid its memory and environment
		// (procinfo.HideEnviron) and cannot write its child's uid_map (see
		// procinfo.Dumpable): start tries unshareAttr first. Here, its last
		// resort, the child runs unmapped: the kernel still checks its files
		// as this user, but it sees its uid (and every other user's) as
		// 65534, the overflow ID.
	}
	return a
}

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
