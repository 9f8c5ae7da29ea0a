//go:build unix

package backend_test

import (
	"errors"

	"golang.org/x/sys/unix"
)

func mkfifo(p string) error { return unix.Mkfifo(p, 0o644) }

func errorsIs(err, target error) bool { return errors.Is(err, target) }
