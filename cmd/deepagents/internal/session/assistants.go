package session

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"go.yaml.in/yaml/v3"
)

// assistantsFile is the file `deepagents serve --assistants` reads: the
// assistants it serves, each configured as `deepagents run` is by its
// flags, plus what only a file can say (a system prompt, memory and skill
// files, inline subagents). Unknown keys are errors.
type assistantsFile struct {
	Assistants []Assistant `yaml:"assistants"`
}

// Assistant is one assistant of an assistants file: Resolve resolves it
// over the command's flags (Inputs.Assistant).
type Assistant struct {
	GraphID     string `yaml:"graph_id"`
	Description string `yaml:"description"`
	// As the flags of the same names (see docs/CLI.md); a value not given
	// is the command's own flag.
	Model   string      `yaml:"model"`
	Dir     string      `yaml:"dir"`
	Shell   bool        `yaml:"shell"`
	Sandbox string      `yaml:"sandbox"`
	Network NetworkMode `yaml:"network"`
	// AllowDomains and DenyDomains add to the command's: the hosts the
	// assistant's commands may reach through the proxy (none is asked:
	// the server has no one to ask).
	AllowDomains []string  `yaml:"allow_domains"`
	DenyDomains  []string  `yaml:"deny_domains"`
	InterruptOn  []string  `yaml:"interrupt_on"`
	Permissions  RuleLists `yaml:"permissions"`
	MaxSteps     int       `yaml:"max_steps"`
	// MaxCost is --max-cost for each of the assistant's tasks; 0 is no
	// limit.
	MaxCost    *float64 `yaml:"max_cost"`
	GrepRegexp bool     `yaml:"grep_regexp"`
	// Loops, Verify, Budget and LocalContext are the keys of the user's
	// configuration file of those names (docs/harness.md), for the
	// assistant's runs.
	Loops        *loopsConfig  `yaml:"loops"`
	Verify       *verifyConfig `yaml:"verify"`
	Budget       *budgetConfig `yaml:"budget"`
	LocalContext bool          `yaml:"local_context"`
	// SystemPrompt is the assistant's instructions, before the deep
	// agent's own prompt.
	SystemPrompt string `yaml:"system_prompt"`
	// Memory and Skills replace the default AGENTS.md files and skill
	// folders (paths in the assistant's files).
	Memory    []string         `yaml:"memory"`
	Skills    []string         `yaml:"skills"`
	Subagents []AssistantAgent `yaml:"subagents"`
}

// AssistantAgent is a subagent written in an assistants file, as a
// subagent file's front matter and body are.
type AssistantAgent struct {
	Name         string   `yaml:"name"`
	Description  string   `yaml:"description"`
	SystemPrompt string   `yaml:"system_prompt"`
	Model        string   `yaml:"model"`
	Tools        []string `yaml:"tools"`
	// Mode is isolated (the default) or fork.
	Mode string `yaml:"mode"`
}

// LoadAssistants reads an assistants file. A relative dir is taken
// relative to the file; every dir must be a folder.
func LoadAssistants(path string) ([]Assistant, error) {
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
	// Every folder is checked once the file is whole, so that Resolve
	// looks at no folder.
	for _, a := range f.Assistants {
		if a.Dir == "" {
			continue
		}
		if st, err := os.Stat(a.Dir); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("assistant %q: dir %s is not a folder", a.GraphID, a.Dir)
		}
	}
	return f.Assistants, nil
}

// overlay makes the assistant a's values the flags', over the command's:
// neither the configuration file nor a thread's settings change them
// (the file says all).
func (r *resolver) overlay(a *Assistant) error {
	f := &r.f
	givenDir := r.given("dir")
	r.given = func(string) bool { return false }
	if a.Model != "" {
		f.Model = a.Model
	}
	r.stateWorkspace = a.Dir == "" && !givenDir
	if a.Dir != "" {
		f.Dir = a.Dir
	}
	f.Shell = f.Shell || a.Shell
	if a.Sandbox != "" {
		f.Sandbox = a.Sandbox
	}
	if a.Network != "" {
		f.Network = string(a.Network)
	}
	f.AllowDomains = append(slices.Clone(f.AllowDomains), a.AllowDomains...)
	f.DenyDomains = append(slices.Clone(f.DenyDomains), a.DenyDomains...)
	if f.Shell && r.stateWorkspace {
		return fmt.Errorf("assistant %q: shell needs dir: commands run in a folder, not in a thread's state", a.GraphID)
	}
	switch f.Sandbox {
	case "bwrap", "none":
	default:
		return fmt.Errorf("assistant %q: sandbox must be bwrap or none, not %q", a.GraphID, f.Sandbox)
	}
	if a.InterruptOn != nil {
		f.InterruptOn, r.interruptOK = joinList(a.InterruptOn), true
	}
	f.Rules = RuleLists{
		Allow: append(append([]string(nil), f.Rules.Allow...), a.Permissions.Allow...),
		Ask:   append(append([]string(nil), f.Rules.Ask...), a.Permissions.Ask...),
		Deny:  append(append([]string(nil), f.Rules.Deny...), a.Permissions.Deny...),
	}
	if a.MaxSteps > 0 {
		f.MaxSteps = a.MaxSteps
	}
	if err := r.applyHarness(fmt.Sprintf("assistant %q", a.GraphID), harnessKeys{a.Loops, a.Verify, a.Budget, a.LocalContext}); err != nil {
		return err
	}
	if a.MaxCost != nil {
		if *a.MaxCost < 0 {
			return fmt.Errorf("assistant %q: max_cost must not be negative", a.GraphID)
		}
		r.budget.Dollars, r.budgetSet = *a.MaxCost, true
	}
	f.GrepRegexp = f.GrepRegexp || a.GrepRegexp
	return nil
}
