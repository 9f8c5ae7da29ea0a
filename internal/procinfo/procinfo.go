// Package procinfo identifies this process well enough for another process
// on the same machine to tell, later, whether it is still running: the
// machine (host name, and on Linux the boot and PID namespace), the PID and
// a start token that changes when the PID is reused.
package procinfo

import (
	"fmt"
	"os"
)

// Owner identifies a process.
type Owner struct {
	// Host identifies the machine and PID namespace; PIDs are comparable
	// only between owners with the same Host.
	Host string
	PID  int
	// Start distinguishes processes that had the same PID; "" when the
	// platform does not provide it.
	Start string
}

// String describes the owner for error messages.
func (o Owner) String() string {
	host := o.Host
	if i := indexByte(host, '|'); i >= 0 {
		host = host[:i]
	}
	return fmt.Sprintf("pid %d on %s", o.PID, host)
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// Self describes the calling process.
func Self() Owner {
	pid := os.Getpid()
	return Owner{Host: hostID(), PID: pid, Start: startToken(pid)}
}

// Dead reports whether o is certainly no longer running: it is on this
// machine (same Host as self) and its PID is gone, is a zombie, or now
// belongs to a process started at another time. It reports false when it
// cannot tell.
func Dead(self, o Owner) bool {
	if o.Host == "" || o.Host != self.Host || o.PID <= 0 {
		return false
	}
	if o.PID == self.PID {
		return o.Start != "" && self.Start != "" && o.Start != self.Start
	}
	return dead(o)
}
