package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/internal/diskkey"
)

// Defaults of LocalShellOptions.
const (
	DefaultShellTimeout = 120 * time.Second
	// DefaultShellMaxTimeout is the longest a command may run when the
	// caller (the model) asks for a longer timeout than the default.
	DefaultShellMaxTimeout = 10 * time.Minute
	DefaultMaxOutputBytes  = 100_000
	// DefaultShellPath is the PATH a LocalShell command gets when the
	// environment is not inherited.
	DefaultShellPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// LocalShellOptions configures a LocalShell. The zero value is usable.
type LocalShellOptions struct {
	// Filesystem configures the file operations.
	Filesystem backend.FilesystemOptions
	// Timeout is the default limit of a command; zero means
	// DefaultShellTimeout.
	Timeout time.Duration
	// MaxTimeout is the longest limit a caller may ask for: a longer
	// timeout passed to Execute is lowered to it. Zero means
	// DefaultShellMaxTimeout; it is never below Timeout.
	MaxTimeout time.Duration
	// MaxOutputBytes caps the output kept (standard output and error
	// together); zero means DefaultMaxOutputBytes. The rest is read and
	// dropped, and the result says Truncated.
	MaxOutputBytes int
	// InheritEnv passes this process's environment to commands. By
	// default they get only PATH=DefaultShellPath, so that API keys and
	// other secrets of the host process do not leak to the model.
	InheritEnv bool
	// Env holds extra KEY=value variables, applied last (so it can set
	// PATH or HOME).
	Env []string
	// Shell is the shell that runs commands with -c; empty means /bin/sh.
	Shell string
	// Sandbox, when set, runs every command inside bubblewrap (see
	// Bubblewrap); NewLocalShell fails with ErrNoSandbox where it cannot.
	// The environment is then SandboxEnv with Env applied, never this
	// process's (InheritEnv is refused).
	Sandbox *Bubblewrap
}

// LocalShell is a Filesystem that also runs shell commands on the host,
// with the root directory as their working directory. With
// LocalShellOptions.Sandbox, each command runs isolated in bubblewrap (see
// Bubblewrap). Without it the shell is NOT isolated: commands run as this
// process's user with full access to the machine and the network; virtual
// mode confines the file tools, not the shell. Use that only for trusted
// work on your own machine, or inside a container or VM you are willing to
// lose.
//
// Each command runs as "sh -c COMMAND" with standard input empty and
// standard output and error sharing one pipe, so they interleave as
// written. Output beyond MaxOutputBytes is dropped as it streams.
//
// Nothing a command starts outlives it. On Linux the shell runs as the
// first process of a PID namespace of its own (with a user namespace when
// this process is not root), so when it exits, times out or is cancelled,
// or when this process dies, the kernel kills every process the command
// started, including background jobs and processes that called setsid.
// Where namespaces are unavailable (other systems, or Linux with user
// namespaces disabled) the shell runs in a process group of its own, which
// is killed with SIGKILL when the command ends; a process that left the
// group can then survive, and a warning is logged once.
type LocalShell struct {
	*backend.FilesystemBackend
	timeout    time.Duration
	maxTimeout time.Duration
	maxOutput  int
	// noNamespaces is set once starting a command in namespaces failed.
	noNamespaces atomic.Bool
	// sandbox and bwrap are the Bubblewrap options and program, when
	// commands run in the sandbox.
	sandbox *Bubblewrap
	bwrap   string
	// bridge is the network bridge program, when the sandbox has a Proxy.
	bridge string
	// plan is what every sandboxed command mounts the same way.
	plan *sandboxPlan
	// places maps host paths to the sandbox's.
	places *sandboxPlaces
	// cgroups are where the shell's cgroup is made; cgMu guards cg,
	// made at the first sandboxed command and removed by Close.
	cgroups cgroupRoots
	cgMu    sync.Mutex
	cg      *shellCgroup
	// slots holds a token per sandboxed command running
	// (Bubblewrap.MaxCommands).
	slots chan struct{}
	env   []string
	shell string
	id    string
}

var _ backend.Sandbox = (*LocalShell)(nil)

// NewLocalShell returns a LocalShell rooted at the directory root.
func NewLocalShell(root string, opts LocalShellOptions) (*LocalShell, error) {
	fs, err := backend.NewFilesystemBackend(root, opts.Filesystem)
	if err != nil {
		return nil, err
	}
	s := &LocalShell{
		FilesystemBackend: fs,
		timeout:           opts.Timeout,
		maxTimeout:        opts.MaxTimeout,
		maxOutput:         opts.MaxOutputBytes,
		shell:             opts.Shell,
	}
	if s.timeout <= 0 {
		s.timeout = DefaultShellTimeout
	}
	if s.maxTimeout <= 0 {
		s.maxTimeout = DefaultShellMaxTimeout
	}
	s.maxTimeout = max(s.maxTimeout, s.timeout)
	if s.maxOutput <= 0 {
		s.maxOutput = DefaultMaxOutputBytes
	}
	if s.shell == "" {
		s.shell = "/bin/sh"
	}
	switch {
	case opts.Sandbox != nil:
		if opts.InheritEnv {
			return nil, fmt.Errorf("%w: a sandboxed shell never inherits the environment; pass variables with Env", ErrNoSandbox)
		}
		sb := *opts.Sandbox
		s.sandbox = &sb
		if s.bwrap, err = findBwrap(&sb); err != nil {
			return nil, err
		}
		if err := sandboxRootAllowed(s.Root()); err != nil {
			return nil, err
		}
		warnForeignOwner(s.Root())
		for _, bd := range sb.Binds {
			if err := checkBind(bd, s.Root()); err != nil {
				return nil, err
			}
		}
		if sb.Proxy != nil && !sb.Network {
			if s.bridge, err = findBridge(&sb); err != nil {
				return nil, err
			}
		}
		s.plan = newSandboxPlan()
		s.places = newSandboxPlaces(&sb, s.Root())
		s.slots = make(chan struct{}, sb.maxCommands())
		s.cgroups = findCgroupRoots()
		if m := s.cgroups.missing(); len(m) > 0 {
			warnNoCgroup(m)
		}
		for _, d := range []string{s.cgroups.pids, s.cgroups.memory} {
			if d != "" {
				sweepCgroups(d)
			}
		}
		s.env = slices.Clone(SandboxEnv)
	case opts.InheritEnv:
		s.env = os.Environ()
	default:
		s.env = []string{"PATH=" + DefaultShellPath}
	}
	s.env = append(s.env, opts.Env...)
	var b [8]byte
	_, _ = rand.Read(b[:])
	s.id = "local-" + hex.EncodeToString(b[:])
	return s, nil
}

// sandboxSystemRoots are folders whose contents run as, or configure, the
// system: a sandbox whose workspace is one of them (or "/") would have
// them writable, and its commands, as root, could plant what the host runs
// as root (a cron job, a profile script). A project below one of them
// (/opt/app, /var/www/site) is fine: only it is writable.
var sandboxSystemRoots = []string{"/", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/var", "/boot", "/run", "/proc", "/sys", "/dev", "/usr/local", "/usr/bin", "/usr/lib"}

// checkBind refuses a bind whose place is relative, a system folder, or
// at, above or under the workspace root, where it would hide or replace
// what the sandbox's other mounts promise.
func checkBind(b Bind, root string) error {
	at := filepath.Clean(b.At)
	if !filepath.IsAbs(b.At) || at == "/" {
		return fmt.Errorf("%w: a bind's place %q must be an absolute folder", ErrNoSandbox, b.At)
	}
	within := func(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	for _, d := range sandboxSystemRoots {
		if d != "/" && within(at, d) {
			return fmt.Errorf("%w: a bind at %s would cover the system folder %s", ErrNoSandbox, at, d)
		}
	}
	if within(at, root) || within(root, at) || at == SandboxHome || within(at, "/tmp") || within(at, "/home") {
		return fmt.Errorf("%w: a bind at %s would cover the workspace, HOME or /tmp", ErrNoSandbox, at)
	}
	host, err := filepath.EvalSymlinks(b.Host)
	if err != nil {
		return fmt.Errorf("%w: a bind's host folder %s: %v", ErrNoSandbox, b.Host, err)
	}
	if st, err := os.Stat(host); err != nil || !st.IsDir() {
		return fmt.Errorf("%w: a bind's host folder %s: not a folder", ErrNoSandbox, b.Host)
	}
	// A host folder in or above the workspace would be a second way to
	// its files, around the protected paths' read-only mounts.
	if host == "/" || within(host, root) || within(root, host) {
		return fmt.Errorf("%w: a bind's host folder %s is in or above the workspace", ErrNoSandbox, b.Host)
	}
	return nil
}

// sandboxRootAllowed refuses, with ErrNoSandbox, a sandbox workspace that
// is a system folder.
func sandboxRootAllowed(root string) error {
	real := root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		real = r
	}
	for _, d := range sandboxSystemRoots {
		if filepath.Clean(real) == d || filepath.Clean(root) == d {
			return fmt.Errorf("%w: the workspace %s is a system folder, which the sandbox would make writable; use a project folder", ErrNoSandbox, root)
		}
	}
	return nil
}

// Close removes the cgroup of the shell's sandboxed commands, waiting a
// while for the processes of commands still running to be gone. The
// LocalShell stays usable: a later command makes a new cgroup.
func (s *LocalShell) Close() error {
	s.cgMu.Lock()
	cg := s.cg
	s.cg = nil
	s.cgMu.Unlock()
	if cg != nil {
		return cg.remove()
	}
	return nil
}

// shellCgroup returns the shell's cgroup, made at its first use; nil
// where none can be made.
func (s *LocalShell) shellCgroup() (*shellCgroup, error) {
	if s.cgroups.pids == "" && s.cgroups.memory == "" {
		return nil, nil
	}
	s.cgMu.Lock()
	defer s.cgMu.Unlock()
	if s.cg == nil {
		cg, err := newShellCgroup(s.cgroups, s.sandbox.maxProcesses(), s.sandbox.maxMemory())
		if err != nil {
			return nil, fmt.Errorf("limiting processes and memory: %w", err)
		}
		s.cg = cg
	}
	return s.cg, nil
}

var noCgroupOnce sync.Once

// warnNoCgroup says, once per process, which limits of the sandbox the
// kernel gives no cgroup for, and how to get one.
func warnNoCgroup(missing []string) {
	noCgroupOnce.Do(func() {
		slog.Warn("execute: no cgroup can be made here, so the sandbox's "+strings.Join(missing, " and ")+
			" are not capped for all commands together (tmpfs sizes still are); run as root, or under a delegated cgroup: "+
			"systemd-run --user --scope -p Delegate=yes deepagents ...", "missing", missing)
	})
}

// ID returns a random identifier made when the LocalShell was created.
func (s *LocalShell) ID() string { return s.id }

// capWriter keeps the first max bytes written to it and counts the rest.
type capWriter struct {
	buf       []byte
	max       int
	truncated bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - len(w.buf); room > 0 {
		n := min(room, len(p))
		w.buf = append(w.buf, p[:n]...)
		if n < len(p) {
			w.truncated = true
		}
	} else if len(p) > 0 {
		w.truncated = true
	}
	return len(p), nil
}

// String returns the kept output, not ending inside a UTF-8 sequence cut
// by the limit.
func (w *capWriter) String() string {
	b := w.buf
	if w.truncated {
		for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
			if c := b[len(b)-i]; utf8.RuneStart(c) {
				if !utf8.FullRune(b[len(b)-i:]) {
					b = b[:len(b)-i]
				}
				break
			}
		}
	}
	return string(b)
}

// TimeoutLimits implements TimeoutLimiter.
func (s *LocalShell) TimeoutLimits() (def, max time.Duration) { return s.timeout, s.maxTimeout }

// commandTimeout is the limit of one command asked to run for timeout: the
// default for zero or less, and never more than the maximum.
func (s *LocalShell) commandTimeout(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return s.timeout
	}
	return min(timeout, s.maxTimeout)
}

// BufferedDisk is for backend.NewBuffered alone (its parameter's type is
// internal to backend): the shell's files, and the shell.
func (s *LocalShell) BufferedDisk(diskkey.Key) (*backend.FilesystemBackend, backend.Sandbox) {
	return s.FilesystemBackend, s
}
