//go:build !linux

package backend

import (
	"fmt"
	"syscall"
)

func findBwrap(*Bubblewrap) (string, error) {
	return "", fmt.Errorf("%w: bubblewrap runs on Linux only", ErrNoSandbox)
}

func bwrapArgs(*Bubblewrap, string, string, string, []string) []string { return nil }

func sandboxAttr() *syscall.SysProcAttr { return nil }

func pidsRoot() string { return "" }

type pidsCgroup struct{}

func newPidsCgroup(string, string, int) (*pidsCgroup, error) { return nil, ErrNoSandbox }
func (*pidsCgroup) enter() string                            { return "" }
func (*pidsCgroup) remove() error                            { return nil }

func sweepPidsCgroups(string) {}
