package mcp

import (
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"

	"github.com/deepagents-go/deepagents/internal/procinfo"
)

// noPIDNamespace is set once starting a server in a PID namespace failed:
// later servers start in a process group straight away.
var noPIDNamespace atomic.Bool

// containAttr starts a stdio server as the first process of a PID
// namespace of its own, in a process group of its own, killed if this
// process dies first (Pdeathsig). When the first process of a PID
// namespace dies, the kernel kills every other process in it, wherever
// they went (setsid, double forks): so whatever the server started (npx
// starts node, which starts more) dies with it even when this process is
// killed with SIGKILL and can tear nothing down. Without root, a user
// namespace mapping this process's user and group to themselves makes the
// PID namespace possible; the server keeps its user and its rights. With
// namespaces false it is the process group alone: killGroup ends it when
// the server is closed, but a SIGKILL of this process leaves the server's
// children running.
func containAttr(namespaces bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if namespaces {
		a.Cloneflags = syscall.CLONE_NEWPID
		if uid, gid := os.Geteuid(), os.Getegid(); uid != 0 {
			a.Cloneflags |= syscall.CLONE_NEWUSER
			if procinfo.Dumpable() {
				a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
				a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
			}
			// Else this process hid its memory and environment
			// (procinfo.HideEnviron) and cannot write its child's uid_map (see
			// procinfo.Dumpable): startContained tries unshare first. Here, its
			// last resort, the server runs unmapped: the kernel still checks its
			// files as this user, but it sees its uid (and every other user's)
			// as 65534, the overflow ID.
		}
	}
	return a
}

// startContained starts the command newCmd makes as containAttr says:
// in namespaces where the kernel allows them, else (with a warning, once)
// in a process group only.
func startContained(newCmd func() *exec.Cmd) (*exec.Cmd, error) {
	if !noPIDNamespace.Load() {
		cmd := newCmd()
		if os.Geteuid() != 0 && !procinfo.Dumpable() && procinfo.UnshareCommand(cmd) {
			// This process hid its environment, so it cannot map its user
			// into the server's user namespace: unshare, a program of its
			// own, makes the namespaces and the map instead, and runs the
			// server as their first process; containAttr(false) puts
			// unshare and the server in a process group killed with this
			// process.
			cmd.SysProcAttr = containAttr(false)
			if err := cmd.Start(); err == nil {
				return cmd, nil
			}
			// unshare passed its check, so this is rare: start as below.
			cmd = newCmd()
		}
		cmd.SysProcAttr = containAttr(true)
		err := cmd.Start()
		if err == nil {
			return cmd, nil
		}
		if !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EUSERS) && !errors.Is(err, syscall.EACCES) {
			return nil, err
		}
		if noPIDNamespace.CompareAndSwap(false, true) {
			slog.Warn("mcp: PID namespaces are unavailable; stdio servers run in process groups, and what a server started can outlive this process if it is killed", "err", err)
		}
	}
	cmd := newCmd()
	cmd.SysProcAttr = containAttr(false)
	return cmd, cmd.Start()
}

// killGroup kills cmd's process group: the server and what it started.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
