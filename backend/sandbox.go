package backend

import (
	"errors"
	"time"
)

// Bubblewrap isolates a LocalShell's commands with bubblewrap (bwrap, the
// Debian package bubblewrap), on Linux. Each command runs in new user, PID,
// IPC, UTS, cgroup and network namespaces: it sees no other process (so
// neither this process's environment nor its API keys), has no network
// unless Network is set, reads the system (/usr, /etc, /opt) but cannot
// write it, writes only the workspace, a private /tmp and its HOME, and
// everything it started dies with it. Its environment is built from an
// allow-list (see SandboxEnv), never inherited.
type Bubblewrap struct {
	// Path is the bwrap program; empty means "bwrap" looked up in PATH.
	Path string
	// Network lets commands use the host's network. By default they have
	// none, not even the host's loopback.
	Network bool
	// ReadOnly lists more host paths mounted read-only at the same place
	// (a toolchain outside /usr and /opt, say). Missing ones are skipped.
	ReadOnly []string
	// Home is a host directory mounted read-write as the commands' HOME
	// (SandboxHome), so that caches (Go's build cache, say) outlive one
	// command. Empty means a fresh, empty HOME for each command.
	Home string
	// MaxProcesses caps the processes one command may have at once, so a
	// fork bomb fails instead of exhausting the machine; zero means
	// DefaultSandboxMaxProcesses. It takes a pids cgroup this process may
	// create (cgroup v1's pids hierarchy as root, or a delegated cgroup
	// v2 subtree); where there is none the cap is not enforced, and
	// NewLocalShell logs a warning.
	MaxProcesses int
	// Protected lists paths commands may read but never change: paths
	// relative to the workspace root (slash-separated, such as
	// ".git/hooks"; see ProtectedPaths) or absolute host paths (the
	// user's ~/.deepagents, say). They are mounted read-only over the
	// workspace and HOME, so they hold even where the workspace itself is
	// writable.
	Protected []string
	// Hidden lists absolute host paths commands may not read at all
	// (configuration files that hold keys, say): a file is replaced by an
	// empty one, a directory by an empty directory.
	Hidden []string
}

// DefaultSandboxMaxProcesses is the default Bubblewrap.MaxProcesses.
const DefaultSandboxMaxProcesses = 512

func (b *Bubblewrap) maxProcesses() int {
	if b.MaxProcesses > 0 {
		return b.MaxProcesses
	}
	return DefaultSandboxMaxProcesses
}

// SandboxHome is HOME inside the Bubblewrap sandbox.
const SandboxHome = "/home/agent"

// SandboxPath is PATH inside the Bubblewrap sandbox: the system's
// directories and the usual places of toolchains.
const SandboxPath = "/usr/local/go/bin:" + SandboxHome + "/go/bin:" + SandboxHome + "/.cargo/bin:" + SandboxHome + "/.local/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// SandboxEnv is the environment a sandboxed command starts with, before
// LocalShellOptions.Env is applied.
var SandboxEnv = []string{
	"PATH=" + SandboxPath,
	"HOME=" + SandboxHome,
	"TMPDIR=/tmp",
	"LANG=C.UTF-8",
	"TERM=dumb",
	"USER=agent",
}

// ErrNoSandbox is returned by NewLocalShell when LocalShellOptions.Sandbox
// is set and bubblewrap cannot run here: not installed, not Linux, or
// namespaces not allowed.
var ErrNoSandbox = errors.New("backend: the bubblewrap sandbox is unavailable")

// sandboxProbeTimeout bounds the check that bwrap works.
const sandboxProbeTimeout = 10 * time.Second
