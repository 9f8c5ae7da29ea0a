package session

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deepagents-go/deepagents/hooks"
)

// Claude Code's settings files: ~/.claude/settings.json for the user, and
// in a workspace .claude/settings.json (shared with the repository) and
// .claude/settings.local.json (the user's own, not committed).
var (
	claudeUserSettings      = filepath.Join(".claude", "settings.json")
	claudeWorkspaceSettings = []string{filepath.Join(".claude", "settings.json"), filepath.Join(".claude", "settings.local.json")}
)

// deepagentsHooks is the hooks file of deepagents' Python CLI, in
// ~/.deepagents and a workspace's .deepagents: Claude Code's format and
// tool names, read as Claude Code's settings are.
const deepagentsHooks = "hooks.json"

// hookSource is a file that may hold hooks, and the dialect they speak.
type hookSource struct {
	path    string
	dialect hooks.Dialect
	// yaml: the CLI's config.yaml (its hooks: key), else a Claude Code
	// settings file.
	yaml bool
	// root is a plugin's folder, which its hooks name as
	// ${CLAUDE_PLUGIN_ROOT}; "" for a file of no plugin.
	root string
}

// hooks gathers the hooks to run: those of the user's config.yaml (the
// agent's tool names), ~/.deepagents/hooks.json and
// ~/.claude/settings.json (Claude Code's), and, with --trust-workspace,
// those of the workspace's .deepagents/config.yaml,
// .deepagents/hooks.json, .claude/settings.json and
// .claude/settings.local.json. A workspace's
// files come with the repository the agent works on and name commands to
// run, so without the flag a note says what they would run, as for its
// .mcp.json. What a file holds that does not run here (an event this
// agent does not have, a handler of another type than hooks.HandlerTypes)
// is a note; a file
// that cannot be read, or a hook that is wrong (no command, a matcher
// that does not compile), a usage error naming the file.
//
// An assistant of serve's file reads none of the operator's files, so it
// has no hooks.
func (r *resolver) hooks() ([]hooks.Hook, error) {
	if r.in.Assistant != nil {
		return nil, nil
	}
	var user []hookSource
	if p := r.in.Places.Config; p != "" {
		user = append(user,
			hookSource{path: p, dialect: hooks.DialectAgent, yaml: true},
			hookSource{path: filepath.Join(filepath.Dir(p), deepagentsHooks), dialect: hooks.DialectClaude})
	}
	if h := r.in.Places.Home; h != "" {
		user = append(user, hookSource{path: filepath.Join(h, claudeUserSettings), dialect: hooks.DialectClaude})
	}
	for _, p := range r.plugins() {
		user = append(user, hookSource{path: filepath.Join(p.Dir, "hooks", "hooks.json"), dialect: hooks.DialectClaude, root: p.Dir})
	}
	workspace := []hookSource{
		{path: r.workspaceConfig(), dialect: hooks.DialectAgent, yaml: true},
		{path: filepath.Join(filepath.Dir(r.workspaceConfig()), deepagentsHooks), dialect: hooks.DialectClaude},
	}
	for _, p := range claudeWorkspaceSettings {
		workspace = append(workspace, hookSource{path: filepath.Join(r.f.Dir, p), dialect: hooks.DialectClaude})
	}
	var out []hooks.Hook
	read := map[string]bool{}
	for _, s := range user {
		read[s.path] = true
		hs, err := r.hooksOf(s)
		if err != nil {
			return nil, err
		}
		out = append(out, hs...)
	}
	var untrusted []string
	for _, s := range workspace {
		if read[s.path] {
			continue // the workspace is the user's home: these are the user's
		}
		read[s.path] = true
		if !r.f.TrustWorkspace {
			if n, err := r.countHooks(s); err == nil && n > 0 {
				untrusted = append(untrusted, s.path)
			}
			continue
		}
		hs, err := r.hooksOf(s)
		if err != nil {
			return nil, err
		}
		out = append(out, hs...)
	}
	if len(untrusted) > 0 {
		r.note("note: %s %s hooks; they run commands from the workspace, so they run only with --trust-workspace",
			strings.Join(untrusted, " and "), map[bool]string{true: "name", false: "names"}[len(untrusted) > 1])
	}
	return out, nil
}

// settingsOf returns the hooks object of s; nil when the file is absent
// or has none.
func (r *resolver) settingsOf(s hookSource) (hooks.Settings, error) {
	if s.yaml {
		c, err := r.config(s.path)
		if err != nil {
			return nil, UsageError{err}
		}
		return c.Hooks, nil
	}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, UsageError{fmt.Errorf("hooks: %w", err)}
	}
	set, err := hooks.ReadClaudeSettings(data)
	if err != nil {
		return nil, UsageError{fmt.Errorf("%s: %w", s.path, err)}
	}
	return set, nil
}

// countHooks counts the hooks s names, of any event or type.
func (r *resolver) countHooks(s hookSource) (int, error) {
	set, err := r.settingsOf(s)
	n := 0
	for _, groups := range set {
		for _, g := range groups {
			n += len(g.Hooks)
		}
	}
	return n, err
}

// hooksOf returns the hooks of s, checked, and notes what it holds that
// does not run here.
func (r *resolver) hooksOf(s hookSource) ([]hooks.Hook, error) {
	set, err := r.settingsOf(s)
	if err != nil || len(set) == 0 {
		return nil, err
	}
	hs, skipped, err := set.Hooks(s.dialect)
	if err != nil {
		return nil, UsageError{fmt.Errorf("%s: %w", s.path, err)}
	}
	if s.root != "" {
		for i := range hs {
			// The shell expands the variable, quoted or not, as
			// Claude Code's plugins write it.
			hs[i].Env = append(hs[i].Env, "CLAUDE_PLUGIN_ROOT="+s.root)
			hs[i].URL = withPluginRoot(hs[i].URL, s.root)
		}
	}
	// Matchers and events are checked now, naming the file, rather than
	// when the agent is built.
	if _, err := hooks.New(hooks.Config{Hooks: hs, Dir: r.f.Dir}); err != nil {
		return nil, UsageError{fmt.Errorf("%s: %w", s.path, err)}
	}
	for _, sk := range skipped {
		r.note("note: %s: left out %s", s.path, sk)
	}
	if s.dialect == hooks.DialectAgent {
		r.noteClaudeMatchers(s.path, hs)
	}
	return hs, nil
}

// noteClaudeMatchers says which tool hooks of a file in the agent's
// dialect name tools by Claude Code's names (Write|Edit), which match
// none of the agent's: such a hook, copied from Claude Code's settings,
// would never run, and nothing would say so.
func (r *resolver) noteClaudeMatchers(path string, hs []hooks.Hook) {
	for _, h := range hs {
		if h.Event != hooks.PreToolUse && h.Event != hooks.PostToolUse {
			continue
		}
		names := hooks.ClaudeNames(h.Matcher)
		if len(names) == 0 {
			continue
		}
		var said []string
		for _, c := range slices.Sorted(maps.Keys(names)) {
			said = append(said, fmt.Sprintf("%s is %s", c, names[c]))
		}
		r.note("note: %s: the %s hook's matcher %q uses Claude Code's names, which match none of the agent's tools here (%s); use the agent's names, or put the hook in %s, which reads Claude Code's",
			path, h.Event, h.Matcher, strings.Join(said, ", "), filepath.Join(filepath.Dir(path), deepagentsHooks))
	}
}
