package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/deepagents-go/deepagents"
)

// loadSubagents reads subagent definitions: Markdown files with front matter
// (name, description, optional tools, model and mode) whose body is the system
// prompt, from ~/.deepagents/agents/ and DIR/.deepagents/agents/. A project
// file overrides a user file of the same name. An invalid file (no front
// matter, an unknown model provider, tools that do not exist) is a usage
// error naming it: a subagent silently left out would change what the
// agent can do.
func loadSubagents(ctx context.Context, env Env, f *runFlags, ms *models) ([]deepagents.Subagent, error) {
	var dirs []string
	if u := userDir(env); u != "" {
		dirs = append(dirs, filepath.Join(u, "agents"))
	}
	dirs = append(dirs, filepath.Join(f.dir, ".deepagents", "agents"))
	byName := map[string]deepagents.Subagent{}
	var order []string
	for _, dir := range dirs {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.md"))
		slices.Sort(paths)
		for _, p := range paths {
			sa, modelSpec, err := parseAgentFile(p)
			if err != nil {
				return nil, usageError{fmt.Errorf("subagent file %s: %w", p, err)}
			}
			if modelSpec != "" {
				m, err := ms.open(ctx, modelSpec)
				if err != nil {
					return nil, usageError{fmt.Errorf("subagent file %s: %w", p, err)}
				}
				sa.Model = m
			}
			if _, seen := byName[sa.Name]; !seen {
				order = append(order, sa.Name)
			}
			byName[sa.Name] = sa
		}
	}
	out := make([]deepagents.Subagent, 0, len(order))
	for _, n := range order {
		out = append(out, byName[n])
	}
	return out, nil
}

// parseAgentFile reads one subagent file; it returns the model spec apart.
func parseAgentFile(path string) (deepagents.Subagent, string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return deepagents.Subagent{}, "", err
	}
	raw = bytes.TrimPrefix(raw, []byte("\ufeff"))
	rest, ok := bytes.CutPrefix(raw, []byte("---\n"))
	if !ok {
		rest, ok = bytes.CutPrefix(raw, []byte("---\r\n"))
	}
	if !ok {
		return deepagents.Subagent{}, "", fmt.Errorf("no front matter: the file must start with a --- line")
	}
	fm, body, ok := bytes.Cut(rest, []byte("\n---"))
	if !ok {
		return deepagents.Subagent{}, "", fmt.Errorf("front matter is not closed by a --- line")
	}
	var meta struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
		Tools       any    `yaml:"tools"`
		Model       string `yaml:"model"`
		Mode        string `yaml:"mode"`
	}
	if err := yaml.Unmarshal(fm, &meta); err != nil {
		return deepagents.Subagent{}, "", fmt.Errorf("front matter: %w", err)
	}
	if meta.Name == "" || meta.Description == "" {
		return deepagents.Subagent{}, "", fmt.Errorf("front matter needs name and description")
	}
	// The rest of the closing --- line is not part of the body.
	if _, after, found := bytes.Cut(body, []byte("\n")); found {
		body = after
	} else {
		body = nil
	}
	mode, err := subagentMode(meta.Mode)
	if err != nil {
		return deepagents.Subagent{}, "", err
	}
	sa := deepagents.Subagent{
		Name:         meta.Name,
		Description:  strings.TrimSpace(meta.Description),
		SystemPrompt: strings.TrimSpace(string(body)),
		Mode:         mode,
	}
	switch t := meta.Tools.(type) {
	case string:
		sa.AllowedTools = splitList(t)
	case []any:
		for _, v := range t {
			sa.AllowedTools = append(sa.AllowedTools, fmt.Sprint(v))
		}
	case nil:
	default:
		return deepagents.Subagent{}, "", fmt.Errorf("tools must be a list or a comma-separated string")
	}
	return sa, meta.Model, nil
}

// subagentMode reads a subagent's mode: isolated (the default) or fork.
func subagentMode(s string) (deepagents.SubagentMode, error) {
	switch m := deepagents.SubagentMode(strings.TrimSpace(s)); m {
	case "", deepagents.SubagentIsolated, deepagents.SubagentFork:
		return m, nil
	}
	return "", fmt.Errorf("mode must be %s or %s, not %q", deepagents.SubagentIsolated, deepagents.SubagentFork, s)
}
