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
var claudeAgentFields = []string{"name", "description", "tools", "model", "background"}

// claudeModelAliases are Claude Code's model aliases: the subagent then
// runs on the session's model, as with "inherit".
var claudeModelAliases = []string{"inherit", "sonnet", "opus", "haiku"}

// parseClaudeAgentFile reads a subagent file of Claude Code's. shell says
// whether the session offers execute, to which Bash maps. left lists what
// of the file is not used ("permissionMode", "tools: WebFetch").
func parseClaudeAgentFile(path string, shell bool) (af agentFile, left []string, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return agentFile{}, nil, err
	}
	fm, body, err := frontMatter(raw)
	if err != nil {
		return agentFile{}, nil, err
	}
	var meta map[string]any
	if err := yaml.Unmarshal(fm, &meta); err != nil {
		return agentFile{}, nil, fmt.Errorf("front matter: %w", err)
	}
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
	switch m := str("model"); {
	case m == "" || slices.Contains(claudeModelAliases, m):
		if m != "" && m != "inherit" {
			left = append(left, "model: "+m+" (the session's model is used)")
		}
	case strings.Contains(m, ":"):
		af.model = m // a model spec of this agent's
	default:
		left = append(left, "model: "+m+" (the session's model is used)")
	}
	var names []string
	switch t := meta["tools"].(type) {
	case nil:
		return af, left, nil // every tool, as in Claude Code
	case string:
		names = splitList(t)
	case []any:
		for _, v := range t {
			names = append(names, strings.TrimSpace(fmt.Sprint(v)))
		}
	default:
		return agentFile{}, nil, fmt.Errorf("tools must be a list or a comma-separated string")
	}
	af.sa.AllowedTools = []string{}
	for _, n := range names {
		tool := hooks.AgentName(n)
		switch {
		case tool == filesystem.ExecuteTool && !shell:
			left = append(left, "tools: "+n+" (no shell in this session)")
		case slices.Contains(claudeMappedTools, tool):
			if !slices.Contains(af.sa.AllowedTools, tool) {
				af.sa.AllowedTools = append(af.sa.AllowedTools, tool)
			}
		default:
			left = append(left, "tools: "+n)
		}
	}
	return af, left, nil
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
