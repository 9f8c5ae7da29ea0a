package hooks

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/deepagents-go/deepagents/middleware/filesystem"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/middleware/subagents"
	"github.com/deepagents-go/deepagents/middleware/todos"
)

// Claude Code's names of the agent's tools; MCP tools (mcp__server__tool)
// and the rest keep their names.
var claudeNames = map[string]string{
	filesystem.ExecuteTool:   "Bash",
	filesystem.WriteFileTool: "Write",
	filesystem.EditFileTool:  "Edit",
	filesystem.MultiEditTool: "MultiEdit",
	filesystem.ReadFileTool:  "Read",
	filesystem.GlobTool:      "Glob",
	filesystem.GrepTool:      "Grep",
	filesystem.LsTool:        "LS",
	subagents.TaskTool:       "Task",
	todos.WriteTodosTool:     "TodoWrite",
}

// agentNames maps Claude Code's names back. MultiEdit is edit_file, the
// tool every agent has, so that a hook written for Claude Code's MultiEdit
// guards the edits here; it matches multi_edit too (claudeAliases).
var agentNames = func() map[string]string {
	m := map[string]string{}
	for a, c := range claudeNames {
		m[c] = a
	}
	m["MultiEdit"] = filesystem.EditFileTool
	return m
}()

// claudeAliases are the names of Claude Code's that stand for each of the
// agent's tools, which a matcher may use.
var claudeAliases = func() map[string][]string {
	m := make(map[string][]string)
	for c, a := range agentNames {
		m[a] = append(m[a], c)
	}
	for a, c := range claudeNames {
		if !slices.Contains(m[a], c) {
			m[a] = append(m[a], c)
		}
	}
	return m
}()

// claudeName is Claude Code's name of the agent's tool.
func claudeName(tool string) string {
	if c, ok := claudeNames[tool]; ok {
		return c
	}
	return tool
}

// AgentName is the agent's name of a tool Claude Code names so (Bash is
// execute); other names are returned as they are.
func AgentName(tool string) string {
	if a, ok := agentNames[tool]; ok {
		return a
	}
	return tool
}

// Claude Code's words for the permission modes.
var claudeModes = map[hitl.Mode]string{
	hitl.ModeAsk:         "default",
	hitl.ModeAcceptEdits: "acceptEdits",
	hitl.ModePlan:        "plan",
	hitl.ModeAuto:        "auto",
	hitl.ModeBypass:      "bypassPermissions",
}

// pathFields are the arguments that hold a path, in either dialect.
var pathFields = []string{"file_path", "path"}

// toClaude returns in as a hook of Claude Code's dialect sees it.
func (r *Runner) toClaude(in *Input) *Input {
	c := *in
	if m, ok := claudeModes[hitl.Mode(in.PermissionMode)]; ok {
		c.PermissionMode = m
	}
	if in.ToolName == "" {
		return &c
	}
	c.ToolName = claudeName(in.ToolName)
	var args map[string]any
	if json.Unmarshal(in.ToolInput, &args) == nil && args != nil {
		for _, f := range pathFields {
			if p, ok := args[f].(string); ok && r.cfg.HostPath != nil {
				if h, ok := r.cfg.HostPath(p); ok {
					args[f] = h
				}
			}
		}
		switch in.ToolName {
		case filesystem.ExecuteTool:
			if t, ok := args["timeout"].(float64); ok {
				args["timeout"] = t * 1000 // Bash's is in milliseconds
			}
		case subagents.TaskTool:
			// Task's prompt is the task; its description a short title.
			if d, ok := args["description"].(string); ok {
				args["prompt"] = d
				args["description"] = title(d)
			}
		}
		c.ToolInput, _ = json.Marshal(args)
	}
	if in.ToolResponse != nil {
		c.ToolResponse = claudeResponse(in, args)
	}
	return &c
}

// title is a task's first line, cut to a few words, as Task's description.
func title(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if w := strings.Fields(s); len(w) > 8 {
		s = strings.Join(w[:8], " ") + "…"
	}
	return s
}

// claudeResponse is a tool's result as Claude Code's tool of that name
// answers: Bash's stdout, Write's and Edit's filePath, the text otherwise.
func claudeResponse(in *Input, args map[string]any) json.RawMessage {
	var r struct {
		Content string `json:"content"`
		IsError bool   `json:"is_error"`
	}
	json.Unmarshal(in.ToolResponse, &r) //nolint:errcheck // ours: {"content": ...}
	var v any
	switch in.ToolName {
	case filesystem.ExecuteTool:
		v = map[string]any{"stdout": r.Content, "stderr": "", "interrupted": false, "isImage": false}
	case filesystem.WriteFileTool, filesystem.EditFileTool:
		v = map[string]any{"filePath": args["file_path"], "success": !r.IsError, "content": args["content"]}
	default:
		v = r.Content
	}
	b, _ := json.Marshal(v)
	return b
}

// fromClaude returns the arguments a hook of Claude Code's dialect gave
// (updatedInput) in the agent's: paths mapped back, fields renamed.
func (r *Runner) fromClaude(tool string, args map[string]any) json.RawMessage {
	args = maps.Clone(args)
	for _, f := range pathFields {
		if p, ok := args[f].(string); ok && r.cfg.AgentPath != nil {
			if a, ok := r.cfg.AgentPath(p); ok {
				args[f] = a
			}
		}
	}
	switch tool {
	case filesystem.ExecuteTool:
		if t, ok := args["timeout"].(float64); ok {
			args["timeout"] = int((t + 999) / 1000)
		}
		delete(args, "description")
		delete(args, "run_in_background")
	case subagents.TaskTool:
		if p, ok := args["prompt"].(string); ok {
			args["description"] = p
			delete(args, "prompt")
		}
	}
	b, _ := json.Marshal(args)
	return b
}

// ClaudeNames returns the names of a plain matcher (Edit|Write) that are
// Claude Code's names of the agent's tools, each with the agent's name
// ("Write" is "write_file"): in the agent's dialect such a matcher
// matches none of them, which a configuration copied from Claude Code's
// settings would otherwise never show.
func ClaudeNames(matcher string) map[string]string {
	if !plain.MatchString(matcher) {
		return nil
	}
	var out map[string]string
	for _, n := range strings.Split(matcher, "|") {
		if a, ok := agentNames[n]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[n] = a
		}
	}
	return out
}
