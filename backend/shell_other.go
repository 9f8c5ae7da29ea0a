//go:build !unix

package backend

import (
	"context"
	"time"
)

// Execute implements Sandbox. It is unreachable: NewLocalShell fails first
// on this system.
func (s *LocalShell) Execute(context.Context, string, time.Duration) (ExecResult, error) {
	return ExecResult{ExitCode: -1}, fsSupported()
}
