package rusage

import "os"

// Self returns the calling process's peak resident set size in bytes.
func Self() int64 { return self() }

// Child returns the peak resident set size, in bytes, of the exited
// process ps describes (from wait4's rusage).
func Child(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	return child(ps)
}
