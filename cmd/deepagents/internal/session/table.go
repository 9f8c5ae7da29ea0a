package session

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/isolate"
)

// This file declares the CLI's plain settings once: settingTable has a row
// for each, saying its flag, its configuration key, whether a thread keeps
// it, and where its value is held in Flags and Settings (both declared
// below, beside the table). Flag registration (RegisterFlags), the flags'
// checks (CheckFlags), reading the configuration (loadConfig), applying it
// (applyConfig), a thread's kept values (adopt) and the settings a thread
// records (settings) all walk the table. The settings whose precedence is
// their own (the workspace, the profile, the permission mode, the rules,
// the approvals, the network, the MCP files) are resolved by hand in
// resolve.go, and their flags registered by the command.

// settingTable is the plain settings. Each resolves as: the flag when
// given; else, on a continued thread that keeps it, the thread's value;
// else the user's configuration file's key; else the flag's default.
var settingTable = []setting{
	row[string]{flag: "model", key: "model", keep: kept,
		usage: "model as provider:model (e.g. anthropic:claude-sonnet-4-5, openai:gpt-4.1, ollama:qwen3, replay:FILE)",
		flags: func(f *Flags) *string { return &f.Model }, kept: func(s *Settings) *string { return &s.Model }},
	row[bool]{flag: "shell", key: "shell", keep: kept,
		usage: "let the agent run shell commands in the workspace (the execute tool), isolated as --sandbox says",
		flags: func(f *Flags) *bool { return &f.Shell }, kept: func(s *Settings) *bool { return &s.Shell },
		// A served agent without --dir has its workspace in each thread's
		// state, where no command runs.
		configApplies: func(r *resolver) bool { return !r.stateWorkspace }},
	row[bool]{flag: "grep-regexp", keep: kept,
		usage: "grep takes RE2 regular expressions instead of literal text",
		flags: func(f *Flags) *bool { return &f.GrepRegexp }, kept: func(s *Settings) *bool { return &s.GrepRegexp }},
	row[int]{flag: "max-steps", keep: kept,
		usage: fmt.Sprintf("maximum model calls in one run (default %d)", agent.DefaultMaxSteps),
		flags: func(f *Flags) *int { return &f.MaxSteps }, kept: func(s *Settings) *int { return &s.MaxSteps },
		valid: notNegative[int]},
	row[int]{flag: "max-parallel-tools", key: "max_parallel_tools", keep: keptIfSet,
		usage: fmt.Sprintf("the most tool calls of one turn that run at once (default %d); 1 runs them one by one", agent.DefaultMaxParallelTools),
		flags: func(f *Flags) *int { return &f.MaxParallelTools }, kept: func(s *Settings) *int { return &s.MaxParallelTools },
		valid: notNegative[int]},
	row[string]{flag: "isolation", key: "isolation", keep: keptIfSet,
		usage: "where the task tool's subagents that set none work: auto (a workspace of their own when a turn starts several, merged back), worktree or copy (always their own: a git worktree, or a copy), none (the folder itself)",
		flags: func(f *Flags) *string { return &f.Isolation }, kept: func(s *Settings) *string { return &s.Isolation },
		valid: func(s string) error {
			if _, err := isolate.ParseMode(s); err != nil {
				return fmt.Errorf("must be auto, worktree, copy or none, not %q", s)
			}
			return nil
		}},
	row[bool]{flag: "multi-edit", key: "multi_edit", keep: keptIfSet,
		usage: "offer the multi_edit tool: several edits of one file in one call, every one or none",
		flags: func(f *Flags) *bool { return &f.MultiEdit }, kept: func(s *Settings) *bool { return &s.MultiEdit }},
	// The configuration's budget.dollars is the budget's (budgetOf).
	row[float64]{flag: "max-cost", def: DefaultMaxCost,
		usage: "the dollars a task (one prompt, its subagents included) may spend at the models' prices before its last turn, without tools, asks for the final answer; 0 for no limit (see docs/harness.md)",
		flags: func(f *Flags) *float64 { return &f.MaxCost }, valid: notNegative[float64]},
	row[string]{flag: "durability", def: "async",
		usage: "when steps are checkpointed: async (while the next step runs; a crash loses at most the steps not yet shown as checkpoint events), sync (before the next step) or exit (once, when the run ends)",
		flags: func(f *Flags) *string { return &f.Durability },
		valid: func(s string) error {
			if _, err := agent.ParseDurability(s); err != nil {
				return fmt.Errorf("must be async, sync or exit, not %q", s)
			}
			return nil
		}},
	row[string]{flag: "sandbox", def: "bwrap", key: "sandbox.mode", keep: keptIfSet,
		usage: "how execute is isolated: bwrap (bubblewrap: no network, the system read-only, only the workspace writable, no process outlives its command) or none (commands run as you, unisolated)",
		flags: func(f *Flags) *string { return &f.Sandbox }, kept: func(s *Settings) *string { return &s.Sandbox },
		valid: func(s string) error {
			if s != "bwrap" && s != "none" {
				return fmt.Errorf("must be bwrap or none, not %q", s)
			}
			return nil
		}},
	row[string]{flag: "record",
		usage: "record every model request and response to FILE, for --model replay:FILE",
		flags: func(f *Flags) *string { return &f.Record }},
	row[bool]{flag: "trust-workspace",
		usage: "trust what the workspace's files name to run: start the MCP servers of its .mcp.json and run the hooks of its .claude/settings.json, .claude/settings.local.json and .deepagents/config.yaml (they run commands the repository names); and read the files other agents keep in it (CLAUDE.md, .claude/agents, .claude/commands, .claude/skills, .agents/skills)",
		flags: func(f *Flags) *bool { return &f.TrustWorkspace }},
	row[bool]{flag: SystemDirFlag,
		usage: "accept a system folder (/, /usr, /etc, /var/lib and the like) as the workspace: the agent may then change what the system runs",
		flags: func(f *Flags) *bool { return &f.AllowSystemDir }},
	// The configuration's protected_paths is a list of its own
	// (protectedPaths).
	row[string]{flag: "protected-paths", def: strings.Join(backend.ProtectedPaths, ","),
		usage: "comma-separated workspace paths (at any depth) that write_file and edit_file ask before changing and the sandbox keeps read-only, such as .git/hooks; none turns this off",
		flags: func(f *Flags) *string { return &f.ProtectedPaths }},
}

// Flags are the values of the flags of a command that runs an agent, as
// given or by default. The command checks them (a known --sandbox, an
// existing --dir) before it resolves anything.
type Flags struct {
	Model string
	// Profile is --profile: the built-in harness profile to use instead of
	// the model's.
	Profile string
	// Dir is the workspace folder: --dir, else the current directory;
	// absolute, its symbolic links resolved.
	Dir      string
	MaxSteps int
	// MaxParallelTools is --max-parallel-tools: 0 is the agent's default.
	MaxParallelTools int
	// MultiEdit is --multi-edit.
	MultiEdit bool
	// Isolation is --isolation ("" is auto).
	Isolation string
	// MaxCost is --max-cost: the dollars a task (a prompt) may spend; 0 is
	// no limit, and Given("max-cost") says whether it was set.
	MaxCost    float64
	Durability string
	Shell      bool
	Sandbox    string // "bwrap" or "none"
	// Network is --network: "" when not given, else a NetworkMode's
	// text as given (the command checks it). AllowDomains and DenyDomains are
	// --allow-domain and --deny-domain.
	Network                   string
	AllowDomains, DenyDomains []string
	GrepRegexp                bool
	InterruptOn               string // comma-separated, as given
	// PermissionMode is --permission-mode ("" when not given); AutoApprove
	// (--auto-approve) is --permission-mode auto.
	PermissionMode string
	AutoApprove    bool
	Record         string
	Rules          RuleLists // --allow, --ask, --deny
	// MCPConfigs are --mcp-config files.
	MCPConfigs []string
	// TrustWorkspace (--trust-workspace) trusts what the workspace's files
	// name to run: the MCP servers of its .mcp.json start, and the hooks
	// of its .deepagents/config.yaml and .claude/settings*.json run.
	TrustWorkspace bool
	// AllowSystemDir (--allow-system-dir) accepts a system folder as the
	// workspace (see checkWorkspaceDir).
	AllowSystemDir bool
	// ProtectedPaths is --protected-paths.
	ProtectedPaths string
	// Given reports whether a flag was set on the command line, by name
	// ("model", "interrupt-on"): those win over the configuration and a
	// thread's settings. Nil means none was.
	Given func(name string) bool
}

// Settings are how a thread was run: a continued or resumed run uses
// them for every flag it is not given, so that resuming a thread that used
// execute offers execute again, with the same approvals, in the same
// workspace.
type Settings struct {
	Model string `json:"model,omitempty"`
	// Profile is the built-in profile chosen (--profile, the
	// configuration's profile.name); "" for the model's own.
	Profile string      `json:"profile,omitempty"`
	Dir     string      `json:"dir"`
	Shell   bool        `json:"shell,omitempty"`
	Sandbox string      `json:"sandbox,omitempty"`
	Network NetworkMode `json:"network,omitempty"`
	// AllowDomains and DenyDomains are the run's --allow-domain and
	// --deny-domain.
	AllowDomains []string  `json:"allow_domains,omitempty"`
	DenyDomains  []string  `json:"deny_domains,omitempty"`
	GrepRegexp   bool      `json:"grep_regexp,omitempty"`
	InterruptOn  []string  `json:"interrupt_on"`
	Rules        RuleLists `json:"rules"`
	MaxSteps     int       `json:"max_steps,omitempty"`
	// MaxParallelTools is --max-parallel-tools (0: the agent's default).
	MaxParallelTools int `json:"max_parallel_tools,omitempty"`
	// MultiEdit is --multi-edit.
	MultiEdit bool `json:"multi_edit,omitempty"`
	// Isolation is --isolation.
	Isolation string `json:"isolation,omitempty"`
	// MCPConfigs are the --mcp-config files, absolute: a resumed run
	// starts their servers again, which the rules may name.
	MCPConfigs []string `json:"mcp_configs,omitempty"`
	// Subagents are the names of the subagents the run had. They come
	// from files, not flags: a continued run loads the files again and
	// says when the set changed.
	Subagents []string `json:"subagents"`
}

// keep is whether, and how, a thread keeps a setting.
type keep int

const (
	notKept keep = iota
	// kept: a continued thread uses the value it ran with, whatever it is.
	kept
	// keptIfSet: only a value other than the zero value (an older thread
	// may have recorded none).
	keptIfSet
)

// row is one setting of settingTable: its flag (name, usage, default),
// its configuration key ("" for none; "section.key" for a key of a
// section, such as sandbox.mode), whether a thread keeps it, and where
// Flags and Settings hold it.
type row[T comparable] struct {
	flag, usage string
	def         T
	key         string
	keep        keep
	flags       func(*Flags) *T
	// kept is the setting in Settings; nil unless keep says it is kept.
	kept func(*Settings) *T
	// valid checks a value, the flag's and the configuration's alike: an
	// error says what is wrong after the setting's name ("must be ...").
	valid func(T) error
	// configApplies, when set, says whether the configuration's value
	// applies to this resolution.
	configApplies func(*resolver) bool
}

// setting is a row of any type.
type setting interface {
	flagName() string
	configKey() string
	keeps() bool
	register(fs FlagSet, f *Flags)
	checkFlag(f *Flags) error
	// decode decodes the configuration's value of the setting.
	decode(n *yaml.Node) (any, error)
	// applyConfig makes v (decode's) the setting's unless the flag was
	// given; path is the configuration file's.
	applyConfig(r *resolver, path string, v any) error
	// adopt makes the thread's value (old's) the setting's unless the
	// flag was given, and checks it as the flag's: a thread's record is
	// no more trusted than the command line.
	adopt(r *resolver, old *Settings, note func(flag, was, now string)) error
	record(f *Flags, s *Settings)
}

// FlagSet is where RegisterFlags registers the table's flags: a command's
// *pflag.FlagSet.
type FlagSet interface {
	StringVar(p *string, name, value, usage string)
	IntVar(p *int, name string, value int, usage string)
	BoolVar(p *bool, name string, value bool, usage string)
	Float64Var(p *float64, name string, value float64, usage string)
}

// RegisterFlags registers the flag of each plain setting on fs, its value
// held in f. (The command registers the flags resolved by hand.)
func RegisterFlags(fs FlagSet, f *Flags) {
	for _, s := range settingTable {
		s.register(fs, f)
	}
}

// CheckFlags checks the values of the plain settings' flags, as given or
// by default: "--max-steps must not be negative".
func CheckFlags(f Flags) error {
	for _, s := range settingTable {
		if err := s.checkFlag(&f); err != nil {
			return err
		}
	}
	return nil
}

func (rw row[T]) flagName() string  { return rw.flag }
func (rw row[T]) configKey() string { return rw.key }
func (rw row[T]) keeps() bool       { return rw.keep != notKept }

func (rw row[T]) register(fs FlagSet, f *Flags) {
	switch p := any(rw.flags(f)).(type) {
	case *string:
		fs.StringVar(p, rw.flag, any(rw.def).(string), rw.usage)
	case *int:
		fs.IntVar(p, rw.flag, any(rw.def).(int), rw.usage)
	case *bool:
		fs.BoolVar(p, rw.flag, any(rw.def).(bool), rw.usage)
	case *float64:
		fs.Float64Var(p, rw.flag, any(rw.def).(float64), rw.usage)
	}
	// (A row of another type has no flag: TestSettingTableRoundTrips
	// finds it missing.)
}

func (rw row[T]) checkFlag(f *Flags) error {
	if rw.valid == nil {
		return nil
	}
	if err := rw.valid(*rw.flags(f)); err != nil {
		return fmt.Errorf("--%s %w", rw.flag, err)
	}
	return nil
}

func (rw row[T]) decode(n *yaml.Node) (any, error) {
	var v T
	if err := n.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s: %w", rw.key, err)
	}
	return v, nil
}

func (rw row[T]) applyConfig(r *resolver, path string, v any) error {
	val := v.(T)
	if r.given(rw.flag) || rw.configApplies != nil && !rw.configApplies(r) {
		return nil
	}
	if rw.valid != nil {
		if err := rw.valid(val); err != nil {
			return UsageError{fmt.Errorf("%s: %s %w", path, rw.key, err)}
		}
	}
	*rw.flags(&r.f) = val
	return nil
}

func (rw row[T]) adopt(r *resolver, old *Settings, note func(flag, was, now string)) error {
	if rw.keep == notKept {
		return nil
	}
	was, now := rw.kept(old), rw.flags(&r.f)
	if r.given(rw.flag) {
		note("--"+rw.flag, fmt.Sprint(*was), fmt.Sprint(*now))
		return nil
	}
	var zero T
	if rw.keep == kept || *was != zero {
		if rw.valid != nil {
			if err := rw.valid(*was); err != nil {
				return fmt.Errorf("ran with --%s %v, which %w", rw.flag, *was, err)
			}
		}
		*now = *was
	}
	return nil
}

func (rw row[T]) record(f *Flags, s *Settings) {
	if rw.keep != notKept {
		*rw.kept(s) = *rw.flags(f)
	}
}

func notNegative[T int | float64](v T) error {
	if v < 0 {
		return errors.New("must not be negative")
	}
	return nil
}

// tableKeys are the keys of a configuration file's mapping that its
// struct does not name (an inline map): settingTable's keys, or mistakes.
type tableKeys map[string]yaml.Node

// configSections are the sections of a configuration file that may hold
// keys of settingTable ("sandbox" for sandbox.mode), by name.
var configSections = map[string]func(*config) tableKeys{
	"sandbox": func(c *config) tableKeys {
		if c.Sandbox == nil {
			return nil
		}
		return c.Sandbox.Table
	},
}

// settingByKey is the row of a configuration key; nil for none (and for
// "", which a row without a key has, and a file may write as "": x).
func settingByKey(key string) setting {
	if key == "" {
		return nil
	}
	for _, s := range settingTable {
		if s.configKey() == key {
			return s
		}
	}
	return nil
}

// decodeTable decodes the table's keys of c into c.values, and refuses a
// key no row or field knows, as yaml's KnownFields would, at the key's
// line of data (the file c was decoded from).
func (c *config) decodeTable(data []byte) error {
	type unknown struct {
		line     int
		key, typ string
	}
	var bad []unknown
	var errs []error
	walk := func(prefix, typ string, keys tableKeys) {
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			n := keys[k]
			s := settingByKey(prefix + k)
			if s == nil {
				bad = append(bad, unknown{keyLine(data, prefix+k, n.Line), k, typ})
				continue
			}
			if n.ShortTag() == "!!null" {
				continue // written without a value: not set
			}
			v, err := s.decode(&n)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if str, ok := v.(string); ok && str == "" {
				continue // a string's "" is none
			}
			if c.values == nil {
				c.values = map[string]any{}
			}
			c.values[prefix+k] = v
		}
	}
	walk("", "session.config", c.Table)
	for _, name := range slices.Sorted(maps.Keys(configSections)) {
		walk(name+".", fmt.Sprintf("session.%sConfig", name), configSections[name](c))
	}
	if len(bad) > 0 {
		slices.SortStableFunc(bad, func(a, b unknown) int { return a.line - b.line })
		var b strings.Builder
		b.WriteString("yaml: unmarshal errors:")
		for _, u := range bad {
			fmt.Fprintf(&b, "\n  line %d: field %s not found in type %s", u.line, u.key, u.typ)
		}
		return errors.New(b.String())
	}
	return errors.Join(errs...)
}

// keyLine is the line of the key at path (dotted) in the YAML document
// data; def when it cannot be found.
func keyLine(data []byte, path string, def int) int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return def
	}
	n := doc.Content[0]
	line := def
	for _, part := range strings.Split(path, ".") {
		if n.Kind != yaml.MappingNode {
			return def
		}
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == part {
				line, n, found = n.Content[i].Line, n.Content[i+1], true
				break
			}
		}
		if !found {
			return def
		}
	}
	return line
}

// userOnlyKeys are the keys a workspace's configuration may not set, as
// its note lists them: the table's among the others.
func userOnlyKeys() string {
	keys := []string{"model", "profile", "shell", "sandbox"}
	for _, s := range settingTable {
		top, _, _ := strings.Cut(s.configKey(), ".")
		if top != "" && !slices.Contains(keys, top) {
			keys = append(keys, top)
		}
	}
	keys = append(keys, "mcp_servers", "permission_mode", "classifier_model", "rewind", "loops", "verify", "budget", "local_context", "background_approval_wait")
	return strings.Join(keys[:len(keys)-1], ", ") + " and " + keys[len(keys)-1]
}
