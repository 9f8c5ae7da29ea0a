//go:build unix

package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// outputGrace is how long output is still collected after a command exits
// while background processes keep its output open.
const outputGrace = time.Second

// Execute implements Sandbox.
func (s *LocalShell) Execute(ctx context.Context, command string, timeout time.Duration) (ExecResult, error) {
	if timeout <= 0 {
		timeout = s.timeout
	}
	if err := ctx.Err(); err != nil {
		return ExecResult{ExitCode: -1}, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return ExecResult{}, fmt.Errorf("execute: %w", err)
	}
	defer pr.Close()
	cmd := exec.Command(s.shell, "-c", command)
	cmd.Dir = s.root
	cmd.Env = s.env
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
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
