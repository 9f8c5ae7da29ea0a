package session

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// systemTrees are the folders whose contents the system runs or reads as
// configuration: a workspace in one of them would let the agent's files,
// and with a shell the sandbox (which makes the workspace writable), plant
// what the host later runs, as root when the session is root's (a file in
// /usr/local/bin, /etc/cron.d, /etc/profile.d, a Python package's folder).
// Every folder at or below one is refused as a workspace.
var systemTrees = []string{"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot",
	"/var/lib", "/var/spool", "/var/cache", "/proc", "/sys", "/dev", "/run", "/snap",
	// macOS's: /etc is /private/etc there.
	"/private/etc", "/private/var/db", "/private/var/root", "/System", "/Library", "/Applications"}

// homeNever are the trees a home in which does not make the folders below
// it the user's: a system account's home (daemon's /usr/sbin) is the
// system's still.
var homeNever = []string{"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/proc",
	"/sys", "/dev", "/private/etc", "/System"}

// projectTrees are folders below systemTrees that nothing runs from,
// where projects are kept by convention (/usr/src/app, the WORKDIR of many
// container images) or scratch ones made (/dev/shm, a folder in memory).
var projectTrees = []string{"/usr/src", "/usr/local/src", "/dev/shm"}

// systemRoots are folders refused as a workspace themselves, the projects
// below them allowed (/opt/app, /var/www/site, /srv/site).
var systemRoots = []string{"/", "/opt", "/var", "/srv", "/home"}

// SystemDirFlag is the flag that accepts a system folder as the workspace.
const SystemDirFlag = "allow-system-dir"

// checkWorkspaceDir refuses a workspace that is a system folder (dir is
// absolute, its links resolved), unless allowed. The user's home (home,
// "" for none) and what is below it are the user's, wherever the home is
// (a service's home is often in /var/lib).
func checkWorkspaceDir(dir, home string, allowed bool) error {
	if allowed || dir == "" {
		return nil
	}
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("the workspace %q is not an absolute path", dir)
	}
	dir = filepath.Clean(dir)
	if home = filepath.Clean(home); home != "." && filepath.IsAbs(home) && home != "/" && under(dir, home) &&
		!slices.ContainsFunc(homeNever, func(d string) bool { return under(home, d) }) {
		return nil
	}
	for _, d := range systemRoots {
		if dir == d {
			return fmt.Errorf("the workspace %s is a system folder, not a project: the agent could change what the system reads or runs there; use a project's folder (--%s if you mean it)", dir, SystemDirFlag)
		}
	}
	for _, s := range projectTrees {
		if under(dir, s) && dir != s {
			return nil
		}
	}
	for _, d := range systemTrees {
		if under(dir, d) {
			return fmt.Errorf("the workspace %s is in %s, the system's: a file the agent wrote there could run later as whoever runs the system's programs (root too); use a project's folder (--%s if you mean it)", dir, d, SystemDirFlag)
		}
	}
	return nil
}

// under reports whether the clean path p is dir or below it; without
// regard to case on macOS, whose file systems ignore it (/USR/local/bin is
// /usr/local/bin).
func under(p, dir string) bool {
	if runtime.GOOS == "darwin" {
		p, dir = strings.ToLower(p), strings.ToLower(dir)
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
