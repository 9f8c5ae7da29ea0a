//go:build unix

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/deepagents-go/deepagents/backend"
)

// outputGrace is how long output is still collected after a command exits
// while background processes keep its output open.
const outputGrace = time.Second

// start starts the shell on command with its output going to out, contained
// as the LocalShell doc describes. finish is to be called once the command
// has been waited for; it returns notes for the command's output.
func (s *LocalShell) start(ctx context.Context, command string, out *os.File) (cmd *exec.Cmd, finish func() string, err error) {
	ws, err := s.workspace(ctx)
	if err != nil {
		return nil, nil, err
	}
	if s.sandbox != nil {
		return s.startSandboxed(ctx, ws, command, out)
	}
	newCmd := func(attr *syscall.SysProcAttr) *exec.Cmd {
		cmd := exec.Command(s.shell, "-c", command)
		cmd.Dir = ws.root
		cmd.Env = s.env
		cmd.Stdout, cmd.Stderr = out, out
		cmd.SysProcAttr = attr
		return cmd
	}
	nothing := func() string { return "" }
	if attr := containedAttr(); attr != nil && !s.noNamespaces.Load() {
		cmd := newCmd(nil)
		if u := unshareAttr(cmd); u != nil {
			cmd.SysProcAttr = u
			if err := cmd.Start(); err == nil {
				return cmd, nothing, nil
			}
			// unshare passed its check, so this is rare: start as below.
			cmd = newCmd(nil)
		}
		cmd.SysProcAttr = attr
		err := cmd.Start()
		if err == nil {
			return cmd, nothing, nil
		}
		if !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EUSERS) {
			return nil, nil, err
		}
		if s.noNamespaces.CompareAndSwap(false, true) {
			slog.Warn("execute: PID namespaces are unavailable; commands run in a process group, and a process that leaves it can outlive its command", "err", err)
		}
	}
	cmd = newCmd(&syscall.SysProcAttr{Setpgid: true})
	return cmd, nothing, cmd.Start()
}

// startSandboxed starts command in bubblewrap, in the shell's cgroup where
// one can be made, with its protected and hidden paths mounted as they are
// now. finish checks the protected paths the command could have created.
func (s *LocalShell) startSandboxed(ctx context.Context, ws shellWorkspace, command string, out *os.File) (*exec.Cmd, func() string, error) {
	places := ws.places
	prot := protectPaths(ws.sandbox, places)
	hidden, err := s.hiddenMatches(ctx, ws.root)
	if err != nil {
		return nil, nil, err
	}
	prot.masks = append(prot.masks, hidden...)
	places.placeholders.acquire(prot.placeholders)
	started := false
	var proxyDone func() error
	defer func() {
		if !started {
			places.placeholders.release(prot.placeholders)
		}
	}()
	files, fileArgs, err := s.plan.files()
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox files: %w", err)
	}
	defer func() {
		for _, f := range files {
			f.Close() // bwrap has its own copies once started
		}
	}()
	var nw *sandboxNet
	if s.bridge != "" {
		l, err := s.sandbox.Proxy.Command(ctx, command)
		if err != nil {
			return nil, nil, fmt.Errorf("the network proxy: %w", err)
		}
		defer func() {
			if !started {
				l.Close()
			}
		}()
		nw = &sandboxNet{dir: l.Dir, bridge: s.bridge}
		proxyDone = l.Close
	}
	args := bwrapArgs(s.sandbox, s.plan, ws.root, s.shell, command, s.env, prot.args(), fileArgs, nw)
	prog := s.bwrap
	cg, err := s.shellCgroup()
	if err != nil {
		return nil, nil, err
	}
	if cg != nil {
		args = append([]string{"-c", cg.enter(), "sh", prog}, args...)
		prog = "/bin/sh"
	}
	cmd := exec.Command(prog, args...)
	cmd.Dir = ws.root
	cmd.ExtraFiles = files
	// bwrap's own environment is visible inside the sandbox (its first
	// process's /proc/1/environ): give it none.
	cmd.Env = []string{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sandboxAttr()
	finish := func() string {
		if proxyDone != nil {
			proxyDone()
		}
		places.placeholders.release(prot.placeholders)
		var notes []string
		for i := range prot.guards {
			if n := prot.guards[i].check(places); n != "" {
				notes = append(notes, n)
			}
		}
		return strings.Join(notes, "\n")
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	started = true
	return cmd, finish, nil
}

// Execute implements backend.Sandbox.
func (s *LocalShell) Execute(ctx context.Context, command string, timeout time.Duration) (backend.ExecResult, error) {
	timeout = s.commandTimeout(timeout)
	if err := ctx.Err(); err != nil {
		return backend.ExecResult{ExitCode: -1}, err
	}
	if s.slots != nil {
		select {
		case s.slots <- struct{}{}:
			defer func() { <-s.slots }()
		case <-ctx.Done():
			return backend.ExecResult{ExitCode: -1}, ctx.Err()
		}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return backend.ExecResult{}, fmt.Errorf("execute: %w", err)
	}
	defer pr.Close()
	cmd, finish, err := s.start(ctx, command, pw)
	pw.Close()
	if err != nil {
		return backend.ExecResult{}, fmt.Errorf("execute: %w", err)
	}
	out := &capWriter{max: s.maxOutput}
	readDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(out, pr)
		close(readDone)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var stopped error // why the command was killed
	select {
	case err = <-waited:
	case <-timer.C:
		stopped = fmt.Errorf("%w after %v", backend.ErrTimeout, timeout)
	case <-ctx.Done():
		stopped = ctx.Err()
	}
	if stopped != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-waited
	}
	select {
	case <-readDone:
	case <-time.After(outputGrace):
		_ = pr.SetReadDeadline(time.Now())
		<-readDone
	}
	res := backend.ExecResult{Output: out.String(), Truncated: out.truncated, ExitCode: -1}
	// Every process of the command is gone: check what it left.
	if note := finish(); note != "" {
		if res.Output != "" && !strings.HasSuffix(res.Output, "\n") {
			res.Output += "\n"
		}
		res.Output += note + "\n"
	}
	if stopped != nil {
		return res, stopped
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return res, fmt.Errorf("execute: %w", err)
	}
	res.ExitCode = cmd.ProcessState.ExitCode()
	return res, nil
}
