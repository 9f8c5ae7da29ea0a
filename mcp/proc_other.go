//go:build !linux

package mcp

import "os/exec"

// ownGroup does nothing here: only Linux has the process groups and
// parent-death signals used to end what a server started.
func ownGroup(cmd *exec.Cmd) {}

// killGroup kills the server's own process.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
