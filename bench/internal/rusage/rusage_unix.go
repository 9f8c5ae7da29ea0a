//go:build linux || darwin || freebsd || netbsd || openbsd

package rusage

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strconv"
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
	if n, ok := vmHWM(); ok {
		return n
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return scale(int64(ru.Maxrss))
}

// vmHWM reads the peak RSS of the process's current address space from
// /proc/self/status (Linux). Unlike ru_maxrss it does not include the
// parent's address space that a vfork-style spawn (which Go's os/exec
// uses) shares with the child until it execs.
func vmHWM() (int64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmHWM:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		return kb * 1024, err == nil
	}
	return 0, false
}

func child(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	return scale(int64(ru.Maxrss))
}
