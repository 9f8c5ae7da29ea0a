package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/permission"
	"github.com/deepagents-go/deepagents/persist"
)

// startupFiles are the files and folders below the home directory whose
// contents run, as the user and outside any sandbox, when the user logs
// in, opens a shell or an editor, or runs git, ssh, python, cargo, gradle,
// npm, docker, kubectl or the AWS CLI: a model that could write them
// would run code later with all of the user's rights. The file tools keep
// them read-only whatever the workspace, and so does the sandbox.
var startupFiles = []string{
	// shells and sessions
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".profile",
	".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout",
	".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".login", ".logout",
	".config/fish", ".pam_environment", ".xprofile", ".xsessionrc", ".xinitrc",
	".config/autostart", ".config/systemd/user", ".config/environment.d",
	".direnvrc", ".config/direnv",
	// programs on PATH, and Python's user site-packages (its .pth files
	// run at every python start)
	".local/bin", ".local/lib",
	// git and ssh
	".config/git", ".gitconfig", ".ssh",
	// editors and terminals
	".vimrc", ".vim", ".config/nvim", ".emacs", ".emacs.d", ".tmux.conf", ".config/tmux",
	// tools whose configuration names programs to run
	".cargo/config", ".cargo/config.toml", ".gradle/init.d", ".gradle/init.gradle",
	".gradle/gradle.properties", ".npmrc", ".yarnrc", ".yarnrc.yml", ".ipython", ".pythonrc",
	".docker/config.json", ".kube/config", ".aws/config", ".m2/settings.xml",
}

// homeDir is the user's home directory: HOME, else the system's idea of
// it; "" when there is none.
func homeDir(env Env) string {
	if h := env.Getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// xdgConfigDir is $XDG_CONFIG_HOME, by default ~/.config; "" without a home.
func xdgConfigDir(env Env) string {
	if x := env.Getenv("XDG_CONFIG_HOME"); x != "" {
		return x
	}
	if h := homeDir(env); h != "" {
		return filepath.Join(h, ".config")
	}
	return ""
}

// hostProtection is what the file tools and the sandbox keep from the
// model by host path, whatever the workspace is: the user's configuration
// and shell start-up files read-only, the files that hold keys (and the
// database, which holds every thread) unreadable.
type hostProtection struct {
	readOnly, unreadable []string
}

// protectHost gathers the host paths of the user's configuration for a
// run with flags f on db.
func protectHost(env Env, f *runFlags, db *persist.DB) hostProtection {
	var h hostProtection
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	addRO := func(p string) {
		if p != "" && !slices.Contains(h.readOnly, abs(p)) {
			h.readOnly = append(h.readOnly, abs(p))
		}
	}
	addHidden := func(p string) {
		if p != "" && !slices.Contains(h.unreadable, abs(p)) {
			h.unreadable = append(h.unreadable, abs(p))
		}
	}
	user := userDir(env)
	xdg := ""
	if x := xdgConfigDir(env); x != "" {
		xdg = filepath.Join(x, "deepagents")
	}
	home := homeDir(env)
	dirs := []string{user, xdg}
	if home != "" {
		// ~/.deepagents too when DEEPAGENTS_HOME names another folder: a
		// later run without it reads this one.
		dirs = append(dirs, filepath.Join(home, ".deepagents"))
	}
	for _, d := range dirs {
		addRO(d)
	}
	if home != "" {
		for _, p := range startupFiles {
			addRO(filepath.Join(home, filepath.FromSlash(p)))
		}
	}
	if x := env.Getenv("XDG_CONFIG_HOME"); x != "" {
		addRO(filepath.Join(x, "fish"))
		addRO(filepath.Join(x, "git"))
	}
	if z := env.Getenv("ZDOTDIR"); z != "" {
		for _, p := range []string{".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout"} {
			addRO(filepath.Join(z, p))
		}
	}
	// The files the CLI reads keys from: its configuration (wherever
	// userConfigPath may find it), MCP configurations, and remote
	// subagents' files (their headers).
	for _, dir := range dirs {
		if dir != "" {
			addHidden(filepath.Join(dir, configFile))
			addHidden(filepath.Join(dir, userMCPFile))
		}
	}
	for _, p := range f.mcpConfigs {
		addHidden(p)
	}
	if user != "" {
		paths, _ := filepath.Glob(filepath.Join(user, "agents", "*.md"))
		for _, p := range paths {
			if af, err := parseAgentFile(p, env.Getenv); err == nil && af.remote {
				addHidden(p)
			}
		}
	}
	// The database holds every thread of every workspace, and the
	// settings each thread runs with.
	if db != nil && db.Kind == persist.KindSQLite {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal", ".history"} {
			addHidden(db.Location + suffix)
		}
	}
	return h
}

// protectedPaths returns the workspace paths that ask before a file tool
// writes them and are read-only in the sandbox: --protected-paths, else
// the user's configuration's protected_paths, else
// backend.ProtectedPaths, with those of the workspace's configuration
// added (a workspace may protect more, never less).
func protectedPaths(env Env, f *runFlags) ([]string, error) {
	var list []string
	switch {
	case f.given != nil && f.given("protected-paths"):
		if strings.TrimSpace(f.protected) != "none" {
			list = splitList(f.protected)
		}
	default:
		list = slices.Clone(backend.ProtectedPaths)
		if path := userConfigPath(env); path != "" {
			c, err := f.config(path)
			if err != nil {
				return nil, usageError{err}
			}
			if c.ProtectedPaths != nil {
				list = slices.Clone(*c.ProtectedPaths)
			}
		}
	}
	path := filepath.Join(f.dir, ".deepagents", configFile)
	c, err := f.config(path)
	if err != nil {
		return nil, usageError{err}
	}
	if c.ProtectedPaths != nil {
		list = append(list, *c.ProtectedPaths...)
	}
	var out []string
	for _, p := range list {
		p = strings.Trim(filepath.ToSlash(strings.TrimSpace(p)), "/")
		if p == "" {
			continue
		}
		if !filepath.IsLocal(filepath.FromSlash(p)) {
			return nil, usageError{fmt.Errorf("protected path %q: want a path relative to the workspace, such as .git/hooks", p)}
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// protectedRules are the ask rules of the protected paths: write_file and
// edit_file ask before they change one, at any depth of the workspace.
func protectedRules(paths []string) ([]permission.Rule, error) {
	var rules []permission.Rule
	for _, p := range paths {
		for _, t := range []string{"write_file", "edit_file"} {
			r, err := permission.ParseRule(permission.Ask, t+"(/**/"+p+")")
			if err != nil {
				return nil, usageError{fmt.Errorf("protected path %q: %w", p, err)}
			}
			rules = append(rules, r)
		}
	}
	return rules, nil
}
