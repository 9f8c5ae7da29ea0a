package sandbox

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/deepagents-go/deepagents/netproxy"
)

// sandboxSystemDirs are the host's system directories, mounted read-only
// (or, when they are symbolic links as on merged-/usr systems, recreated as
// the same links).
var sandboxSystemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}

// sandboxProcReadOnly are the parts of /proc through which a process could
// change the whole machine. Inside the sandbox, as root, the command's
// user is host root's uid without capabilities; for sysctl files (kernel.
// core_pattern runs a program as host root) the kernel checks nothing but
// the file's mode and that uid, so they must be on a read-only mount.
// bwrap covers some of them only when it sees them writable, which it
// cannot tell from the sandbox's user: they are bound read-only here
// whatever it does.
var sandboxProcReadOnly = []string{"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"}

// Bounds of the walk of /etc that finds what to mask: a real /etc has a
// few thousand entries a few levels deep. Directories beyond the bounds
// are masked whole, so a bound never exposes a secret, only hides more.
const (
	etcMaxEntries = 20000
	etcMaxDepth   = 8
)

// etcSecretNames are names of /etc entries masked even when they are
// world-readable: private keys and key stores, by their conventional
// names and places. The mode check catches most secrets; these catch keys
// a package or an administrator left readable.
var etcSecretNames = []string{"*.key", "*_key", "*.keytab", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk", "privkey*.pem"}

// etcSecretDirs are directories of /etc, relative to it, masked whole.
var etcSecretDirs = []string{"ssl/private", "pki/tls/private", "letsencrypt/archive", "letsencrypt/live", "letsencrypt/keys"}

// sandboxMask is a host path of the system directories hidden inside the
// sandbox: a directory becomes an empty read-only one, anything else an
// empty file.
type sandboxMask struct {
	path string
	dir  bool
}

// etcMasks finds what of dir (the host's /etc) the sandbox must not show.
//
// Secrets in /etc are masked by pattern rather than /etc exposed by an
// allow-list: what programs need of /etc (passwd, hosts, resolv.conf,
// ld.so.cache, ssl/certs, alternatives, every package's own configuration)
// differs from system to system and grows with what is installed, so an
// allow-list would break tools in ways the model cannot diagnose, while
// secrets follow one convention: they are not world-readable (shadow and
// its backups, gshadow, sudoers, SSH host keys, ssl/private, NetworkManager
// connections, Kerberos keytabs). So every entry that is not readable by
// all (a directory: readable and searchable) is masked, with the names
// and places of private keys on top. This matters as root above all: the
// sandbox's user is then host root's uid, which owns those files, so
// their mode does not stop it; as another user their mode already does.
// The walk is made when the shell is created: a secret created in /etc
// later is masked from the next shell on (or hidden by its mode anyway
// from a non-root caller).
func etcMasks(dir string) []sandboxMask {
	var masks []sandboxMask
	budget := etcMaxEntries
	var walk func(dir, rel string, depth int)
	walk = func(dir, rel string, depth int) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			masks = append(masks, sandboxMask{dir, true})
			return
		}
		for _, e := range entries {
			budget--
			p := filepath.Join(dir, e.Name())
			r := path.Join(rel, e.Name())
			info, err := e.Info()
			if err != nil {
				continue // gone meanwhile
			}
			mode := info.Mode()
			switch {
			case mode&fs.ModeSymlink != 0:
				// A link is only a name: its target, in /etc, is walked
				// there; elsewhere it is a system directory or not in
				// the sandbox at all.
			case mode.IsDir():
				switch {
				case mode.Perm()&0o005 != 0o005 || secretDir(r):
					masks = append(masks, sandboxMask{p, true})
				case budget <= 0 || depth >= etcMaxDepth:
					masks = append(masks, sandboxMask{p, true})
				default:
					walk(p, r, depth+1)
				}
			case mode.Perm()&0o004 == 0 || secretName(e.Name()):
				masks = append(masks, sandboxMask{p, false})
			}
		}
	}
	walk(dir, "", 0)
	return masks
}

func secretDir(rel string) bool {
	for _, d := range etcSecretDirs {
		if rel == d {
			return true
		}
	}
	return false
}

func secretName(name string) bool {
	for _, pat := range etcSecretNames {
		if ok, _ := path.Match(pat, name); ok {
			return true
		}
	}
	return false
}

// findBwrap returns the bwrap program of b and checks that it can make a
// sandbox here, with the options every command gets.
func findBwrap(b *Bubblewrap) (string, error) {
	path := b.Path
	if path == "" {
		path = "bwrap"
	}
	prog, err := exec.LookPath(path)
	if err != nil {
		return "", fmt.Errorf("%w: %v (install the package bubblewrap)", ErrNoSandbox, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), sandboxProbeTimeout)
	defer cancel()
	args := append([]string{"--unshare-all"}, sandboxUserArgs()...)
	args = append(args, "--die-with-parent", "--ro-bind", "/", "/", "--size", "4096", "--tmpfs", "/tmp", "true")
	probe := exec.CommandContext(ctx, prog, args...)
	probe.Env = []string{}
	if out, err := probe.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: %s does not run (it takes bubblewrap 0.8 or later, and user namespaces): %v: %s", ErrNoSandbox, prog, err, strings.TrimSpace(string(out)))
	}
	return prog, nil
}

// sandboxUserArgs make the command unprivileged whoever runs bwrap: a new
// user namespace even as root (bwrap would otherwise keep root and all
// its capabilities), the unprivileged SandboxUID and SandboxGID mapped to
// this process's own user and group, no capability even in the bounding
// set (so file capabilities grant nothing either), and no further user
// namespace, in which a command would hold capabilities again (and could
// mount a /proc of its own). bwrap always sets no_new_privs, so a
// set-user-ID program runs as its caller.
func sandboxUserArgs() []string {
	return []string{"--unshare-user", "--disable-userns",
		"--uid", strconv.Itoa(SandboxUID), "--gid", strconv.Itoa(SandboxGID), "--cap-drop", "ALL"}
}

// sandboxPlan is what a LocalShell computes once for all its sandboxed
// commands: the masks of /etc, the seccomp filter (nil where there is
// none for this architecture), and the sandbox's /etc/passwd and
// /etc/group (nil to keep the host's).
type sandboxPlan struct {
	masks         []sandboxMask
	seccomp       []byte
	passwd, group []byte
}

func newSandboxPlan() *sandboxPlan {
	p := &sandboxPlan{masks: etcMasks("/etc"), seccomp: seccompProgram()}
	p.passwd = withAccount("/etc/passwd", "agent:x:"+strconv.Itoa(SandboxUID)+":"+strconv.Itoa(SandboxGID)+":agent:"+SandboxHome+":/bin/sh", 2)
	p.group = withAccount("/etc/group", "agent:x:"+strconv.Itoa(SandboxGID)+":", 2)
	return p
}

// maxPassedFile bounds what is passed to bwrap through a pipe written
// before bwrap runs: a pipe holds 64 KiB.
const maxPassedFile = 60 << 10

// withAccount returns the host's account file (passwd or group) with the
// sandbox's account in place of any entry with the same ID (field idField,
// from 0) or name, so that the command's user has a name (whoami, git,
// ssh and Node's os.userInfo look it up); nil when the file cannot be
// read or is too large to pass, leaving the host's.
func withAccount(path, entry string, idField int) []byte {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > maxPassedFile-len(entry)-1 {
		return nil
	}
	want := strings.Split(entry, ":")
	var out []byte
	for _, line := range strings.SplitAfter(string(b), "\n") {
		f := strings.Split(strings.TrimRight(line, "\n"), ":")
		if len(f) > idField && (f[idField] == want[idField] || f[0] == want[0]) {
			continue
		}
		out = append(out, line...)
	}
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, entry+"\n"...)
}

// files returns the files bwrap reads from its descriptors 3 and up (the
// command's ExtraFiles, in order) and the arguments naming them: the
// seccomp filter, and the sandbox's passwd and group. The caller closes
// the files once bwrap has started.
func (p *sandboxPlan) files() ([]*os.File, []string, error) {
	if p == nil {
		return nil, nil, nil
	}
	var files []*os.File
	var args []string
	add := func(data []byte, opt ...string) error {
		if data == nil {
			return nil
		}
		f, err := pipeHolding(data)
		if err != nil {
			return err
		}
		args = append(args, opt[0], strconv.Itoa(3+len(files)))
		args = append(args, opt[1:]...)
		files = append(files, f)
		return nil
	}
	for _, x := range []struct {
		data []byte
		opt  []string
	}{
		{p.seccomp, []string{"--seccomp"}},
		{p.passwd, []string{"--ro-bind-data", "/etc/passwd"}},
		{p.group, []string{"--ro-bind-data", "/etc/group"}},
	} {
		if err := add(x.data, x.opt...); err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, nil, err
		}
	}
	return files, args, nil
}

// pipeHolding returns the read end of a pipe holding data (at most
// maxPassedFile bytes, which the pipe holds without a reader).
func pipeHolding(data []byte) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	_, err = w.Write(data)
	w.Close()
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// bwrapArgs returns the arguments of bwrap running shell -c command with
// root as working directory; binds are the protected and hidden mounts
// of this command (see guardProtected).
//
// fileArgs are the arguments of the files passed (sandboxPlan.files); they
// come after /etc is mounted, as they bind over its files.
//
// With nw, the command runs behind the network bridge (see
// Bubblewrap.Proxy).
func bwrapArgs(b *Bubblewrap, plan *sandboxPlan, root, shell, command string, env, binds, fileArgs []string, nw *sandboxNet) []string {
	args := []string{"--unshare-all", "--die-with-parent", "--new-session"}
	args = append(args, sandboxUserArgs()...)
	if b.Network {
		args = append(args, "--share-net")
	}
	for _, d := range sandboxSystemDirs {
		st, err := os.Lstat(d)
		switch {
		case err != nil:
		case st.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				args = append(args, "--symlink", target, d)
			}
		case st.IsDir():
			args = append(args, "--ro-bind", d, d)
		}
	}
	if plan != nil {
		for _, m := range plan.masks {
			args = append(args, maskArgs(m.path, m.dir)...)
		}
	}
	args = append(args, fileArgs...)
	for _, d := range b.ReadOnly {
		if d = filepath.Clean(d); filepath.IsAbs(d) {
			args = append(args, "--ro-bind-try", d, d)
		}
	}
	size := strconv.FormatInt(b.tmpfsSize(), 10)
	args = append(args, "--proc", "/proc")
	for _, p := range sandboxProcReadOnly {
		args = append(args, "--ro-bind-try", p, p)
	}
	// /dev is bwrap's own small tmpfs of device nodes; it is made
	// read-only so that only /dev/shm, sized, takes files.
	args = append(args, "--dev", "/dev", "--size", size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
		"--size", size, "--tmpfs", "/tmp", "--size", size, "--tmpfs", "/home")
	if b.Home != "" {
		args = append(args, "--bind", b.Home, SandboxHome)
	} else {
		args = append(args, "--dir", SandboxHome)
	}
	args = append(args, "--bind", root, root)
	args = append(args, binds...)
	for _, bd := range b.Binds {
		opt := "--ro-bind"
		if bd.Writable {
			opt = "--bind"
		}
		args = append(args, opt, bd.Host, bd.At)
	}
	if nw != nil {
		args = append(args, "--ro-bind", nw.dir, sandboxNetDir, "--ro-bind", nw.bridge, sandboxBridge)
		env = append(slices.Clip(env), netproxy.Env()...)
	}
	args = append(args, "--chdir", root, "--clearenv")
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			args = append(args, "--setenv", k, v)
		}
	}
	if nw != nil {
		return append(append(args, "--"), netproxy.BridgeCommand(sandboxBridge, path.Join(sandboxNetDir, netproxy.SocketName), shell, "-c", command)...)
	}
	return append(args, "--", shell, "-c", command)
}

// Where a command behind the network bridge finds its socket's folder and
// the bridge program.
const (
	sandboxNetDir = "/run/deepagents/net"
	sandboxBridge = "/run/deepagents/bridge"
)

// sandboxNet is one command's way to the proxy, as the host has it: its
// listener's folder and the bridge program.
type sandboxNet struct{ dir, bridge string }

// findBridge returns the program b runs as its proxy's bridge, as a real
// path (bwrap binds it).
func findBridge(b *Bubblewrap) (string, error) {
	exe := b.Bridge
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return "", fmt.Errorf("%w: the network bridge: %v", ErrNoSandbox, err)
		}
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return "", fmt.Errorf("%w: the network bridge: %v", ErrNoSandbox, err)
	}
	return real, nil
}

// maskArgs hides p inside the sandbox: a directory under an empty
// read-only tmpfs, anything else under /dev/null bound read-only.
func maskArgs(p string, dir bool) []string {
	if dir {
		return []string{"--size", "4096", "--tmpfs", p, "--remount-ro", p}
	}
	return []string{"--ro-bind", "/dev/null", p}
}

// sandboxAttr starts bwrap in a process group of its own, killed if this
// process dies (bwrap's --die-with-parent then ends the sandbox).
func sandboxAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func unixAccessW(dir string) bool { return syscall.Access(dir, 2 /* W_OK */) == nil }

// warnForeignOwner says so when this process is root and the workspace
// belongs to another user (a checkout mounted into a container, say): the
// sandbox's commands run as root's uid without any capability, so file
// modes apply to them and they cannot change that user's files.
func warnForeignOwner(root string) {
	if os.Geteuid() != 0 {
		return
	}
	st, err := os.Stat(root)
	if err != nil {
		return
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Uid != 0 {
		slog.Warn("execute: the workspace belongs to another user and sandboxed commands have no capabilities, so they cannot change files that user alone may write; run deepagents as that user", "workspace", root, "uid", sys.Uid)
	}
}
