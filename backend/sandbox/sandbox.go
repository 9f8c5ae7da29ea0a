package sandbox

import (
	"errors"
	"time"

	"github.com/deepagents-go/deepagents/netproxy"
)

// Bubblewrap isolates a LocalShell's commands with bubblewrap (bwrap, the
// Debian package bubblewrap), on Linux. Each command runs in new user, PID,
// IPC, UTS, cgroup and network namespaces: it sees no other process (so
// neither this process's environment nor its API keys), has no network
// unless Network is set, reads the system (/usr, /etc, /opt) but cannot
// write it, writes only the workspace, a private /tmp and its HOME, and
// everything it started dies with it. Its environment is built from an
// allow-list (see SandboxEnv), never inherited.
//
// It is unprivileged whoever runs it, root included: it runs as SandboxUID
// in a user namespace of its own with no capability, no_new_privs, no
// further user namespace and /proc/sys read-only, and what /etc holds that
// is not readable by all (or is named like a private key) is masked.
// Protected and Hidden paths are enforced inside, and the shell's commands
// share caps on processes, memory and tmpfs sizes (MaxProcesses,
// MaxMemory, TmpfsSize, MaxCommands).
type Bubblewrap struct {
	// Path is the bwrap program; empty means "bwrap" looked up in PATH.
	Path string
	// Network lets commands use the host's network, all of it. By
	// default they have none, not even the host's loopback.
	Network bool
	// Proxy, when set (and Network is not), gives commands the network
	// by name through it (package netproxy): each command gets a socket
	// of its own (Proxy.Command, labelled with the command's text), and
	// runs behind Bridge, which listens on the sandbox's loopback where
	// the proxy variables (netproxy.Env) send HTTP, HTTPS and SOCKS5
	// clients. The sandbox still has no route out: a program that ignores
	// those variables reaches nothing.
	Proxy *netproxy.Proxy
	// Binds are more host folders mounted inside at places of their own:
	// an evaluation's tests and logs (/tests, /logs/verifier), say. A
	// bind's place must be absolute and outside the system folders and
	// the workspace.
	Binds []Bind
	// Bridge is the program the sandbox runs as Proxy's bridge: one that
	// imports package netproxy/bridge. Empty means this process's own
	// executable, whose main package must import it (the deepagents
	// CLI's does).
	Bridge string
	// ReadOnly lists more host paths mounted read-only at the same place
	// (a toolchain outside /usr and /opt, say). Missing ones are skipped.
	ReadOnly []string
	// Home is a host directory mounted read-write as the commands' HOME
	// (SandboxHome), so that caches (Go's build cache, say) outlive one
	// command. Empty means a fresh, empty HOME for each command.
	Home string
	// MaxProcesses caps the processes all the shell's commands together
	// may have at once (its subagents' commands included, as they share
	// the shell), so a fork bomb fails instead of exhausting the machine;
	// zero means DefaultSandboxMaxProcesses.
	//
	// MaxProcesses and MaxMemory take a cgroup this process may create:
	// cgroup v1's pids and memory hierarchies as root, or a cgroup v2
	// subtree delegated to this process's user (run the program under
	// "systemd-run --user --scope -p Delegate=yes" to get one). Where
	// there is none they are not enforced, and the first sandboxed shell
	// logs a warning saying so.
	MaxProcesses int
	// MaxMemory caps the memory, in bytes, all the shell's commands
	// together may use: their processes' and the files they keep in the
	// sandbox's tmpfs mounts (/tmp, /home, /dev/shm), which the kernel
	// charges to the same cgroup. A command that goes beyond it is killed
	// by the kernel's out-of-memory killer. Zero means
	// DefaultSandboxMaxMemory.
	MaxMemory int64
	// TmpfsSize is the size, in bytes, of each RAM-backed mount of a
	// command: /tmp, /home (HOME, unless Home is set) and /dev/shm. A
	// write beyond it fails with "No space left on device". It holds
	// without a cgroup too. Zero means DefaultSandboxTmpfsSize.
	TmpfsSize int64
	// MaxCommands caps how many sandboxed commands of the shell run at
	// once; more wait for a free slot (their context still ends the
	// wait). Zero means DefaultSandboxMaxCommands.
	MaxCommands int
	// Protected lists paths commands may read but never change: paths
	// relative to the workspace root (slash-separated, such as
	// ".git/hooks"; see ProtectedPaths) or absolute host paths (the
	// user's ~/.deepagents, say). They are mounted read-only over the
	// workspace and HOME, so they hold even where the workspace itself is
	// writable; the folders on the way cannot be renamed or replaced, and
	// a symbolic link on the way is followed. A protected path that is
	// missing when a command starts and that the command creates is
	// removed when the command ends, and its output says so. Paths the
	// sandbox does not show, or cannot write, need nothing.
	Protected []string
	// Hidden lists absolute host paths commands may not read at all
	// (configuration files that hold keys, say): a file is replaced by an
	// empty one, a directory by an empty directory. A path missing when
	// a command starts is not masked (there is nothing to read).
	Hidden []string
	// HiddenGlobs lists globs of workspace paths, written as the file
	// tools' paths ("**/.env", "/secrets/**") and matched as the
	// permission rules match them (dot-folders included), that commands
	// may not read either: what matches when a command starts is masked
	// like Hidden paths, a matching folder whole. The CLI puts the globs
	// of its read_file deny rules here, so that cat cannot read what
	// read_file may not. More than MaxHiddenMatches matches fail the
	// command rather than show some.
	HiddenGlobs []string
}

// Bind is a host folder (Host) mounted inside the sandbox at At,
// read-only unless Writable.
type Bind struct {
	Host, At string
	Writable bool
}

// MaxHiddenMatches bounds the files and folders Bubblewrap.HiddenGlobs may
// mask for one command.
const MaxHiddenMatches = 4096

// Defaults of Bubblewrap's limits, for a developer's machine running
// builds: a Go or Node build fits, a runaway loop does not take the
// machine.
const (
	// DefaultSandboxMaxProcesses is the default Bubblewrap.MaxProcesses.
	DefaultSandboxMaxProcesses = 512
	// DefaultSandboxMaxMemory is the default Bubblewrap.MaxMemory: 4 GiB.
	DefaultSandboxMaxMemory int64 = 4 << 30
	// DefaultSandboxTmpfsSize is the default Bubblewrap.TmpfsSize: 1 GiB.
	DefaultSandboxTmpfsSize int64 = 1 << 30
	// DefaultSandboxMaxCommands is the default Bubblewrap.MaxCommands.
	DefaultSandboxMaxCommands = 16
)

// orDefault is v where it is set (above zero), else def: the options'
// zero values mean their defaults.
func orDefault[T int | int64](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

func (b *Bubblewrap) maxProcesses() int { return orDefault(b.MaxProcesses, DefaultSandboxMaxProcesses) }
func (b *Bubblewrap) maxMemory() int64  { return orDefault(b.MaxMemory, DefaultSandboxMaxMemory) }
func (b *Bubblewrap) tmpfsSize() int64  { return orDefault(b.TmpfsSize, DefaultSandboxTmpfsSize) }
func (b *Bubblewrap) maxCommands() int  { return orDefault(b.MaxCommands, DefaultSandboxMaxCommands) }

// SandboxUID and SandboxGID are the user and group a sandboxed command
// runs as, whoever starts it. A new user namespace maps them to this
// process's own user and group, so what a command writes in the workspace
// belongs on the host to whoever runs the shell, while inside it is not
// root and holds no capability. 1000 rather than 65534: 65534 is also the
// "overflow" ID every unmapped host user shows as inside, so with it a
// command could not tell its own files from other users' (git's ownership
// check, for one, would then trust anything).
const (
	SandboxUID = 1000
	SandboxGID = 1000
)

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
