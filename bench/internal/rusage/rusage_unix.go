//go:build linux || darwin || freebsd || netbsd || openbsd

package rusage

import (
	"os"
	"runtime"
	"syscall"
)

// scale converts ru_maxrss to bytes: Linux and the BSDs report kilobytes,
// macOS bytes.
func scale(maxrss int64) int64 {
	if runtime.GOOS == "darwin" {
		return maxrss
	}
	return maxrss * 1024
}

func self() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return scale(int64(ru.Maxrss))
}

func child(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	return scale(int64(ru.Maxrss))
}
