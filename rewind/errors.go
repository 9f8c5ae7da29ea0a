package rewind

import (
	"errors"
	"io/fs"
	"syscall"
)

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// isNotEmpty reports a folder that could not be removed for what it holds.
func isNotEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)
}
