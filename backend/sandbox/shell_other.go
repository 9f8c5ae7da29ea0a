//go:build !unix

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/deepagents-go/deepagents/backend"
)

// Execute implements backend.Sandbox. It is unreachable: NewLocalShell fails first
// on this system.
func (s *LocalShell) Execute(context.Context, string, time.Duration) (backend.ExecResult, error) {
	return backend.ExecResult{ExitCode: -1}, fmt.Errorf("execute: %w on this system", errors.ErrUnsupported)
}
