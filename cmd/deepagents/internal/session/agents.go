package session

import (
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/backend/isolate"
	"github.com/deepagents-go/deepagents/middleware/budget"
)

// modelNamesEndpoint reports whether the model spec names the server it
// is sent to ("openai:llama3@http://host:8000/v1"), or anything that looks
// like one: a project's files may name models, not where data goes.
func modelNamesEndpoint(spec string) bool {
	if strings.Contains(spec, "://") {
		return true
	}
	i := strings.LastIndexByte(spec, '@')
	return i >= 0 && strings.ContainsAny(spec[i+1:], ".:/")
}

// agentFile is what a subagent file defines.
type agentFile struct {
	sa         deepagents.Subagent
	model      string // a model spec, opened by the caller
	background bool
	remote     bool
	url        string
	graphID    string
	headers    map[string]string
}

// parseAgentFile reads one subagent file. Header values may name
// environment variables ($VAR or ${VAR}), so that keys stay out of files.
func parseAgentFile(path string, getenv func(string) string) (agentFile, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return agentFile{}, err
	}
	fm, body, err := frontMatter(raw)
	if err != nil {
		return agentFile{}, err
	}
	var meta struct {
		Name        string            `yaml:"name"`
		Description string            `yaml:"description"`
		Tools       any               `yaml:"tools"`
		Model       string            `yaml:"model"`
		Mode        string            `yaml:"mode"`
		Background  bool              `yaml:"background"`
		URL         string            `yaml:"url"`
		GraphID     string            `yaml:"graph_id"`
		Headers     map[string]string `yaml:"headers"`
		MaxCost     *float64          `yaml:"max_cost"`
		Isolation   string            `yaml:"isolation"`
	}
	if err := yaml.Unmarshal(fm, &meta); err != nil {
		return agentFile{}, fmt.Errorf("front matter: %w", err)
	}
	if meta.Name == "" || meta.Description == "" {
		return agentFile{}, fmt.Errorf("front matter needs name and description")
	}
	mode, err := subagentMode(meta.Mode)
	if err != nil {
		return agentFile{}, err
	}
	iso, err := isolate.ParseMode(meta.Isolation)
	if err != nil {
		return agentFile{}, fmt.Errorf("isolation: %w", err)
	}
	if meta.Isolation == "" {
		iso = "" // the session's default
	}
	af := agentFile{
		sa: deepagents.Subagent{
			Name:         meta.Name,
			Description:  strings.TrimSpace(meta.Description),
			SystemPrompt: strings.TrimSpace(string(body)),
			Mode:         mode,
			Isolation:    iso,
		},
		model:      meta.Model,
		background: meta.Background,
	}
	if meta.MaxCost != nil {
		if *meta.MaxCost <= 0 {
			return agentFile{}, fmt.Errorf("max_cost must be a number of dollars above 0")
		}
		af.sa.Budget = &budget.Config{Dollars: *meta.MaxCost} // priced when the run is resolved
	}
	switch t := meta.Tools.(type) {
	case string:
		af.sa.AllowedTools = splitList(t)
	case []any:
		for _, v := range t {
			af.sa.AllowedTools = append(af.sa.AllowedTools, fmt.Sprint(v))
		}
	case nil:
	default:
		return agentFile{}, fmt.Errorf("tools must be a list or a comma-separated string")
	}
	if af.sa.Mode == deepagents.SubagentFork && (meta.Background || meta.URL != "") {
		// A background task runs beside the conversation it would copy,
		// which goes on without it (subagents.ErrMode).
		return agentFile{}, fmt.Errorf("a background subagent cannot use mode fork: it starts from its task alone (leave mode out, or set it to isolated)")
	}
	if meta.URL != "" || meta.GraphID != "" || meta.Headers != nil {
		if meta.URL == "" || meta.GraphID == "" {
			return agentFile{}, fmt.Errorf("a remote subagent needs both url and graph_id")
		}
		if af.sa.SystemPrompt != "" || af.sa.AllowedTools != nil || meta.Model != "" {
			return agentFile{}, fmt.Errorf("a remote subagent (url) is defined by its server: it takes no tools, model or prompt")
		}
		af.remote, af.url, af.graphID = true, meta.URL, meta.GraphID
		for k, v := range meta.Headers {
			if af.headers == nil {
				af.headers = map[string]string{}
			}
			af.headers[k] = os.Expand(v, getenv)
		}
	}
	return af, nil
}

// subagentMode reads a subagent's mode: isolated (the default) or fork.
func subagentMode(s string) (deepagents.SubagentMode, error) {
	switch m := deepagents.SubagentMode(strings.TrimSpace(s)); m {
	case "", deepagents.SubagentIsolated, deepagents.SubagentFork:
		return m, nil
	}
	return "", fmt.Errorf("mode must be %s or %s, not %q", deepagents.SubagentIsolated, deepagents.SubagentFork, s)
}

// splitList splits a comma-separated flag value.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
