package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/persist"
	"github.com/deepagents-go/deepagents/server"
	"github.com/deepagents-go/deepagents/workspace"
)

// assistantsFile is the file `deepagents serve --assistants` reads: the
// assistants it serves, each configured as `deepagents run` is by its
// flags, plus what only a file can say (a system prompt, memory and skill
// files, inline subagents). Unknown keys are errors.
type assistantsFile struct {
	Assistants []assistantSpec `yaml:"assistants"`
}

// assistantSpec is one assistant of an assistants file.
type assistantSpec struct {
	GraphID     string `yaml:"graph_id"`
	Description string `yaml:"description"`
	// As the flags of the same names (see docs/CLI.md); a value not given
	// is the command's own flag.
	Model       string    `yaml:"model"`
	Dir         string    `yaml:"dir"`
	Shell       bool      `yaml:"shell"`
	Sandbox     string    `yaml:"sandbox"`
	Network     bool      `yaml:"network"`
	InterruptOn []string  `yaml:"interrupt_on"`
	Permissions ruleLists `yaml:"permissions"`
	MaxSteps    int       `yaml:"max_steps"`
	GrepRegexp  bool      `yaml:"grep_regexp"`
	// SystemPrompt is the assistant's instructions, before the deep
	// agent's own prompt.
	SystemPrompt string `yaml:"system_prompt"`
	// Memory and Skills replace the default AGENTS.md files and skill
	// folders (paths in the assistant's files).
	Memory    []string       `yaml:"memory"`
	Skills    []string       `yaml:"skills"`
	Subagents []subagentSpec `yaml:"subagents"`
}

// subagentSpec is a subagent written in an assistants file, as a subagent
// file's front matter and body are.
type subagentSpec struct {
	Name         string   `yaml:"name"`
	Description  string   `yaml:"description"`
	SystemPrompt string   `yaml:"system_prompt"`
	Model        string   `yaml:"model"`
	Tools        []string `yaml:"tools"`
	// Mode is isolated (the default) or fork.
	Mode string `yaml:"mode"`
}

// loadAssistants reads an assistants file.
func loadAssistants(path string) ([]assistantSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f assistantsFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(f.Assistants) == 0 {
		return nil, fmt.Errorf("%s: no assistants", path)
	}
	seen := map[string]bool{}
	for i, a := range f.Assistants {
		switch {
		case a.GraphID == "":
			return nil, fmt.Errorf("%s: assistant %d has no graph_id", path, i+1)
		case seen[a.GraphID]:
			return nil, fmt.Errorf("%s: two assistants named %q", path, a.GraphID)
		}
		seen[a.GraphID] = true
		for _, sa := range a.Subagents {
			if sa.Name == "" || sa.Description == "" {
				return nil, fmt.Errorf("%s: assistant %q: a subagent needs a name and a description", path, a.GraphID)
			}
			if _, err := subagentMode(sa.Mode); err != nil {
				return nil, fmt.Errorf("%s: assistant %q: subagent %q: %w", path, a.GraphID, sa.Name, err)
			}
		}
		if a.Dir != "" && !filepath.IsAbs(a.Dir) {
			// A folder is relative to the file that names it.
			f.Assistants[i].Dir = filepath.Join(filepath.Dir(path), a.Dir)
		}
	}
	return f.Assistants, nil
}

// flags are the run flags of an assistant: the command's, with the
// assistant's values over them.
func (a *assistantSpec) flags(base runFlags) (runFlags, error) {
	f := base
	f.given = func(string) bool { return false } // a thread's settings do not apply
	f.fromAssistant = true
	if a.Model != "" {
		f.model = a.Model
	}
	f.stateWorkspace = a.Dir == "" && !base.given("dir")
	if a.Dir != "" {
		st, err := os.Stat(a.Dir)
		if err != nil || !st.IsDir() {
			return f, fmt.Errorf("assistant %q: dir %s is not a folder", a.GraphID, a.Dir)
		}
		f.dir = a.Dir
	}
	f.shell = f.shell || a.Shell
	if a.Sandbox != "" {
		f.sandbox = a.Sandbox
	}
	f.network = f.network || a.Network
	if f.shell && f.stateWorkspace {
		return f, fmt.Errorf("assistant %q: shell needs dir: commands run in a folder, not in a thread's state", a.GraphID)
	}
	switch f.sandbox {
	case "bwrap", "none":
	default:
		return f, fmt.Errorf("assistant %q: sandbox must be bwrap or none, not %q", a.GraphID, f.sandbox)
	}
	if a.InterruptOn != nil {
		f.interrupt, f.interruptOK = strings.Join(a.InterruptOn, ","), true
	}
	f.rules = ruleLists{
		Allow: append(append([]string(nil), base.rules.Allow...), a.Permissions.Allow...),
		Ask:   append(append([]string(nil), base.rules.Ask...), a.Permissions.Ask...),
		Deny:  append(append([]string(nil), base.rules.Deny...), a.Permissions.Deny...),
	}
	if a.MaxSteps > 0 {
		f.maxSteps = a.MaxSteps
	}
	f.grepRegexp = f.grepRegexp || a.GrepRegexp
	return f, nil
}

// configure applies what only the file says to the agent's configuration.
func (a *assistantSpec) configure(ctx context.Context, env Env) func(*deepagents.Config) error {
	return func(c *deepagents.Config) error {
		if a.SystemPrompt != "" {
			c.SystemPrompt = a.SystemPrompt
		}
		// Memory and skills are the file's, or the assistant's own
		// files': never the operator's ~/.deepagents.
		c.Memory, c.Skills = withoutUserRoute(c.Memory), withoutUserRoute(c.Skills)
		if a.Memory != nil {
			c.Memory = a.Memory
		}
		if a.Skills != nil {
			c.Skills = a.Skills
		}
		// Only the subagents the file names (loadSubagents loads no file
		// for an assistant).
		c.Subagents, c.AsyncSubagents = nil, nil
		ms := &models{env: env}
		for _, s := range a.Subagents {
			mode, _ := subagentMode(s.Mode) // checked by loadAssistants
			sa := deepagents.Subagent{Name: s.Name, Description: s.Description, SystemPrompt: s.SystemPrompt, AllowedTools: s.Tools, Mode: mode}
			if s.Model != "" {
				m, err := ms.open(ctx, s.Model)
				if err != nil {
					return usageError{fmt.Errorf("--assistants: assistant %q: subagent %q: %w", a.GraphID, s.Name, err)}
				}
				sa.Model = m
			}
			c.Subagents = append(c.Subagents, sa)
		}
		return nil
	}
}

// withoutUserRoute drops the paths under the operator's folder (/user/).
func withoutUserRoute(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !strings.HasPrefix(p, workspace.UserRoute) {
			out = append(out, p)
		}
	}
	return out
}

// openAssistants builds the assistants of an assistants file on an open
// database. The returned function closes what they opened (shells).
func openAssistants(ctx context.Context, env Env, base runFlags, db *persist.DB, path string) ([]server.Assistant, func(), error) {
	specs, err := loadAssistants(path)
	if err != nil {
		return nil, nil, usageError{fmt.Errorf("--assistants: %w", err)}
	}
	var out []server.Assistant
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	for i := range specs {
		a := &specs[i]
		f, err := a.flags(base)
		if err != nil {
			closeAll()
			return nil, nil, usageError{fmt.Errorf("--assistants: %w", err)}
		}
		s, err := newSession(ctx, env, &f, db, false, a.configure(ctx, env))
		if err != nil {
			closeAll()
			var ue usageError
			if errors.As(err, &ue) {
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("--assistants: assistant %q: %w", a.GraphID, err)
		}
		closers = append(closers, s.closeAgent)
		out = append(out, server.Assistant{GraphID: a.GraphID, Description: a.Description, Agent: s.agent})
	}
	return out, closeAll, nil
}
