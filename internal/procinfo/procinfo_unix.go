//go:build unix && !linux

package procinfo

import (
	"errors"
	"os"
	"syscall"
)

func hostID() string {
	h, _ := os.Hostname()
	return h
}

func startToken(int) string { return "" }

func dead(o Owner) bool {
	err := syscall.Kill(o.PID, 0)
	return errors.Is(err, syscall.ESRCH)
}
