//go:build unix

package main

import "syscall"

// peakRSSKiB is this process's peak resident set size in KiB (Linux's
// unit for ru_maxrss).
func peakRSSKiB() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return int64(ru.Maxrss)
}
