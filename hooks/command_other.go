//go:build !unix

package hooks

import "os/exec"

// ownGroup leaves cmd as it is: a timeout kills the hook's process.
func ownGroup(*exec.Cmd) {}
