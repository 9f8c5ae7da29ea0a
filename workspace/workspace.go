package workspace

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/sandbox"
	"github.com/deepagents-go/deepagents/permission"
	"github.com/deepagents-go/deepagents/store"
)

// Routes of the agent's filesystem besides the workspace at "/".
const (
	// UserRoute shows Config.UserDir, read-only: the user's own memory
	// (AGENTS.md) and skills.
	UserRoute = "/user/"
	// MemoriesRoute is long-term memory in Config.Store, shared by every
	// thread.
	MemoriesRoute = "/memories/"
	// HistoryRoute holds the conversation histories summarization keeps,
	// each run seeing its own thread's.
	HistoryRoute = "/conversation_history/"
	// LargeResultsRoute holds the tool results too large for the
	// conversation, in the thread's state.
	LargeResultsRoute = "/large_tool_results/"
)

// Config says where an agent's files are and what it may not touch.
type Config struct {
	// Dir is the folder the agent works in, at "/". Empty keeps the
	// workspace in each thread's state instead (nothing on disk), as
	// deepagents serve does without --dir.
	Dir string
	// Shell gives the agent the execute tool: commands run in Dir (which
	// it needs), isolated by Sandbox.
	Shell bool
	// Sandbox isolates the shell's commands; nil runs them as this
	// process's user, unisolated. Open adds ReadOnly to a copy's
	// Protected, Unreadable to its Hidden and the paths Rules deny
	// read_file to its HiddenGlobs.
	Sandbox *sandbox.Bubblewrap
	// UserDir is the user's own folder, shown read-only at /user/ (and
	// created when missing); empty shows none.
	UserDir string
	// Home is the user's home: with a UserDir, the folders other agents
	// keep there (~/.agents/skills, and of ~/.claude its CLAUDE.md and
	// skills only) are shown read-only under /user/ with the names they
	// have in the home, and their skills and memory are the agent's. Empty
	// shows none.
	Home string
	// OtherAgents reads the files of other agents that Dir holds: the
	// skills of its OtherSkillDirs, and its CLAUDE.md (Claude Code's
	// AGENTS.md) after its AGENTS.md. They are the workspace author's
	// words, as AGENTS.md is; the CLI reads them with --trust-workspace.
	OtherAgents bool
	// HistoryDir keeps /conversation_history/ on disk, a folder per
	// top-level thread; empty keeps it in each thread's state.
	HistoryDir string
	// Store holds /memories/; nil leaves the route out.
	Store store.Store
	// ReadOnly are host paths no file tool and no command may change, and
	// Unreadable host paths none may read, whatever Dir and UserDir are
	// (the user's configuration and shell start-up files; the files that
	// hold keys).
	ReadOnly, Unreadable []string
	// Rules are the agent's permission rules: the paths they deny
	// read_file are left out of every listing, glob and grep too, and
	// hidden from the sandbox's commands. Nil denies nothing.
	Rules *permission.Rules
	// Buffers, when either of its functions is set, are an editor's: the
	// text files of Dir are read (read_file) and written (write_file,
	// edit_file) through them, each path checked as the disk's first (see
	// backend.Buffered), so that the agent sees the editor's unsaved
	// changes and its edits go through the editor. Listings, globs,
	// greps, commands, the other routes and files that are not text stay
	// on disk. Ignored without a Dir.
	Buffers backend.Buffers
}

// OtherSkillDirs are the skill folders of other agents, relative to the
// workspace (and, as homeFolders has them, to the user's home), read
// besides this agent's own: the .agents convention's and Claude Code's.
// The agent's own folder (skills/ in the user's folder, .deepagents/skills/
// in the workspace) comes last, so that its skills win a name they share.
var OtherSkillDirs = []string{".agents/skills", ".claude/skills"}

// Workspace is what Open opened: give its Backend, Memory, Skills and
// Middleware to the deep agent (deepagents.Config), and Close it after
// the agent.
type Workspace struct {
	// Backend is the agent's filesystem: a backend.Sandbox when
	// Config.Shell is set.
	Backend backend.Backend
	// Memory are the AGENTS.md files the agent loads: the user's
	// (/user/AGENTS.md, with a UserDir, and Claude Code's
	// ~/.claude/CLAUDE.md at /user/.claude/CLAUDE.md when there is one),
	// then the workspace's (and its CLAUDE.md, with Config.OtherAgents,
	// when it has one).
	Memory []string
	// Skills are the skill folders: the user's (those of OtherSkillDirs
	// in the home, at /user/.agents/skills/ and /user/.claude/skills/,
	// then /user/skills/), then the workspace's (/.agents/skills/ and
	// /.claude/skills/ with Config.OtherAgents, then /.deepagents/skills/).
	Skills []string
	// Middleware pins each run's conversation history, and that of the
	// runs it starts (subagents, background tasks), to its thread.
	Middleware []agent.Middleware

	closeShell   func()
	dir, userDir string // the host folders at / and UserRoute
	// homeRoutes are the folders of the home shown under UserRoute.
	homeRoutes []homeRoute
}

// homeRoute is a folder of the user's home shown at an agent's path.
type homeRoute struct{ route, host string }

// HostPath returns the host's path of a path as the agent sees it: a file
// of the workspace folder, or of the user's folder (/user/); false for
// the routes kept elsewhere (/memories/, /large_tool_results/,
// /conversation_history/) and for a workspace kept in the thread's state.
// Hooks in Claude Code's dialect (package hooks) get paths so.
func (w *Workspace) HostPath(p string) (string, bool) {
	if !strings.HasPrefix(p, "/") || strings.Contains(p, "\x00") {
		return "", false
	}
	p = path.Clean(p)
	for _, r := range []string{MemoriesRoute, LargeResultsRoute, HistoryRoute} {
		if p+"/" == r || strings.HasPrefix(p, r) {
			return "", false
		}
	}
	for _, r := range w.homeRoutes {
		if p+"/" == r.route || strings.HasPrefix(p, r.route) {
			return filepath.Join(r.host, filepath.FromSlash(strings.TrimPrefix(p+"/", r.route))), true
		}
	}
	if p+"/" == UserRoute || strings.HasPrefix(p, UserRoute) {
		if w.userDir == "" {
			return "", false
		}
		return filepath.Join(w.userDir, filepath.FromSlash(strings.TrimPrefix(p, strings.TrimSuffix(UserRoute, "/")))), true
	}
	if w.dir == "" {
		return "", false
	}
	return filepath.Join(w.dir, filepath.FromSlash(p)), true
}

// AgentPath is HostPath's inverse: the agent's path of a host path in the
// workspace folder or the user's; false for any other.
func (w *Workspace) AgentPath(host string) (string, bool) {
	if !filepath.IsAbs(host) {
		return "", false
	}
	host = filepath.Clean(host)
	for _, r := range w.homeRoutes {
		if rel, err := filepath.Rel(r.host, host); err == nil && (rel == "." || filepath.IsLocal(rel)) {
			return path.Join(r.route, filepath.ToSlash(rel)), true
		}
	}
	if w.userDir != "" {
		if rel, err := filepath.Rel(w.userDir, host); err == nil && filepath.IsLocal(rel) {
			return path.Join(UserRoute, filepath.ToSlash(rel)), true
		}
	}
	if w.dir != "" {
		if rel, err := filepath.Rel(w.dir, host); err == nil && (rel == "." || filepath.IsLocal(rel)) {
			return path.Join("/", filepath.ToSlash(rel)), true
		}
	}
	return "", false
}

// Close stops the shell's commands, if any. Close the agent first: its
// background subagents may still be running commands.
func (w *Workspace) Close() error {
	w.closeShell()
	return nil
}

// Open opens the files cfg describes. An error about the workspace folder
// or its shell matches ErrDir (and sandbox.ErrNoSandbox when bubblewrap is
// missing), one about the rules ErrReadRules, so that a caller can say
// which of its settings is wrong.
func Open(cfg Config) (*Workspace, error) {
	w := &Workspace{closeShell: func() {}}
	if cfg.Dir != "" {
		w.dir, _ = filepath.Abs(cfg.Dir)
	}
	fsOpts := backend.FilesystemOptions{ReadOnly: cfg.ReadOnly, Unreadable: cfg.Unreadable}
	// Scratch files live in the thread's state, under their full paths.
	state := backend.NewStateBackend(nil)
	var ws backend.Backend
	var err error
	switch {
	case cfg.Dir == "":
		ws = state
	case cfg.Shell:
		opts := sandbox.LocalShellOptions{Filesystem: fsOpts}
		if cfg.Sandbox != nil {
			sb := *cfg.Sandbox
			sb.Protected = append(append([]string(nil), sb.Protected...), cfg.ReadOnly...)
			sb.Hidden = append(append([]string(nil), sb.Hidden...), cfg.Unreadable...)
			// What read_file may not read, cat may not either.
			sb.HiddenGlobs = append(append([]string(nil), sb.HiddenGlobs...), cfg.Rules.DeniedReadPaths()...)
			opts.Sandbox = &sb
		}
		var shell *sandbox.LocalShell
		if shell, err = sandbox.NewLocalShell(cfg.Dir, opts); err == nil {
			w.closeShell = func() { shell.Close() }
			ws = shell
		}
	default:
		ws, err = backend.NewFilesystemBackend(cfg.Dir, fsOpts)
	}
	if err != nil {
		return nil, dirError{err}
	}
	fail := func(err error) (*Workspace, error) {
		w.closeShell()
		return nil, err
	}
	if cfg.Dir != "" {
		// The editor's buffers in front of the disk for one file's text;
		// the disk itself when there are none.
		if ws, err = backend.NewBuffered(ws, cfg.Buffers); err != nil {
			return fail(err)
		}
	}
	history, err := historyBackend(cfg.HistoryDir, state)
	if err != nil {
		return fail(err)
	}
	routes := map[string]backend.Backend{
		LargeResultsRoute: backend.Under("/large_tool_results", state),
		HistoryRoute:      history,
	}
	if cfg.Store != nil {
		routes[MemoriesRoute] = backend.NewStoreBackend(cfg.Store, nil)
	}
	if cfg.UserDir != "" {
		// A folder that cannot be made or opened is left out: the agent
		// runs without the user's files rather than not at all.
		if err := os.MkdirAll(cfg.UserDir, 0o755); err == nil {
			if ub, err := backend.NewFilesystemBackend(cfg.UserDir, fsOpts); err == nil {
				// The user's own memory, skills and subagents shape every
				// later run in every workspace: the model may read them but
				// not plant instructions there.
				ro, err := backend.NewPolicy(ub, backend.Deny(backend.AccessWrite, "/"))
				if err != nil {
					return fail(err)
				}
				routes[UserRoute] = ro
			}
		}
		w.userDir, _ = filepath.Abs(cfg.UserDir)
		w.Memory = append(w.Memory, UserRoute+"AGENTS.md")
		if err := w.homeSkills(cfg.Home, fsOpts, routes); err != nil {
			return fail(err)
		}
		w.Skills = append(w.Skills, UserRoute+"skills/")
	}
	w.Memory = append(w.Memory, "/AGENTS.md")
	if cfg.OtherAgents && w.dir != "" {
		// Listed only when there, so that the memory's guidance names
		// no file the workspace does not have; a link (to AGENTS.md, as
		// often) is not read through, as the file tools read none.
		if isFile(filepath.Join(w.dir, "CLAUDE.md")) {
			w.Memory = append(w.Memory, "/CLAUDE.md")
		}
		for _, d := range OtherSkillDirs {
			w.Skills = append(w.Skills, "/"+d+"/")
		}
	}
	w.Skills = append(w.Skills, "/.deepagents/skills/")
	b, err := backend.NewComposite(ws, routes)
	if err != nil {
		return fail(err)
	}
	if w.Backend, err = withReadRules(b, cfg.Rules); err != nil {
		return fail(err)
	}
	// Each run sees its own thread's conversation history only.
	w.Middleware = []agent.Middleware{historyScope{}}
	return w, nil
}

// homeFolders are the folders other agents keep in the user's home that
// are shown under UserRoute with the names they have there, read-only:
// dir, relative to the home; reads, when set, the only paths of it the
// agent may read (Claude Code's folder holds its sign-in and settings
// besides what instructs it); skills and memory, the folder of skills and
// the memory file in it, "" for none.
var homeFolders = []struct {
	dir            string
	reads          []string
	skills, memory string
}{
	{dir: ".agents/skills", skills: "/"},
	{dir: ".claude", reads: []string{"/CLAUDE.md", "/skills"}, skills: "/skills/", memory: "/CLAUDE.md"},
	{dir: ".codex", reads: []string{"/AGENTS.md"}, memory: "/AGENTS.md"}, // Codex's global instructions
}

// homeSkills shows the folders of homeFolders that exist in home,
// read-only, under UserRoute, and adds their skills and memory.
func (w *Workspace) homeSkills(home string, opts backend.FilesystemOptions, routes map[string]backend.Backend) error {
	if home == "" {
		return nil
	}
	for _, f := range homeFolders {
		host, _ := filepath.Abs(filepath.Join(home, filepath.FromSlash(f.dir)))
		if st, err := os.Stat(host); err != nil || !st.IsDir() {
			continue
		}
		fb, err := backend.NewFilesystemBackend(host, opts)
		if err != nil {
			continue // unreadable: the agent runs without it
		}
		rules := []backend.Rule{backend.Deny(backend.AccessWrite, "/")}
		if f.reads != nil {
			for _, r := range f.reads {
				rules = append(rules, backend.Allow(backend.AccessRead, r))
			}
			rules = append(rules, backend.Deny(backend.AccessRead, "/"))
		}
		ro, err := backend.NewPolicy(fb, rules...)
		if err != nil {
			return err
		}
		route := UserRoute + f.dir + "/"
		routes[route] = ro
		w.homeRoutes = append(w.homeRoutes, homeRoute{route, host})
		if f.memory != "" {
			if isFile(filepath.Join(host, filepath.FromSlash(f.memory))) {
				w.Memory = append(w.Memory, strings.TrimSuffix(route, "/")+f.memory)
			}
		}
		if f.skills != "" {
			if st, err := os.Stat(filepath.Join(host, filepath.FromSlash(f.skills))); err == nil && st.IsDir() {
				w.Skills = append(w.Skills, strings.TrimSuffix(route, "/")+f.skills)
			}
		}
	}
	return nil
}

// isFile reports whether path is a regular file, not a link: the file
// tools read no link, so a memory file that is one is not listed.
func isFile(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode().IsRegular()
}

// historyBackend holds /conversation_history/: files in dir, appended to
// on disk so that a long run's history costs neither memory nor checkpoint
// space, in a folder per thread (see threadHistory); the thread's state
// when dir is empty, which is the thread's own already.
func historyBackend(dir string, state backend.Backend) (backend.Backend, error) {
	if dir == "" {
		return backend.Under("/conversation_history", state), nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("conversation history: %w", err)
	}
	b, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{})
	if err != nil {
		return nil, fmt.Errorf("conversation history: %w", err)
	}
	return newThreadHistory(dir, b), nil
}

// ErrDir reports that the workspace folder (Config.Dir) could not be
// opened, or given a shell. The error's text is the backend's, which names
// the folder.
var ErrDir = errors.New("workspace folder")

// dirError is an error about the workspace folder: it matches ErrDir and
// reads as the backend's error.
type dirError struct{ err error }

func (e dirError) Error() string   { return e.err.Error() }
func (e dirError) Unwrap() []error { return []error{ErrDir, e.err} }

// ErrReadRules reports permission rules (Config.Rules) whose denied read
// paths a backend policy cannot hold: the caller's configuration is wrong.
var ErrReadRules = errors.New("read rules")
