// Package sandbox runs an agent's shell commands, and holds all the
// isolation the harness promises for them. [LocalShell] is the
// [github.com/deepagents-go/deepagents/backend.Sandbox] that ships with
// the harness: a backend.FilesystemBackend that also runs commands with
// sh -c in the workspace. With [LocalShellOptions.Sandbox] set, each
// command runs in [Bubblewrap] on Linux:
//
//   - namespaces of its own (user, PID, IPC, UTS, cgroup, network) and a
//     read-only system, with only the workspace, a private /tmp and its
//     HOME writable (sandbox.go, sandbox_linux.go);
//   - a seccomp filter (seccomp_linux.go);
//   - caps on processes and memory for all of a shell's commands together,
//     in a cgroup of its own (pidslimit_linux.go), and on tmpfs sizes;
//   - the protected paths kept read-only and checked after each command,
//     and the hidden paths masked (sandbox_guard.go, sandbox_hidden.go);
//   - no network, or only through a netproxy.Proxy.
//
// Without it the shell is not isolated (see [LocalShell]); it still runs
// each command in a PID namespace or process group of its own, so that
// nothing it starts outlives it (shell_*.go).
//
// docs/security.md says what this isolation promises and what it does
// not.
package sandbox
