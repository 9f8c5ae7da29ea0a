// Package harness holds what the benchmark drivers that run other
// processes share: a buffer for the tail of their stderr, where their
// workspaces go, and units.
package harness

import "os"

// TailBuffer keeps the last Max bytes written to it (a process's stderr,
// for an error message).
type TailBuffer struct {
	Max int
	buf []byte
}

// Write implements io.Writer.
func (t *TailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.Max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.Max:]...)
	}
	return len(p), nil
}

// String returns the last Max bytes written.
func (t *TailBuffer) String() string {
	if len(t.buf) > t.Max {
		return string(t.buf[len(t.buf)-t.Max:])
	}
	return string(t.buf)
}

// WorkspaceRoot is /dev/shm where it is a writable directory, else the
// system's temporary directory: the CLI's workspaces go there so that its
// files, like the in-memory file stores it is compared with, do not wait
// on a disk.
func WorkspaceRoot() string {
	if d, err := os.MkdirTemp("/dev/shm", "probe-"); err == nil {
		os.Remove(d)
		return "/dev/shm"
	}
	return os.TempDir()
}

// MB converts bytes to mebibytes.
func MB(b int64) float64 { return float64(b) / (1 << 20) }
