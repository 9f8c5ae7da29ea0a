package procinfo

import (
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Dumpable reports whether this process's /proc entries are its own (see
// PR_SET_DUMPABLE in prctl(2)): false once HideEnviron ran. A child of a
// process that is not dumpable is not dumpable either until it runs its
// program, so its /proc entries, uid_map and gid_map among them, belong to
// root until then: a process that is neither root nor dumpable cannot map
// its user into the user namespace of a child it starts (UidMappings in
// syscall.SysProcAttr fail, or are left out and the child runs as the
// overflow user 65534). UnshareCommand is the way around it.
func Dumpable() bool {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	return err != nil || v != 0
}

// unshareFlags make util-linux's unshare (2.38 or later, for
// --map-current-user) create a user namespace mapping its user and group
// to themselves, then a PID namespace whose first process is the program
// (--fork), killed with SIGKILL if unshare dies (--kill-child sets that
// process's parent-death signal). No --mount-proc: the program shares this
// process's mounts, as a program started directly does.
var unshareFlags = []string{"--user", "--map-current-user", "--pid", "--fork", "--kill-child=SIGKILL", "--"}

// unshareWorks finds unshare and checks once that it can do what
// unshareFlags ask here (a version without --map-current-user, or user
// namespaces refused to this user, fail the check): it returns unshare's
// path, or "" where it cannot.
var unshareWorks = sync.OnceValue(func() string {
	path, err := exec.LookPath("unshare")
	if err != nil {
		for _, p := range []string{"/usr/bin/unshare", "/bin/unshare"} {
			if _, err := os.Stat(p); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		return ""
	}
	// The program of the check is unshare itself: it is known to exist.
	probe := exec.Command(path, append(append([]string(nil), unshareFlags...), path, "--version")...)
	probe.Env = []string{}
	probe.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := probe.Run(); err != nil {
		return ""
	}
	return path
})

// UnshareCommand makes cmd, not yet started, start its program through
// util-linux's unshare: in a new user namespace that maps this process's
// user and group to themselves, as the first process of a new PID namespace
// (when it exits the kernel kills every other process of the namespace),
// killed if unshare dies. unshare is a program of its own, dumpable,
// so it can write its own uid_map where this process could not write a
// child's (see Dumpable): the program keeps its user's identity (id -u,
// ssh's user and ~/.ssh). The caller sets cmd.SysProcAttr for unshare
// itself (a process group, Pdeathsig SIGKILL so that it dies with this
// process, and with it the program); killing unshare's process group kills
// the program too, which is in it.
//
// It reports false, and leaves cmd as it was, where unshare is missing or
// cannot make these namespaces here (checked once, by running it), or where
// cmd's program was not found (cmd.Err, which cmd.Start reports).
func UnshareCommand(cmd *exec.Cmd) bool {
	if cmd.Err != nil || cmd.Path == "" {
		return false
	}
	path := unshareWorks()
	if path == "" {
		return false
	}
	args := make([]string, 0, 1+len(unshareFlags)+len(cmd.Args))
	args = append(args, path)
	args = append(args, unshareFlags...)
	args = append(args, cmd.Path)
	if len(cmd.Args) > 1 {
		args = append(args, cmd.Args[1:]...)
	}
	cmd.Path, cmd.Args = path, args
	return true
}

// PIDNamespaceAttr returns the attributes that start a process as the
// first of a PID namespace of its own, in a process group of its own, and
// killed with SIGKILL if this process dies. When the first process of a PID
// namespace dies, the kernel kills every other process in it, wherever
// they went (setsid, double forks), so nothing the process started
// outlives it, even when this process is killed and can tear nothing down.
//
// Without root, the PID namespace needs a user namespace: one mapping this
// process's user and group to themselves, so the child keeps its user and
// rights. A process that hid its environment (HideEnviron) cannot write
// its child's maps (see Dumpable): the child then runs unmapped, where the
// kernel still checks its files as this user but it sees every uid as
// 65534, the overflow ID; UnshareCommand is the way around that, tried
// first by the callers.
func PIDNamespaceAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_NEWPID, Pdeathsig: syscall.SIGKILL}
	if uid, gid := os.Geteuid(), os.Getegid(); uid != 0 {
		a.Cloneflags |= syscall.CLONE_NEWUSER
		if Dumpable() {
			a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
			a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		}
	}
	return a
}
