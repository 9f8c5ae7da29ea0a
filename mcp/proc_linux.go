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
// namespace of its own (procinfo.PIDNamespaceAttr), so whatever it started
// (npx starts node, which starts more) dies with it, even when this
// process is killed with SIGKILL and can tear nothing down. With
// namespaces false it is a process group alone, killed if this process
// dies first: killGroup ends it when the server is closed, but a SIGKILL of
// this process leaves the server's children running.
func containAttr(namespaces bool) *syscall.SysProcAttr {
	if namespaces {
		return procinfo.PIDNamespaceAttr()
	}
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
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
