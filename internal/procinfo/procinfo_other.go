//go:build !unix

package procinfo

import "os"

func hostID() string {
	h, _ := os.Hostname()
	return h
}

func startToken(int) string { return "" }

// dead cannot tell on this platform; leases then end by expiry only.
func dead(Owner) bool { return false }
