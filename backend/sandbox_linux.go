package backend

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// sandboxSystemDirs are the host's system directories, mounted read-only
// (or, when they are symbolic links as on merged-/usr systems, recreated as
// the same links).
var sandboxSystemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}

// sandboxMasked are files of /etc a command must not read even as root:
// they are replaced by empty ones.
var sandboxMasked = []string{"/etc/shadow", "/etc/gshadow", "/etc/sudoers"}

// findBwrap returns the bwrap program of b and checks that it can make a
// sandbox here.
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
	probe := exec.CommandContext(ctx, prog, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true")
	probe.Env = []string{}
	if out, err := probe.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: %s does not run: %v: %s", ErrNoSandbox, prog, err, strings.TrimSpace(string(out)))
	}
	return prog, nil
}

// bwrapArgs returns the arguments of bwrap running shell -c command with
// root as working directory.
func bwrapArgs(b *Bubblewrap, root, shell, command string, env []string) []string {
	args := []string{"--unshare-all", "--die-with-parent", "--new-session"}
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
	for _, f := range sandboxMasked {
		if st, err := os.Lstat(f); err == nil && st.Mode().IsRegular() {
			args = append(args, "--ro-bind", "/dev/null", f)
		}
	}
	for _, d := range b.ReadOnly {
		if d = filepath.Clean(d); filepath.IsAbs(d) {
			args = append(args, "--ro-bind-try", d, d)
		}
	}
	args = append(args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/home")
	if b.Home != "" {
		args = append(args, "--bind", b.Home, SandboxHome)
	} else {
		args = append(args, "--dir", SandboxHome)
	}
	args = append(args, "--bind", root, root, "--chdir", root, "--clearenv")
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			args = append(args, "--setenv", k, v)
		}
	}
	return append(args, "--", shell, "-c", command)
}

// sandboxAttr starts bwrap in a process group of its own, killed if this
// process dies (bwrap's --die-with-parent then ends the sandbox).
func sandboxAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func unixAccessW(dir string) bool { return syscall.Access(dir, 2 /* W_OK */) == nil }
