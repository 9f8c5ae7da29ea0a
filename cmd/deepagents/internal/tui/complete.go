package tui

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
)

const (
	// maxCompletions bounds the completions a tab lists.
	maxCompletions = 20
	// maxListed bounds the entries of a folder that a tab looks at.
	maxListed = 5000
	// completeTimeout bounds the listing of a folder for a tab.
	completeTimeout = 2 * time.Second
)

// commandWord is a word of the help that names a command.
var commandWord = regexp.MustCompile(`^/[a-z][a-z-]*$`)

// commandNames are the / commands, as /help lists them: each word of the
// help that is a / and a name.
func commandNames() []string {
	var names []string
	for _, line := range strings.Split(tuiHelp, "\n") {
		for _, w := range strings.Fields(line) {
			if commandWord.MatchString(w) && !slices.Contains(names, w) {
				names = append(names, w)
			}
		}
	}
	slices.Sort(names)
	return names
}

// complete is tab: the word before the cursor, a /command at the start
// of the message or an @path, is completed as far as it is not
// ambiguous. It returns the completions to list when there are several.
func (m *tuiModel) complete() string {
	before := m.beforeCursor()
	start := strings.LastIndexAny(before, " \t") + 1
	word := before[start:]
	var (
		more  string
		list  []string
		label string
	)
	switch {
	case strings.HasPrefix(word, "/") && m.input.Line() == 0 && start == 0:
		more, list = completeCommand(append(commandNames(), m.customNames()...), word)
		label = "commands"
	case strings.HasPrefix(word, "@"):
		if m.cfg.Files == nil {
			return ""
		}
		ctx, cancel := context.WithTimeout(m.ctx, completeTimeout)
		defer cancel()
		var err error
		more, list, err = completePath(ctx, m.cfg.Files, word[1:])
		if err != nil {
			return "no completion: " + display.OneLine(err.Error())
		}
		for i, p := range list {
			list[i] = "@" + display.TerminalSafe(p) // names come with the repository
		}
		more = display.TerminalSafe(more)
		label = "files"
	default:
		return ""
	}
	m.input.InsertString(more)
	if len(list) < 2 {
		if len(list) == 0 && more == "" {
			return "no " + label + " start with " + display.OneLine(word)
		}
		return ""
	}
	return listCompletions(list)
}

// listCompletions is the completions on a line, bounded.
func listCompletions(list []string) string {
	n := len(list)
	if n > maxCompletions {
		list = list[:maxCompletions]
	}
	s := strings.Join(list, "  ")
	if n > maxCompletions {
		s += fmt.Sprintf("  … %d more", n-maxCompletions)
	}
	return s
}

// completeCommand completes word, a / command's start, among names: it
// returns what to add to it (the command's whole name and a space when
// only one matches, else as far as they all agree) and the names that
// match when there are several.
func completeCommand(names []string, word string) (more string, list []string) {
	for _, n := range names {
		if strings.HasPrefix(n, word) {
			list = append(list, n)
		}
	}
	switch len(list) {
	case 0:
		return "", nil
	case 1:
		return strings.TrimPrefix(list[0], word) + " ", nil
	}
	return strings.TrimPrefix(commonPrefix(list), word), list
}

// completePath completes partial, the start of a workspace path after an
// @, from the listing of its folder through b: the agent's files as
// read_file sees them, with no symbolic links and no path the read rules
// deny. It returns what to add (a whole file's name and a space, a
// folder's name and a /, or as far as the matches agree) and the paths
// that match when there are several. Hidden entries match only a partial
// name that starts with a dot.
func completePath(ctx context.Context, b backend.Backend, partial string) (more string, list []string, err error) {
	dir, base := "", partial
	if i := strings.LastIndexByte(partial, '/'); i >= 0 {
		dir, base = partial[:i+1], partial[i+1:]
	}
	vp, err := backend.Clean("/" + strings.TrimPrefix(dir, "/"))
	if err != nil {
		return "", nil, err
	}
	entries, err := b.List(ctx, vp)
	if err != nil {
		return "", nil, err
	}
	if len(entries) > maxListed {
		entries = entries[:maxListed]
	}
	var names []string
	for _, e := range entries {
		name := path.Base(e.Path)
		if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		if e.IsDir {
			name += "/"
		}
		names = append(names, name)
	}
	switch len(names) {
	case 0:
		return "", nil, nil
	case 1:
		more = strings.TrimPrefix(names[0], base)
		if !strings.HasSuffix(more, "/") {
			more += " "
		}
		return more, nil, nil
	}
	for _, n := range names {
		list = append(list, dir+n)
	}
	return strings.TrimPrefix(commonPrefix(names), base), list, nil
}

// commonPrefix is the longest start the strings all share, cut at a
// whole character.
func commonPrefix(ss []string) string {
	p := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, p) {
			r := []rune(p)
			p = string(r[:len(r)-1])
		}
	}
	return p
}
