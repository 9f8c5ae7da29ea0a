package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/deepagents-go/deepagents/hooks"
	"github.com/deepagents-go/deepagents/llm"
)

// configFile is the name of the CLI's configuration file, in the user's
// ~/.deepagents and in a workspace's .deepagents.
const configFile = "config.yaml"

// config is what a configuration file may hold. Unknown keys are errors,
// so a typo does not silently leave a rule out.
type config struct {
	// Table holds the keys of settingTable's rows (model, shell, ...), as
	// written; values are them decoded (decodeTable), by key.
	Table  tableKeys `yaml:",inline"`
	values map[string]any
	// InterruptOn are the tools that need approval by default
	// (--interrupt-on).
	InterruptOn []string `yaml:"interrupt_on"`
	// Sandbox is the defaults of --sandbox (its mode, a key of the
	// table's) and --network.
	Sandbox *sandboxConfig `yaml:"sandbox"`
	// MCPServers are MCP servers, as the mcpServers of a .mcp.json.
	MCPServers  map[string]any `yaml:"mcp_servers"`
	Permissions RuleLists      `yaml:"permissions"`
	// Prices, by "provider:model", add to or replace the built-in list
	// prices the text output's costs come from (US dollars per million
	// tokens).
	Prices map[string]llm.Price `yaml:"prices"`
	// ProtectedPaths replace the workspace paths file tools ask before
	// writing and the sandbox keeps read-only (backend.ProtectedPaths by
	// default; an empty list turns the protection off). In a workspace's
	// file they add to the list.
	ProtectedPaths *[]string `yaml:"protected_paths"`
	// Profile chooses and changes the harness profile (--profile names
	// it); only the user's file may.
	Profile *ProfileChoice `yaml:"profile"`
	// PermissionMode is the default --permission-mode of new threads;
	// only the user's file may set it.
	PermissionMode string `yaml:"permission_mode"`
	// ClassifierModel is the model spec of auto mode's classifier
	// (provider:model); "" is the session's model. Only the user's file
	// may set it.
	ClassifierModel string `yaml:"classifier_model"`
	// Rewind false keeps no workspace checkpoints of files (the turns, and
	// so the conversation's rewind, stay); only the user's file may set
	// it. See docs/rewind.md.
	Rewind *bool `yaml:"rewind"`
	// Loops sets the loop guard (docs/harness.md); only the user's file
	// may.
	Loops *loopsConfig `yaml:"loops"`
	// LocalContext tells the model what the workspace is, once per thread
	// (docs/harness.md); only the user's file may.
	LocalContext bool `yaml:"local_context"`
	// Verify turns the verification pass on (docs/harness.md); only the
	// user's file may.
	Verify *verifyConfig `yaml:"verify"`
	// Budget sets each task's budgets (docs/harness.md); only the user's
	// file may.
	Budget *budgetConfig `yaml:"budget"`
	// Hooks are hooks in Claude Code's format, naming the agent's tools
	// (execute, write_file, ...). A workspace's run only with
	// --trust-workspace.
	Hooks hooks.Settings `yaml:"hooks"`
	// BackgroundApprovalWait is how long a background task waiting for
	// approval waits in a headless run (no terminal, not served) before it
	// is denied: a Go duration, "0" to wait until answered (deepagents
	// resume --task); only the user's file may.
	BackgroundApprovalWait string `yaml:"background_approval_wait"`
}

// loopsConfig is the loop guard's thresholds (loops.Config): 0 or
// missing keeps a default, a negative number turns the check off, and
// off: true turns the guard off.
type loopsConfig struct {
	Off   bool `yaml:"off"`
	Nudge int  `yaml:"nudge"`
	Stop  int  `yaml:"stop"`
	Reads int  `yaml:"reads"`
}

// verifyConfig is the verification pass: how many times a run is sent
// back (0: once), and the rubric a grader grades each answer against.
type verifyConfig struct {
	Passes int    `yaml:"passes"`
	Rubric string `yaml:"rubric"`
	// RubricFile holds the rubric instead: a path, absolute or relative
	// to the configuration file's folder.
	RubricFile string `yaml:"rubric_file"`
}

// budgetConfig is a task's budgets (budget.Config): 0 or missing is no
// limit, but for dollars, whose default is DefaultMaxCost.
type budgetConfig struct {
	Dollars *float64 `yaml:"dollars"`
	Tokens  int      `yaml:"tokens"`
	Steps   int      `yaml:"steps"`
	Time    string   `yaml:"time"` // a Go duration: 30m
}

// sandboxConfig is how execute is isolated, and the network its
// commands have (docs/CLI.md, "The network").
type sandboxConfig struct {
	// Table holds the keys of settingTable's rows (mode: bwrap or none).
	Table   tableKeys    `yaml:",inline"`
	Network *NetworkMode `yaml:"network"`
	// AllowDomains and DenyDomains are host patterns (netproxy.Rules): with
	// the proxy, what commands may reach and may not. Allowing a host
	// turns the proxy on unless network says otherwise.
	AllowDomains []string `yaml:"allow_domains"`
	DenyDomains  []string `yaml:"deny_domains"`
	// MaxBytesOut caps the bytes one run's commands send through the
	// proxy (netproxy.DefaultMaxBytesOut when 0, no cap when negative).
	MaxBytesOut int64 `yaml:"max_bytes_out"`
	// Resolve maps names, as "name:port", to the addresses ("ip:port")
	// the proxy connects them to instead of asking DNS: a mirror on the
	// local network, which a name could not otherwise lead to.
	Resolve map[string]string `yaml:"resolve"`
}

// RuleLists are permission rules as written: "tool" or "tool(pattern)".
type RuleLists struct {
	Allow []string `yaml:"allow" json:"allow,omitempty"`
	Ask   []string `yaml:"ask" json:"ask,omitempty"`
	Deny  []string `yaml:"deny" json:"deny,omitempty"`
}

// loadConfig reads the configuration file at path; a missing file is an
// empty configuration.
func loadConfig(path string) (config, error) {
	var c config
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	if err := c.decodeTable(data); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// UserPrices returns the prices of the user's configuration file, for
// the commands that show what threads cost without running one (a run's
// are Spec.Prices); a file that cannot be read leaves the built-in prices
// alone (a run reports its errors).
func UserPrices(p Places) map[string]llm.Price {
	if p.Config == "" {
		return nil
	}
	c, err := loadConfig(p.Config)
	if err != nil {
		return nil
	}
	return c.Prices
}
