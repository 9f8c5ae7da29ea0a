//go:build !linux

package procinfo

// HideEnviron does nothing here: only Linux exposes a process's
// environment to the processes of its user through /proc (see the Linux
// version).
func HideEnviron() error { return nil }
