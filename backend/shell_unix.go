//go:build unix

package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// outputGrace is how long output is still collected after a command exits
// while background processes keep its output open.
const outputGrace = time.Second

// start starts the shell on command with its output going to out, contained
// as the LocalShell doc describes.
func (s *LocalShell) start(command string, out *os.File) (*exec.Cmd, error) {
	newCmd := func(attr *syscall.SysProcAttr) *exec.Cmd {
		cmd := exec.Command(s.shell, "-c", command)
		cmd.Dir = s.root
		cmd.Env = s.env
		cmd.Stdout, cmd.Stderr = out, out
		cmd.SysProcAttr = attr
		return cmd
	}
	if attr := containedAttr(); attr != nil && !s.noNamespaces.Load() {
		cmd := newCmd(attr)
		err := cmd.Start()
		if err == nil {
			return cmd, nil
		}
		if !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EUSERS) {
			return nil, err
		}
		if s.noNamespaces.CompareAndSwap(false, true) {
			slog.Warn("execute: PID namespaces are unavailable; commands run in a process group, and a process that leaves it can outlive its command", "err", err)
		}
	}
	cmd := newCmd(&syscall.SysProcAttr{Setpgid: true})
	return cmd, cmd.Start()
}

// Execute implements Sandbox.
func (s *LocalShell) Execute(ctx context.Context, command string, timeout time.Duration) (ExecResult, error) {
	timeout = s.commandTimeout(timeout)
	if err := ctx.Err(); err != nil {
		return ExecResult{ExitCode: -1}, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return ExecResult{}, fmt.Errorf("execute: %w", err)
	}
	defer pr.Close()
	cmd, err := s.start(command, pw)
	pw.Close()
	if err != nil {
		return ExecResult{}, fmt.Errorf("execute: %w", err)
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
		stopped = fmt.Errorf("%w after %v", ErrTimeout, timeout)
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
	res := ExecResult{Output: out.String(), Truncated: out.truncated, ExitCode: -1}
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
