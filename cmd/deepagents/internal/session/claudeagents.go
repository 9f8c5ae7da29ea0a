package session

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/backend/isolate"
	"github.com/deepagents-go/deepagents/hooks"
	"github.com/deepagents-go/deepagents/middleware/filesystem"
	"github.com/deepagents-go/deepagents/middleware/todos"
)

// Claude Code's subagent files (.claude/agents/*.md, ~/.claude/agents/*.md)
// read as this agent's (docs/compatibility.md): the same front matter and
// body, its tool names mapped to this agent's, what has no counterpart
// here left out and said once.

// claudeAgentFields are the front matter keys of Claude Code's subagent
// files that are used here; the others are left out with a note.
var claudeAgentFields = []string{"name", "description", "tools", "disallowedTools", "model", "background", "isolation"}

// parseClaudeAgentFile reads a subagent file of Claude Code's. shell says
// whether the session offers execute, to which Bash maps. left lists what
// of the file is not used ("permissionMode", "tools: WebFetch"). The
// subagent always runs on the session's model: a file of another tool's
// never chooses where this agent's requests (and its keys) go.
func parseClaudeAgentFile(path string, shell bool) (af agentFile, left []string, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return agentFile{}, nil, err
	}
	fm, body, err := frontMatter(raw)
	if err != nil {
		return agentFile{}, nil, err
	}
	meta := lenientFrontMatter(fm)
	str := func(k string) string { s, _ := meta[k].(string); return strings.TrimSpace(s) }
	af.sa = deepagents.Subagent{Name: str("name"), Description: str("description"), SystemPrompt: strings.TrimSpace(string(body))}
	if af.sa.Name == "" || af.sa.Description == "" {
		return agentFile{}, nil, fmt.Errorf("front matter needs name and description")
	}
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		if !slices.Contains(claudeAgentFields, k) {
			left = append(left, k)
		}
	}
	af.background, _ = meta["background"].(bool)
	// Claude Code's isolation: worktree is this agent's too; none, auto
	// and copy are this agent's own.
	if iso := str("isolation"); iso != "" {
		if m, err := isolate.ParseMode(iso); err == nil {
			af.sa.Isolation = m
		} else {
			left = append(left, "isolation: "+iso)
		}
	}
	if m := str("model"); m != "" && m != "inherit" {
		left = append(left, "model: "+m+" (the session's model is used)")
	}
	names, given, err := toolList(meta["tools"])
	if err != nil {
		return agentFile{}, nil, err
	}
	denied, _, err := toolList(meta["disallowedTools"])
	if err != nil {
		return agentFile{}, nil, fmt.Errorf("disallowedTools: %w", err)
	}
	if !given && len(denied) == 0 {
		return af, left, nil // every tool, as in Claude Code
	}
	if !given {
		names = claudeMappedTools // every tool this agent maps, less the denied
	}
	af.sa.AllowedTools = []string{}
	for _, n := range names {
		tool := hooks.AgentName(n)
		switch {
		case slices.ContainsFunc(denied, func(d string) bool { return hooks.AgentName(d) == tool }):
		case tool == filesystem.ExecuteTool && !shell:
			if given {
				left = append(left, "tools: "+n+" (no shell in this session)")
			}
		case slices.Contains(claudeMappedTools, tool):
			if !slices.Contains(af.sa.AllowedTools, tool) {
				af.sa.AllowedTools = append(af.sa.AllowedTools, tool)
			}
		default:
			left = append(left, "tools: "+n)
		}
	}
	if len(af.sa.AllowedTools) == 0 {
		left = append(left, "no tool of its list is one of this agent's: it has none")
	}
	return af, left, nil
}

// toolList reads a tools key: a comma-separated string or a list; given
// is false when the key is absent.
func toolList(v any) (names []string, given bool, err error) {
	switch t := v.(type) {
	case nil:
		return nil, false, nil
	case string:
		return splitList(t), true, nil
	case []any:
		for _, x := range t {
			names = append(names, strings.TrimSpace(fmt.Sprint(x)))
		}
		return names, true, nil
	}
	return nil, false, fmt.Errorf("tools must be a list or a comma-separated string")
}

// lenientFrontMatter reads front matter as Claude Code does: YAML, or,
// when that fails (its own generator writes descriptions with ": " and
// quotes in them), each top-level "key: value" line as a string.
func lenientFrontMatter(fm []byte) map[string]any {
	var meta map[string]any
	if err := yaml.Unmarshal(fm, &meta); err == nil && meta != nil {
		return meta
	}
	meta = map[string]any{}
	for _, line := range strings.Split(string(fm), "\n") {
		if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.ContainsAny(k, " \t") {
			meta[k] = strings.TrimSpace(strings.TrimRight(v, "\r"))
		}
	}
	return meta
}

// claudeMappedTools are the tools a Claude Code subagent file may name,
// by Claude Code's names or these.
var claudeMappedTools = []string{
	filesystem.ReadFileTool, filesystem.WriteFileTool, filesystem.EditFileTool, filesystem.LsTool,
	filesystem.GlobTool, filesystem.GrepTool, filesystem.ExecuteTool, todos.WriteTodosTool,
}

// frontMatter splits a Markdown file with YAML front matter into the
// front matter and the body.
func frontMatter(raw []byte) (fm, body []byte, err error) {
	raw = bytes.TrimPrefix(raw, []byte("\ufeff"))
	rest, ok := bytes.CutPrefix(raw, []byte("---\n"))
	if !ok {
		rest, ok = bytes.CutPrefix(raw, []byte("---\r\n"))
	}
	if !ok {
		return nil, nil, fmt.Errorf("no front matter: the file must start with a --- line")
	}
	fm, body, ok = bytes.Cut(rest, []byte("\n---"))
	if !ok {
		return nil, nil, fmt.Errorf("front matter is not closed by a --- line")
	}
	// The rest of the closing --- line is not part of the body.
	if _, after, found := bytes.Cut(body, []byte("\n")); found {
		return fm, after, nil
	}
	return fm, nil, nil
}
