package session

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A command is a prompt kept in a Markdown file that the user runs by its
// name: /NAME ARGS in the terminal, deepagents -p '/NAME ARGS' headless.
// Claude Code's command files (.claude/commands/*.md) are read unchanged
// (docs/compatibility.md), and this agent's own (.deepagents/commands) the
// same way.
type Command struct {
	// Name is the file's name without .md, in any subfolder.
	Name string
	// Description and ArgumentHint are the front matter's description
	// and argument-hint, for /help.
	Description, ArgumentHint string
	// Body is the prompt: $ARGUMENTS stands for what follows the name,
	// $1 to $9 for its words.
	Body string
	// From is the file it was read from.
	From string
}

// Expand returns the prompt of the command run with args: $ARGUMENTS
// replaced by args, $1 to $9 by its words (none for a word not given).
// When the body names neither, args (if any) follow it, as in Claude Code.
func (c Command) Expand(args string) string {
	args = strings.TrimSpace(args)
	words := strings.Fields(args)
	named := strings.Contains(c.Body, "$ARGUMENTS")
	pairs := []string{"$ARGUMENTS", args}
	for i := 9; i >= 1; i-- { // $1 after $10 would be wrong, but there is no $10
		w := ""
		if i <= len(words) {
			w = words[i-1]
		}
		key := fmt.Sprintf("$%d", i)
		named = named || strings.Contains(c.Body, key)
		pairs = append(pairs, key, w)
	}
	out := strings.NewReplacer(pairs...).Replace(c.Body)
	if !named && args != "" {
		out += "\n\nARGUMENTS: " + args
	}
	return out
}

// commandFields are the front matter keys of a command file used here.
var commandFields = []string{"description", "argument-hint"}

// maxCommandBytes bounds a command file: it becomes a prompt.
const maxCommandBytes = 256 << 10

// readCommands reads the command files below dir, in path order; left
// notes what of them is not used.
func readCommands(dir string) (cmds []Command, left []string) {
	var paths []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error { //nolint:errcheck // a folder that cannot be read has no commands
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return nil
	})
	slices.Sort(paths)
	for _, p := range paths {
		c, l, err := readCommand(dir, p)
		if err != nil {
			left = append(left, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		if len(l) > 0 {
			left = append(left, fmt.Sprintf("%s: %s", p, strings.Join(l, ", ")))
		}
		cmds = append(cmds, c)
	}
	return cmds, left
}

// readCommand reads one command file.
func readCommand(dir, path string) (Command, []string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return Command{}, nil, err
	}
	if info.Size() > maxCommandBytes {
		return Command{}, nil, fmt.Errorf("over %d KiB", maxCommandBytes>>10)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return Command{}, nil, err
	}
	rel, _ := filepath.Rel(dir, path)
	c := Command{Name: strings.TrimSuffix(filepath.Base(rel), ".md"), From: path, Body: string(raw)}
	if !plainName(c.Name) {
		return Command{}, nil, fmt.Errorf("%q is not a command name (letters, digits, - and _)", c.Name)
	}
	var left []string
	if fm, body, err := frontMatter(raw); err == nil {
		var meta map[string]any
		if err := yaml.Unmarshal(fm, &meta); err != nil {
			return Command{}, nil, fmt.Errorf("front matter: %w", err)
		}
		c.Body = string(body)
		c.Description, _ = meta["description"].(string)
		c.ArgumentHint, _ = meta["argument-hint"].(string)
		for k := range meta {
			if !slices.Contains(commandFields, k) {
				left = append(left, k)
			}
		}
		slices.Sort(left)
	}
	c.Body = strings.TrimSpace(c.Body)
	if strings.Contains(c.Body, "!`") {
		left = append(left, "!`command` lines (not run: sent as written)")
	}
	return c, left, nil
}

// plainName reports whether s can name a command typed after / or a
// plugin: letters, digits, - and _, at most 64.
func plainName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// commands gathers the command files: the installed plugins', the
// workspace's (this agent's .deepagents/commands, and Claude Code's
// .claude/commands with --trust-workspace), then the user's (Codex's
// ~/.codex/prompts, Claude Code's ~/.claude/commands, ~/.deepagents/commands); a later folder's
// wins a name, so that a repository never replaces a command the user
// types by habit, and what is left out of them is noted once.
func (r *resolver) commands() []Command {
	if r.in.Assistant != nil {
		return nil
	}
	var dirs []string
	for _, p := range r.plugins() {
		dirs = append(dirs, filepath.Join(p.Dir, "commands"))
	}
	if !r.stateWorkspace && !r.isHome() {
		if r.trustsOtherAgents() {
			dirs = append(dirs, filepath.Join(r.f.Dir, ".claude", "commands"))
		}
		dirs = append(dirs, filepath.Join(r.f.Dir, ".deepagents", "commands"))
	}
	pl := r.in.Places
	if pl.Home != "" && pl.UserDir != "" {
		// Codex's custom prompts, then Claude Code's commands.
		dirs = append(dirs, filepath.Join(pl.Home, ".codex", "prompts"), filepath.Join(pl.Home, ".claude", "commands"))
	}
	if pl.UserDir != "" {
		dirs = append(dirs, filepath.Join(pl.UserDir, "commands"))
	}
	byName := map[string]int{}
	var out []Command
	var left []string
	for _, d := range dirs {
		cmds, l := readCommands(d)
		left = append(left, l...)
		for _, c := range cmds {
			if i, ok := byName[c.Name]; ok {
				out[i] = c
				continue
			}
			byName[c.Name] = len(out)
			out = append(out, c)
		}
	}
	if len(left) > 0 {
		r.note("note: what command files say that this agent does not use is left out: %s", strings.Join(left, "; "))
	}
	return out
}

// FindCommand returns the command text runs (/NAME ARGS, the arguments
// running to the end of text, lines included) and its arguments; ok is
// false when text names none of cmds.
func FindCommand(cmds []Command, text string) (c Command, args string, ok bool) {
	rest, found := strings.CutPrefix(text, "/")
	if !found {
		return Command{}, "", false
	}
	name, args := rest, ""
	if i := strings.IndexAny(rest, " \t\n"); i >= 0 {
		name, args = rest[:i], rest[i+1:]
	}
	for _, c := range cmds {
		if c.Name == name {
			return c, args, true
		}
	}
	return Command{}, "", false
}
