//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"syscall"
)

func findBwrap(*Bubblewrap) (string, error) {
	return "", fmt.Errorf("%w: bubblewrap runs on Linux only", ErrNoSandbox)
}

// sandboxPlan and sandboxMask are Linux's; NewLocalShell fails before
// using them here.
type sandboxPlan struct{}

func newSandboxPlan() *sandboxPlan { return nil }

func (*sandboxPlan) files() ([]*os.File, []string, error) { return nil, nil, nil }

func bwrapArgs(*Bubblewrap, *sandboxPlan, string, string, string, []string, []string, []string, *sandboxNet) []string {
	return nil
}

type sandboxNet struct{ dir, bridge string }

func findBridge(*Bubblewrap) (string, error) { return "", ErrNoSandbox }

func maskArgs(string, bool) []string { return nil }

var sandboxSystemDirs []string

func sandboxAttr() *syscall.SysProcAttr { return nil }

func pidsRoot() string { return "" }

type cgroupRoots struct{ pids, memory string }

func (cgroupRoots) missing() []string { return nil }

func findCgroupRoots() cgroupRoots { return cgroupRoots{} }

type shellCgroup struct{}

func newShellCgroup(cgroupRoots, int, int64) (*shellCgroup, error) { return nil, ErrNoSandbox }
func (*shellCgroup) enter() string                                 { return "" }
func (*shellCgroup) remove() error                                 { return nil }

func sweepCgroups(string) {}

func warnForeignOwner(string) {}
