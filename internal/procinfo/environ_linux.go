package procinfo

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// HideEnviron makes this process's memory and environment unreadable to
// the other processes of its user: its /proc/PID/environ, mem, maps and
// the like then belong to root, and ptrace by the same user is refused.
// A program holding API keys in its environment calls it at start, before
// it starts anything, so that a child it runs (a stdio MCP server, a
// command) cannot read the keys from /proc/PARENT/environ. Children get
// none of it: what they run is dumpable again, with their own
// environment, which the program chooses.
//
// It does nothing against root: a process running as root (or holding
// CAP_SYS_PTRACE) still reads everything, and when this process runs as
// root its children are root too, unless they run in a sandbox that drops
// root (as the execute sandbox does). It also turns off this process's
// core dumps, which would hold the same keys.
func HideEnviron() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("procinfo: hiding the environment: %w", err)
	}
	return nil
}
