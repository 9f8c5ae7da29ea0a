//go:build !linux

package mcp

import "os/exec"

// startContained starts the command newCmd makes: only Linux has the PID
// namespaces, process groups and parent-death signals used to end what a
// server started.
func startContained(newCmd func() *exec.Cmd) (*exec.Cmd, error) {
	cmd := newCmd()
	return cmd, cmd.Start()
}

// killGroup kills the server's own process.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
