package rusage

import "os"

// Self returns the calling process's peak resident set size in bytes: on
// Linux VmHWM of /proc/self/status, elsewhere ru_maxrss.
func Self() int64 { return self() }

// Child returns the peak resident set size, in bytes, of the exited
// process ps describes (from wait4's rusage).
//
// On Linux this is at least the parent's own peak RSS: os/exec starts
// children with a vfork-style clone, so until it execs the child shares the
// parent's address space, and the kernel carries that address space's
// peak into the child's ru_maxrss. Measure through a small intermediate
// process (GNU time, say) when the parent is large.
func Child(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	return child(ps)
}
