package session

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/middleware/filesystem"
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
	// other agents' folders: their settings run hooks, their skills,
	// subagents and commands instruct this agent and theirs
	".claude", ".agents", ".codex",
}

// agentKeyFiles are the files below the home directory where other agents
// keep their keys (Claude Code's and Codex's sign-ins, and ~/.claude.json,
// whose MCP servers carry tokens): the file tools and the sandbox never
// read or write them.
var agentKeyFiles = []string{".claude/.credentials.json", ".claude.json", ".codex/auth.json"}

// protectHost gathers the host paths of the user's configuration that
// the file tools and the sandbox keep from the model whatever the
// workspace is: the user's configuration and shell start-up files
// read-only; the files that hold keys, and the database, which holds
// every thread, unreadable.
func (r *resolver) protectHost() (readOnly, unreadable []string) {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	addRO := func(p string) {
		if p != "" && !slices.Contains(readOnly, abs(p)) {
			readOnly = append(readOnly, abs(p))
		}
	}
	addHidden := func(p string) {
		if p != "" && !slices.Contains(unreadable, abs(p)) {
			unreadable = append(unreadable, abs(p))
		}
	}
	pl := r.in.Places
	user := pl.UserDir
	xdg := ""
	if pl.ConfigHome != "" {
		xdg = filepath.Join(pl.ConfigHome, "deepagents")
	}
	home := pl.Home
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
	if x := r.getenv("XDG_CONFIG_HOME"); x != "" {
		addRO(filepath.Join(x, "fish"))
		addRO(filepath.Join(x, "git"))
	}
	if z := r.getenv("ZDOTDIR"); z != "" {
		for _, p := range []string{".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout"} {
			addRO(filepath.Join(z, p))
		}
	}
	// The files the CLI reads keys from: its configuration (wherever
	// Locate may find it), MCP configurations, and remote subagents'
	// files (their headers).
	for _, dir := range dirs {
		if dir != "" {
			addHidden(filepath.Join(dir, configFile))
			addHidden(filepath.Join(dir, userMCPFile))
		}
	}
	for _, p := range r.f.MCPConfigs {
		addHidden(p)
	}
	if home != "" {
		for _, p := range agentKeyFiles {
			addHidden(filepath.Join(home, filepath.FromSlash(p)))
		}
	}
	for _, a := range r.userAgents() {
		if a.err == nil && a.af.remote {
			addHidden(a.path)
		}
	}
	// The database holds every thread of every workspace, and the
	// settings each thread runs with.
	if db := r.in.DB; db != nil && db.Kind == persist.KindSQLite {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal", ".history"} {
			addHidden(db.Location + suffix)
		}
	}
	return readOnly, unreadable
}

// protectedPaths returns the workspace paths that ask before a file tool
// writes them and are read-only in the sandbox: --protected-paths, else
// the user's configuration's protected_paths, else
// backend.ProtectedPaths, with those of the workspace's configuration
// added (a workspace may protect more, never less).
func (r *resolver) protectedPaths() ([]string, error) {
	var list []string
	switch {
	case r.given("protected-paths"):
		if strings.TrimSpace(r.f.ProtectedPaths) != "none" {
			list = splitList(r.f.ProtectedPaths)
		}
	default:
		list = slices.Clone(backend.ProtectedPaths)
		if path := r.in.Places.Config; path != "" {
			c, err := r.config(path)
			if err != nil {
				return nil, UsageError{err}
			}
			if c.ProtectedPaths != nil {
				list = slices.Clone(*c.ProtectedPaths)
			}
		}
	}
	c, err := r.config(r.workspaceConfig())
	if err != nil {
		return nil, UsageError{err}
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
			return nil, UsageError{fmt.Errorf("protected path %q: want a path relative to the workspace, such as .git/hooks", p)}
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
		for _, t := range []string{filesystem.WriteFileTool, filesystem.EditFileTool} {
			r, err := permission.ParseRule(permission.Ask, t+"(/**/"+p+")")
			if err != nil {
				return nil, UsageError{fmt.Errorf("protected path %q: %w", p, err)}
			}
			rules = append(rules, r)
		}
	}
	return rules, nil
}
