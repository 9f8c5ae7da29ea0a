package session

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/hooks"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/mcp"
	"github.com/deepagents-go/deepagents/middleware/budget"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/middleware/loops"
	"github.com/deepagents-go/deepagents/middleware/verify"
	"github.com/deepagents-go/deepagents/netproxy"
	"github.com/deepagents-go/deepagents/permission"
	"github.com/deepagents-go/deepagents/persist"
	"github.com/deepagents-go/deepagents/tool"
)

// Inputs are what Resolve resolves.
type Inputs struct {
	Flags Flags
	// Getenv reads the environment: MCP and subagent files may name
	// variables ($VAR) for their keys.
	Getenv func(string) string
	// Places are the user's folders (Locate).
	Places Places
	// DB is the database the session runs on; Resolve reads only its
	// kind and location (where histories are kept, which files to hide).
	DB *persist.DB
	// Thread is the thread the run continues ("" for a new one), and Kept
	// the settings it kept (LoadKept; nil for none).
	Thread string
	Kept   *Kept
	// Interactive runs ask for approvals on a terminal, so that writes
	// (and commands, with a shell) ask by default.
	Interactive bool
	// Served agents (serve, mcp-serve) keep each thread's workspace in its
	// state unless --dir is given.
	Served bool
	// Assistant is an assistant of serve's file, resolved over Flags
	// instead of the configuration files and a thread's settings.
	Assistant *Assistant
}

// Spec is a resolved session: everything Open opens, and what the
// commands show and record. Nothing changes it once Resolve returns it.
type Spec struct {
	// Thread is the thread the run continues; "" for a new one.
	Thread string
	// Model is the model spec (provider:model); "" for the environment's
	// default. Record is a file to record the model's calls to.
	Model  string
	Record string
	// Profile is the harness profile chosen: --profile, and the user's
	// configuration file's profile: section.
	Profile ProfileChoice
	// Dir is the workspace folder; StateWorkspace keeps the workspace in
	// each thread's state instead (a served agent without --dir), Dir
	// then being only where MCP servers start.
	Dir            string
	StateWorkspace bool
	// NoFileCheckpoints records the turns alone, not the folder's files
	// (the user's configuration says rewind: false, or the workspace is
	// the home folder or the root, too large to record at each prompt).
	NoFileCheckpoints bool
	// Loops is the loop guard's configuration (the user's file's loops).
	Loops loops.Config
	// Budget is each task's budgets: --max-cost, the user's file's budget.
	Budget budget.Config
	// Verify is the verification pass, nil when off (the user's file's
	// verify).
	Verify *verify.Config
	// LocalContext is the user's file's local_context.
	LocalContext bool
	// ApprovalWait is how long a background task waiting for approval
	// waits before it is denied (background.Options.ApprovalWait): in a
	// headless run, DefaultHeadlessApprovalWait or the user's file's
	// background_approval_wait; zero (until answered) when someone is
	// asked (a terminal, a server's clients, an editor).
	ApprovalWait time.Duration
	// Shell gives the agent execute, isolated as Sandbox ("bwrap" or
	// "none") says; Network is the network sandboxed commands have.
	Shell   bool
	Sandbox string
	Network NetworkMode
	// AllowDomains and DenyDomains are the proxy's rules (the flags' and the
	// user's file's together); NetMaxBytesOut and NetResolve its cap on
	// bytes sent and its names resolved without DNS (the user's file's
	// sandbox.max_bytes_out and sandbox.resolve).
	AllowDomains, DenyDomains []string
	NetMaxBytesOut            int64
	NetResolve                map[string]string
	// UserConfig is the user's configuration file, where an "always"
	// answer to the network's question is kept ("" for none).
	UserConfig string
	GrepRegexp bool
	MaxSteps   int
	Durability deepagents.Durability
	// InterruptOn are the tools that ask for approval, as the permission
	// mode says.
	InterruptOn []string
	// PermissionMode is the mode the run starts in: --permission-mode (or
	// --auto-approve), else the mode the continued thread was in, else the
	// user's configuration file's permission_mode, else ask.
	PermissionMode hitl.Mode
	// ClassifierModel is auto mode's classifier's model spec; "" is the
	// session's model.
	ClassifierModel string
	// Rules are the permission rules of the configuration files and the
	// flags, the protected paths' ask rules last; nil for none.
	Rules *permission.Rules
	// RuleSources say where each rule of Rules comes from, in order: a
	// configuration file's path, "flags" (--allow, --ask, --deny, or the
	// rules the thread kept), or "protected_paths".
	RuleSources []string
	// ConfigFiles are the configuration files this session reads (the
	// user's, the workspace's), whether or not they exist.
	ConfigFiles []string
	// Protected are the workspace paths the sandbox keeps read-only (the
	// rules ask before a file tool writes them).
	Protected []string
	// ReadOnly and Unreadable are host paths the model may not change or
	// read whatever the workspace is (workspace.Config).
	ReadOnly, Unreadable []string
	// UserDir is the user's folder, shown read-only at /user/; "" for
	// none (no home, or an assistant, which is not shown the operator's).
	// Home is the user's home, whose other agents' skill folders are
	// shown there too (workspace.OtherSkillDirs); "" when UserDir is.
	UserDir, Home string
	// PluginSkills are the skill folders of the user's installed plugins,
	// as the agent sees them (below /user/).
	PluginSkills []string
	// OtherAgents reads the workspace's files of other agents (Claude
	// Code's skills and CLAUDE.md, the .agents skills): with
	// --trust-workspace (workspace.Config.OtherAgents).
	OtherAgents bool
	// HistoryDir keeps conversation histories beside a SQLite database;
	// "" keeps them in each thread's state.
	HistoryDir string
	// MCP are the MCP servers to start, by name.
	MCP map[string]mcp.ServerConfig
	// Hooks are the hooks of the configuration files (the workspace's with
	// --trust-workspace), in the order the files are read: the user's
	// config.yaml, ~/.claude/settings.json, then the workspace's
	// .deepagents/config.yaml, .claude/settings.json and
	// .claude/settings.local.json.
	Hooks []hooks.Hook
	// Subagents and AsyncSubagents are those of the subagent files, or an
	// assistant's; their models are specs Open opens.
	Subagents      []Subagent
	AsyncSubagents []AsyncSubagent
	// Commands are the user's and the workspace's command files
	// (/NAME ARGS), a later folder's winning a name.
	Commands []Command
	// SystemPrompt, Memory and Skills are an assistant's: its prompt, and
	// the memory files and skill folders replacing the workspace's (nil:
	// the workspace's).
	SystemPrompt   string
	Memory, Skills []string
	// Settings are how the run runs, to be recorded on its thread.
	Settings Settings
	// Prices are the user's, over the built-in list prices.
	Prices map[string]llm.Price
	// Notes are what resolving had to say ("note: ..." lines), for the
	// caller to print.
	Notes []string
}

// Subagent is a subagent to give the agent.
type Subagent struct {
	// Subagent is its definition, without its Model.
	deepagents.Subagent
	// ModelSpec is its model (provider:model); "" for the main agent's.
	ModelSpec string
	// From says where it is defined, for errors: "subagent file PATH".
	From string
}

// AsyncSubagent is a background subagent: local (no URL), or remote.
type AsyncSubagent struct {
	Subagent
	// URL and GraphID name a remote subagent's server and graph, and
	// Headers go with its requests (keys, from the environment); a local
	// one has none.
	URL, GraphID string
	Headers      map[string]string
}

// resolver is one resolution under way: the flags as resolved so far
// and what was read.
type resolver struct {
	in    Inputs
	f     Flags
	given func(string) bool
	// interruptOK: the approvals are f.InterruptOn, not the defaults.
	interruptOK    bool
	stateWorkspace bool
	// configMCP are the MCP servers of the user's configuration file.
	configMCP map[string]mcp.ServerConfig
	// The network of the user's file's sandbox: section (Spec's
	// AllowDomains, DenyDomains, NetMaxBytesOut and NetResolve).
	cfgAllowDomains, cfgDenyDomains []string
	netMaxBytesOut                  int64
	netResolve                      map[string]string
	// goneMCP are the --mcp-config files a resumed thread ran with that
	// cannot be read now.
	goneMCP []string
	// configs are the configuration files read, by path.
	configs map[string]configRead
	// agents are the user's subagent files as read, once.
	agents     []agentRead
	agentsRead bool
	// pluginList are the user's installed plugins, read once.
	pluginList  []Plugin
	pluginsRead bool
	notes       []string
	// profile is the profile: section of the user's file, its name
	// replaced by --profile.
	profile ProfileChoice
	// mode is the permission mode as resolved so far.
	mode hitl.Mode
	// classifierModel is the user's file's classifier_model.
	classifierModel string
	// noFiles: the user's configuration turned workspace checkpoints off.
	noFiles bool
	// loops: the user's configuration of the loop guard.
	loops loops.Config
	// verify: the user's verification pass; localContext: the user's
	// local_context.
	verify       *verify.Config
	localContext bool
	// approvalWaitSet: the user's file set background_approval_wait, to
	// approvalWaitCfg.
	approvalWaitSet bool
	approvalWaitCfg time.Duration
	// budget: the task's budgets, as resolved so far; budgetSet: the
	// user's file set its dollars.
	budget    budget.Config
	budgetSet bool
}

// configRead is a configuration file as read, or why it could not be.
type configRead struct {
	config config
	err    error
}

// Resolve resolves a session from in. An error in how the command was
// called or configured is a UsageError.
func Resolve(in Inputs) (Spec, error) {
	return newResolver(in).resolve()
}

func newResolver(in Inputs) *resolver {
	return &resolver{in: in, f: in.Flags, configs: map[string]configRead{}}
}

// resolve is Resolve's work; r.f then holds the flags as resolved.
func (r *resolver) resolve() (Spec, error) {
	in := r.in
	r.given = func(string) bool { return false }
	if in.Flags.Given != nil {
		r.given = in.Flags.Given
	}
	r.interruptOK = r.given("interrupt-on")
	r.stateWorkspace = in.Served && !r.given("dir")
	if in.Assistant != nil {
		if err := r.overlay(in.Assistant); err != nil {
			return Spec{}, UsageError{fmt.Errorf("--assistants: %w", err)}
		}
	} else if err := r.applyConfig(); err != nil {
		return Spec{}, err
	}
	if r.f.Profile != "" {
		r.profile.Name = r.f.Profile
		if err := r.profile.check(); err != nil {
			return Spec{}, UsageError{fmt.Errorf("--profile: %w", err)}
		}
	}
	// A thread continues as it was run, but for the flags given.
	old, err := r.adopt()
	if err != nil {
		return Spec{}, err
	}
	if !r.stateWorkspace {
		home := r.in.Places.Home
		if real, err := WorkspacePath(home); err == nil && home != "" {
			home = real
		}
		// Judged where it really is: an assistant's dir may be relative
		// or a link (a flag's and ACP's are resolved already).
		dir := r.f.Dir
		if real, err := WorkspacePath(dir); err == nil && dir != "" {
			dir = real
		} else if abs, err := filepath.Abs(dir); err == nil && dir != "" {
			dir = abs
		}
		if err := checkWorkspaceDir(dir, home, r.f.AllowSystemDir); err != nil {
			return Spec{}, UsageError{err}
		}
	}
	settings := r.settings()
	rules, sources, protected, err := r.permissionRules()
	if err != nil {
		return Spec{}, err
	}
	readOnly, unreadable := r.protectHost()
	r.noteOtherAgents()
	subs, async, err := r.subagents()
	for i := range subs {
		if b := subs[i].Budget; b != nil {
			priced := *b
			priced.Prices = r.prices()
			subs[i].Budget = &priced
		}
	}
	if err != nil {
		return Spec{}, err
	}
	settings.Subagents = []string{}
	for _, sa := range subs {
		settings.Subagents = append(settings.Subagents, sa.Name)
	}
	for _, sa := range async {
		settings.Subagents = append(settings.Subagents, sa.Name+" (background)")
	}
	r.noteSubagents(old, settings.Subagents)
	interruptOn := r.interruptOn(r.in.Interactive)
	mode, err := r.permissionMode()
	if err != nil {
		return Spec{}, err
	}
	servers, err := r.mcpConfigs()
	if err != nil {
		return Spec{}, err
	}
	if err := r.checkMCPRules(rules, interruptOn, servers); err != nil {
		return Spec{}, err
	}
	hks, err := r.hooks()
	if err != nil {
		return Spec{}, err
	}
	spec := Spec{
		Thread:            in.Thread,
		Model:             r.f.Model,
		Record:            r.f.Record,
		Profile:           r.profile,
		Dir:               r.f.Dir,
		StateWorkspace:    r.stateWorkspace,
		NoFileCheckpoints: r.noFiles || !r.stateWorkspace && (r.f.Dir == "/" || r.in.Places.Home != "" && sameDir(r.f.Dir, r.in.Places.Home)),
		Loops:             r.loops,
		Budget:            r.budgetOf(),
		Verify:            r.verify,
		LocalContext:      r.localContext,
		ApprovalWait:      r.approvalWait(),
		Shell:             r.f.Shell,
		Sandbox:           r.f.Sandbox,
		Network:           r.network(),
		AllowDomains:      r.allowDomains(),
		DenyDomains:       append(slices.Clone(r.cfgDenyDomains), r.f.DenyDomains...),
		NetMaxBytesOut:    r.netMaxBytesOut,
		NetResolve:        r.netResolve,
		UserConfig:        r.in.Places.Config,
		GrepRegexp:        r.f.GrepRegexp,
		MaxSteps:          r.f.MaxSteps,
		Durability:        deepagents.Durability(r.f.Durability),
		InterruptOn:       interruptOn,
		PermissionMode:    mode,
		ClassifierModel:   r.classifierModel,
		Rules:             rules,
		RuleSources:       sources,
		Protected:         protected,
		ReadOnly:          readOnly,
		Unreadable:        unreadable,
		MCP:               servers,
		Hooks:             hks,
		Subagents:         subs,
		AsyncSubagents:    async,
		Commands:          r.commands(),
		Settings:          settings,
		Prices:            r.prices(),
		Notes:             r.notes,
	}
	if in.DB != nil {
		spec.HistoryDir = HistoryDir(in.DB)
	}
	if in.Assistant == nil {
		if in.Places.Config != "" {
			spec.ConfigFiles = append(spec.ConfigFiles, in.Places.Config)
		}
		spec.ConfigFiles = append(spec.ConfigFiles, r.workspaceConfig())
	}
	if a := in.Assistant; a != nil {
		spec.SystemPrompt, spec.Memory, spec.Skills = a.SystemPrompt, a.Memory, a.Skills
	} else {
		spec.UserDir = in.Places.UserDir
		if spec.UserDir != "" {
			spec.Home = in.Places.Home
		}
		spec.OtherAgents = r.trustsOtherAgents()
		spec.PluginSkills = r.pluginSkills()
	}
	return spec, nil
}

// Values returns the input values a run of the spec starts with: the
// settings to record on its thread, and its permission mode.
func (s Spec) Values() map[string]json.RawMessage {
	v := s.Settings.Values()
	maps.Copy(v, hitl.ModeValues(s.PermissionMode))
	return v
}

func (r *resolver) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

func (r *resolver) getenv(name string) string {
	if r.in.Getenv == nil {
		return ""
	}
	return r.in.Getenv(name)
}

// config returns the configuration file at path, read once.
func (r *resolver) config(path string) (config, error) {
	if c, ok := r.configs[path]; ok {
		return c.config, c.err
	}
	c, err := loadConfig(path)
	r.configs[path] = configRead{c, err}
	return c, err
}

// harnessKeys are the harness's settings of a configuration file or an
// assistant (docs/harness.md).
type harnessKeys struct {
	loops        *loopsConfig
	verify       *verifyConfig
	budget       *budgetConfig
	localContext bool
}

// applyHarness makes the harness's settings of where (a file, an
// assistant) the run's.
func (r *resolver) applyHarness(where string, h harnessKeys) error {
	r.localContext = r.localContext || h.localContext
	if v := h.verify; v != nil && v.Passes >= 0 {
		r.verify = &verify.Config{Passes: v.Passes, Rubric: v.Rubric}
		if v.RubricFile != "" {
			if v.Rubric != "" {
				return UsageError{fmt.Errorf("%s: verify: rubric and rubric_file are one or the other", where)}
			}
			p := v.RubricFile
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(where), p)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return UsageError{fmt.Errorf("%s: verify.rubric_file: %w", where, err)}
			}
			r.verify.Rubric = string(data)
		}
	}
	if b := h.budget; b != nil {
		if err := r.applyBudget(where, b); err != nil {
			return err
		}
	}
	if l := h.loops; l != nil {
		r.loops = loops.Config{Nudge: l.Nudge, Stop: l.Stop, Reads: l.Reads}
		if l.Off {
			r.loops = loops.Off
		}
		if _, err := loops.New(r.loops); err != nil {
			return UsageError{fmt.Errorf("%s: loops: %w", where, err)}
		}
	}
	return nil
}

// DefaultMaxCost is the CLI's default budget of a task, in dollars: a
// net under a run gone astray, not a limit on work (the next prompt goes
// on where the summary left off).
const DefaultMaxCost = 10.0

// applyBudget makes the user's file's budget the task's.
func (r *resolver) applyBudget(path string, b *budgetConfig) error {
	r.budget.Tokens, r.budget.Steps = b.Tokens, b.Steps
	if b.Dollars != nil {
		r.budget.Dollars = *b.Dollars
		r.budgetSet = true
	}
	if b.Time != "" {
		d, err := time.ParseDuration(b.Time)
		if err != nil {
			return UsageError{fmt.Errorf("%s: budget.time: %w", path, err)}
		}
		r.budget.Time = d
	}
	if _, err := budget.New(r.budget); err != nil {
		return UsageError{fmt.Errorf("%s: budget: %w", path, err)}
	}
	return nil
}

// budgetOf is the task's budgets: --max-cost first, then the user's
// file, then DefaultMaxCost; priced as the user's file says.
func (r *resolver) budgetOf() budget.Config {
	b := r.budget
	switch {
	case r.given("max-cost"):
		b.Dollars = r.f.MaxCost
	case !r.budgetSet:
		b.Dollars = DefaultMaxCost
	}
	b.Prices = r.prices()
	return b
}

// workspaceConfig is the configuration file of the workspace as resolved
// so far.
func (r *resolver) workspaceConfig() string {
	return filepath.Join(r.f.Dir, ".deepagents", configFile)
}

// applyConfig makes the user's configuration file the defaults of the
// flags not given, and adds the approvals of the workspace's. A
// workspace's file comes with the repository the agent works on, so it may
// only add approvals and ask and deny rules (see permissionRules): its
// model, shell, sandbox and MCP servers are ignored, with a note. (The
// workspace is the one of the command line, a thread's not adopted yet.)
func (r *resolver) applyConfig() error {
	f := &r.f
	if path := r.in.Places.Config; path != "" {
		c, err := r.config(path)
		if err != nil {
			return UsageError{err}
		}
		for _, st := range settingTable {
			if v, ok := c.values[st.configKey()]; ok {
				if err := st.applyConfig(r, path, v); err != nil {
					return err
				}
			}
		}
		if c.Profile != nil {
			r.profile = *c.Profile
			if err := r.profile.check(); err != nil {
				return UsageError{fmt.Errorf("%s: profile: %w", path, err)}
			}
		}
		if c.Rewind != nil {
			r.noFiles = !*c.Rewind
		}
		if err := r.applyHarness(path, harnessKeys{c.Loops, c.Verify, c.Budget, c.LocalContext}); err != nil {
			return err
		}
		if c.PermissionMode != "" {
			m, err := hitl.ParseMode(c.PermissionMode)
			if err != nil {
				return UsageError{fmt.Errorf("%s: permission_mode: %w", path, err)}
			}
			if m == hitl.ModeAuto {
				r.note("note: %s: permission_mode: auto now has a classifier (the session's model) decide what would ask, as Claude Code's auto mode does, and asks what it cannot decide; for nothing asking, as auto meant before, write bypass", path)
			}
			r.mode = m
		}
		r.classifierModel = c.ClassifierModel
		if c.BackgroundApprovalWait != "" {
			d, err := time.ParseDuration(c.BackgroundApprovalWait)
			if err != nil || d < 0 {
				return UsageError{fmt.Errorf("%s: background_approval_wait: want a duration such as 2m, or 0 to wait until answered: %q", path, c.BackgroundApprovalWait)}
			}
			r.approvalWaitSet, r.approvalWaitCfg = true, d
		}
		if c.InterruptOn != nil && !r.given("interrupt-on") {
			f.InterruptOn, r.interruptOK = joinList(c.InterruptOn), true
		}
		if sb := c.Sandbox; sb != nil {
			if sb.Network != nil && !r.given("network") {
				f.Network = string(*sb.Network)
			}
			if _, err := netproxy.ParseRules(sb.AllowDomains, sb.DenyDomains); err != nil {
				return UsageError{fmt.Errorf("%s: sandbox: %w", path, err)}
			}
			r.cfgAllowDomains, r.cfgDenyDomains = sb.AllowDomains, sb.DenyDomains
			r.netMaxBytesOut, r.netResolve = sb.MaxBytesOut, sb.Resolve
		}
		if len(c.MCPServers) > 0 {
			data, err := json.Marshal(map[string]any{"mcpServers": c.MCPServers})
			if err != nil {
				return UsageError{fmt.Errorf("%s: mcp_servers: %w", path, err)}
			}
			if r.configMCP, err = mcp.Parse(data, r.getenv); err != nil {
				return UsageError{fmt.Errorf("%s: mcp_servers: %w", path, err)}
			}
		}
	}
	path := r.workspaceConfig()
	c, err := r.config(path)
	if err != nil {
		return UsageError{err}
	}
	if len(c.values) > 0 || c.Sandbox != nil || len(c.MCPServers) > 0 || c.Profile != nil || c.PermissionMode != "" || c.ClassifierModel != "" || c.Rewind != nil || c.Loops != nil || c.Budget != nil || c.Verify != nil || c.LocalContext || c.BackgroundApprovalWait != "" {
		r.note("note: %s: %s in a workspace's configuration are ignored (it may only add approvals and ask and deny rules); put them in %s", path, userOnlyKeys(), filepath.Join("~/.deepagents", configFile))
	}
	if len(c.InterruptOn) > 0 {
		f.InterruptOn, r.interruptOK = joinList(append(r.interruptOn(r.in.Interactive), c.InterruptOn...)), true
	}
	return nil
}

// adopt makes the settings the thread was run with the defaults of the
// flags not given, and notes each given flag that changes one. It returns
// the thread's settings, nil for none.
func (r *resolver) adopt() (*Settings, error) {
	k, thread := r.in.Kept, r.in.Thread
	if k == nil || thread == "" {
		return nil, nil
	}
	old := k.Settings
	f := &r.f
	note := func(flag, was, now string) {
		if was != now {
			r.note("note: thread %s ran with %s %s; this run uses %s", thread, flag, orNone(was), orNone(now))
		}
	}
	for _, st := range settingTable {
		if err := st.adopt(r, &old, note); err != nil {
			return nil, UsageError{fmt.Errorf("thread %s %w; pass the flag", thread, err)}
		}
	}
	// The profile stays the thread's, as its prompt is part of the
	// thread's cached prefix.
	if r.given("profile") {
		note("--profile", old.Profile, r.profile.Name)
	} else if old.Profile != "" {
		r.profile.Name = old.Profile
	}
	switch {
	case r.given("dir"):
		if k.FolderErr != nil || k.Folder != f.Dir || !filepath.IsAbs(old.Dir) {
			note("--dir", old.Dir, f.Dir)
		}
	case old.Dir != "" && !filepath.IsAbs(old.Dir):
		// An older version kept --dir as typed: relative to a directory
		// nobody recorded. Going on in whatever folder has that name here
		// could write (a pending approval, say) into the wrong one.
		return nil, UsageError{fmt.Errorf("thread %s recorded its workspace as %q, relative to a directory it did not keep; pass --dir with the folder it worked in", thread, old.Dir)}
	case old.Dir != "":
		if k.Gone {
			return nil, UsageError{fmt.Errorf("thread %s worked in %s, which is gone; pass --dir", thread, old.Dir)}
		}
		if k.FolderErr != nil {
			return nil, UsageError{fmt.Errorf("thread %s worked in %s: %w; pass --dir", thread, old.Dir, k.FolderErr)}
		}
		f.Dir = k.Folder
	}
	if r.given("network") {
		note("--network", string(old.Network), string(mustNetwork(f.Network)))
	} else if old.Network != "" {
		f.Network = string(old.Network)
	}
	if !r.given("allow-domain") && old.AllowDomains != nil {
		f.AllowDomains = old.AllowDomains
	}
	if !r.given("deny-domain") && old.DenyDomains != nil {
		f.DenyDomains = old.DenyDomains
	}
	switch {
	case r.modeGiven():
		if k.Mode != "" {
			note("--permission-mode", string(k.Mode), string(r.flagMode()))
		}
	case k.Mode != "":
		r.mode = k.Mode
	}
	if r.given("interrupt-on") {
		note("approvals for", strings.Join(old.InterruptOn, ","), strings.Join(r.interruptOn(false), ","))
	} else {
		f.InterruptOn, r.interruptOK = strings.Join(old.InterruptOn, ","), true
	}
	if r.given("allow") || r.given("ask") || r.given("deny") {
		was, _ := json.Marshal(old.Rules)
		now, _ := json.Marshal(f.Rules)
		note("permission rules", string(was), string(now))
	} else {
		f.Rules = old.Rules
	}
	// The thread's rules and approvals may name the tools of the servers
	// of its --mcp-config files: they start again unless the run names
	// files of its own.
	if r.given("mcp-config") {
		note("--mcp-config", strings.Join(old.MCPConfigs, ","), strings.Join(absPaths(f.MCPConfigs), ","))
	} else {
		f.MCPConfigs = nil
		for _, p := range old.MCPConfigs {
			if _, err := os.Stat(p); err != nil {
				r.note("note: thread %s ran with --mcp-config %s, which cannot be read now (%v); its servers do not start", thread, p, err)
				r.goneMCP = append(r.goneMCP, p)
				continue
			}
			f.MCPConfigs = append(f.MCPConfigs, p)
		}
	}
	return &old, nil
}

// absPaths returns paths made absolute (as they are when that fails).
func absPaths(paths []string) []string {
	var out []string
	for _, p := range paths {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		out = append(out, p)
	}
	return out
}

// checkMCPRules refuses rules and approvals that name the tools of an MCP
// server no configuration names, saying what to pass: the agent cannot be
// built with them (unknown tools), and a resumed thread's rules may name
// the servers of a file the run was not given.
func (r *resolver) checkMCPRules(rules *permission.Rules, interruptOn []string, servers map[string]mcp.ServerConfig) error {
	names := slices.Clone(interruptOn)
	if rules != nil {
		for _, rule := range rules.Rules() {
			names = append(names, rule.Tool)
		}
	}
	var missing []string
	for _, name := range names {
		rest, ok := strings.CutPrefix(name, tool.MCPPrefix)
		if !ok {
			continue
		}
		// A pattern over server names (mcp__git*) names no one server.
		server, _, _ := strings.Cut(rest, "__")
		if _, ok := servers[server]; !ok && server != "" && !strings.ContainsAny(server, "*?[") && !slices.Contains(missing, server) {
			missing = append(missing, server)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	hint := "pass --mcp-config with the file that configures it"
	switch {
	case len(r.goneMCP) > 0:
		hint = fmt.Sprintf("the thread ran with --mcp-config %s, which cannot be read now; %s", strings.Join(r.goneMCP, ", "), hint)
	case r.in.Thread != "":
		hint = "the thread's rules or approvals may come from a run with other MCP servers; " + hint
	}
	if !r.f.TrustWorkspace {
		hint += " (or --trust-workspace, for the workspace's .mcp.json)"
	}
	return UsageError{fmt.Errorf("rules or approvals name the tools of MCP server %s, which no MCP configuration names: %s", strings.Join(missing, ", "), hint)}
}

// modeGiven reports whether the command line sets the permission mode.
func (r *resolver) modeGiven() bool {
	return r.given("permission-mode") || r.given("auto-approve") && r.f.AutoApprove
}

// flagMode is the permission mode the command line sets (the flags are
// checked: a known mode, not contradicting --auto-approve).
func (r *resolver) flagMode() hitl.Mode {
	if r.f.AutoApprove && !r.given("permission-mode") {
		return hitl.ModeBypass
	}
	m, _ := hitl.ParseMode(r.f.PermissionMode)
	return m
}

// permissionMode returns the mode the run starts in: the command line's,
// else the thread's or the user's configuration's (adopt, applyConfig),
// else ask.
func (r *resolver) permissionMode() (hitl.Mode, error) {
	if r.modeGiven() {
		if _, err := hitl.ParseMode(r.f.PermissionMode); err != nil {
			return "", UsageError{fmt.Errorf("--permission-mode: %w", err)}
		}
		return r.flagMode(), nil
	}
	if r.mode == "" {
		return hitl.ModeAsk, nil
	}
	return r.mode, nil
}

// mustNetwork is the mode s names, "" for none given (the command checked
// s: a mode it does not know is none).
func mustNetwork(s string) NetworkMode {
	if s == "" {
		return ""
	}
	m, _ := ParseNetworkMode(s)
	return m
}

// allowHosts are the proxy's allow rules: the user's file's, then the
// flags'.
func (r *resolver) allowDomains() []string {
	return append(slices.Clone(r.cfgAllowDomains), r.f.AllowDomains...)
}

// network is the network sandboxed commands have: the mode given (flag,
// thread, configuration), else the proxy when a host is allowed, else
// none. Without a sandbox it is no business of the CLI's: commands have
// the host's network anyway.
func (r *resolver) network() NetworkMode {
	if r.f.Sandbox == "none" || !r.f.Shell {
		return NetworkOff
	}
	if m := mustNetwork(r.f.Network); m != "" {
		return m
	}
	if len(r.allowDomains()) > 0 {
		return NetworkProxy
	}
	return NetworkOff
}

// settings returns the settings resolved, the approval rules included.
func (r *resolver) settings() Settings {
	f := &r.f
	on := r.interruptOn(r.in.Interactive)
	if on == nil {
		on = []string{}
	}
	s := Settings{Profile: r.profile.Name, Dir: f.Dir, Network: mustNetwork(f.Network), AllowDomains: f.AllowDomains, DenyDomains: f.DenyDomains,
		InterruptOn: on, Rules: f.Rules, MCPConfigs: absPaths(f.MCPConfigs)}
	for _, st := range settingTable {
		st.record(f, &s)
	}
	return s
}

// noteSubagents notes when the subagents a continued thread has now
// differ from those it had.
func (r *resolver) noteSubagents(old *Settings, now []string) {
	if old == nil || old.Subagents == nil || slices.Equal(old.Subagents, now) {
		return
	}
	r.note("note: thread %s ran with the subagents %s; this run has %s (the files in agents/ changed)",
		r.in.Thread, orNone(strings.Join(old.Subagents, ", ")), orNone(strings.Join(now, ", ")))
}

// permissionRules gathers the rules of the user's configuration, the
// workspace's and the flags, and the protected paths'. A workspace's
// configuration comes with the repository the agent works on, so it may
// only tighten: its allow rules are ignored, with a note.
func (r *resolver) permissionRules() (*permission.Rules, []string, []string, error) {
	type source struct {
		name  string
		lists RuleLists
	}
	var sources []source
	if path := r.in.Places.Config; path != "" {
		c, err := r.config(path)
		if err != nil {
			return nil, nil, nil, UsageError{err}
		}
		sources = append(sources, source{path, c.Permissions})
	}
	path := r.workspaceConfig()
	c, err := r.config(path)
	if err != nil {
		return nil, nil, nil, UsageError{err}
	}
	if len(c.Permissions.Allow) > 0 {
		r.note("note: %s: allow rules in a workspace's configuration are ignored (it may only add ask and deny rules); put them in %s or pass --allow", path, filepath.Join("~/.deepagents", configFile))
		c.Permissions.Allow = nil
	}
	sources = append(sources, source{path, c.Permissions}, source{"flags", r.f.Rules})
	var rules []permission.Rule
	var from []string
	for _, s := range sources {
		for _, l := range []struct {
			effect permission.Effect
			specs  []string
		}{{permission.Allow, s.lists.Allow}, {permission.Ask, s.lists.Ask}, {permission.Deny, s.lists.Deny}} {
			for _, spec := range l.specs {
				rule, err := permission.ParseRule(l.effect, spec)
				if err != nil {
					return nil, nil, nil, UsageError{fmt.Errorf("%s: %w", s.name, err)}
				}
				rules = append(rules, rule)
				from = append(from, s.name)
			}
		}
	}
	// The protected paths ask last: an allow rule of the user's
	// (allow write_file) does not reach them, a deny rule still does.
	protected, err := r.protectedPaths()
	if err != nil {
		return nil, nil, nil, err
	}
	asks, err := protectedRules(protected)
	if err != nil {
		return nil, nil, nil, err
	}
	rules = append(rules, asks...)
	for range asks {
		from = append(from, "protected_paths")
	}
	if len(rules) == 0 {
		return nil, nil, protected, nil
	}
	return permission.New(rules...), from, protected, nil
}

// prices returns the prices of the user's configuration file; a file
// that cannot be read leaves the built-in prices alone.
func (r *resolver) prices() map[string]llm.Price {
	path := r.in.Places.Config
	if path == "" {
		return nil
	}
	c, err := r.config(path)
	if err != nil {
		return nil
	}
	return c.Prices
}

// agentRead is a subagent file as read.
type agentRead struct {
	path string
	af   agentFile
	err  error
	left []string // what a Claude Code file says that is not used
	skip bool     // a Claude Code file that could not be read
}

// readAgents reads the subagent files of dir, in name order.
func (r *resolver) readAgents(dir string) []agentRead {
	paths := agentFiles(dir)
	out := make([]agentRead, 0, len(paths))
	for _, p := range paths {
		af, err := parseAgentFile(p, r.getenv)
		out = append(out, agentRead{path: p, af: af, err: err})
	}
	return out
}

// agentFiles are the subagent files of dir (*.md), in name order.
func agentFiles(dir string) []string {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	slices.Sort(paths)
	return paths
}

// readClaudeAgents reads the subagent files of Claude Code's in dir, in
// name order.
func (r *resolver) readClaudeAgents(dir string) []agentRead {
	paths := agentFiles(dir)
	out := make([]agentRead, 0, len(paths))
	for _, p := range paths {
		af, left, err := parseClaudeAgentFile(p, r.f.Shell)
		if err != nil {
			// Another tool's file: skipped, as Claude Code skips it, and
			// said in the note, rather than stopping the session.
			left = []string{"not read: " + err.Error()}
		}
		out = append(out, agentRead{path: p, af: af, left: left, skip: err != nil})
	}
	return out
}

// userAgents are the user's subagent files, read once.
func (r *resolver) userAgents() []agentRead {
	if !r.agentsRead && r.in.Places.UserDir != "" {
		r.agents = r.readAgents(filepath.Join(r.in.Places.UserDir, "agents"))
	}
	r.agentsRead = true
	return r.agents
}

// subagents gathers the subagents: those of Markdown files with front
// matter (name, description, optional tools, model and mode) whose body is
// the system prompt, from ~/.deepagents/agents/ and
// DIR/.deepagents/agents/; or an assistant's own. A project file overrides
// a user file of the same name. An invalid file (no front matter, a bad
// mode) is a usage error naming it: a subagent silently left out would
// change what the agent can do. A file with "background: true" defines a
// background subagent (start_async_task), and one with url and graph_id a
// remote background subagent; remote ones may only come from the user's
// folder, so that a project cannot send the tasks to a server of its
// choosing, nor name a model's server.
func (r *resolver) subagents() ([]Subagent, []AsyncSubagent, error) {
	if a := r.in.Assistant; a != nil {
		// An assistant of serve's file has the subagents it names, never
		// the operator's (a remote one carries the operator's keys).
		var subs []Subagent
		for _, s := range a.Subagents {
			mode, _ := subagentMode(s.Mode) // checked by LoadAssistants
			subs = append(subs, Subagent{
				Subagent:  deepagents.Subagent{Name: s.Name, Description: s.Description, SystemPrompt: s.SystemPrompt, AllowedTools: s.Tools, Mode: mode},
				ModelSpec: s.Model,
				From:      fmt.Sprintf("--assistants: assistant %q: subagent %q", a.GraphID, s.Name),
			})
		}
		return subs, nil, nil
	}
	type folder struct {
		fromUser bool
		files    []agentRead
	}
	userAgents := ""
	var folders []folder
	// Plugins' first, then Claude Code's folders: this agent's own win a
	// name they share.
	for _, p := range r.plugins() {
		folders = append(folders, folder{true, r.readClaudeAgents(filepath.Join(p.Dir, "agents"))})
	}
	if h := r.in.Places.Home; h != "" && r.in.Places.UserDir != "" {
		folders = append(folders, folder{true, r.readClaudeAgents(filepath.Join(h, ".claude", "agents"))})
	}
	if u := r.in.Places.UserDir; u != "" {
		userAgents = filepath.Join(u, "agents")
		folders = append(folders, folder{true, r.userAgents()})
	}
	if r.trustsOtherAgents() {
		folders = append(folders, folder{false, r.readClaudeAgents(filepath.Join(r.f.Dir, ".claude", "agents"))})
	}
	project := filepath.Join(r.f.Dir, ".deepagents", "agents")
	// The workspace may be the user's home, its agents the user's.
	folders = append(folders, folder{project == userAgents, r.readAgents(project)})
	byName := map[string]agentRead{}
	var order []string
	var left []string
	for _, fo := range folders {
		fromUser := fo.fromUser
		for _, a := range fo.files {
			if len(a.left) > 0 {
				left = append(left, fmt.Sprintf("%s: %s", a.path, strings.Join(a.left, ", ")))
			}
			if a.skip {
				continue
			}
			if a.err != nil {
				return nil, nil, UsageError{fmt.Errorf("subagent file %s: %w", a.path, a.err)}
			}
			if a.af.remote && !fromUser {
				return nil, nil, UsageError{fmt.Errorf("subagent file %s: a remote subagent (url) can only be defined in %s, not by a project", a.path, userAgents)}
			}
			if !fromUser && modelNamesEndpoint(a.af.model) {
				return nil, nil, UsageError{fmt.Errorf("subagent file %s: model %q names a server; a project may not choose where its tasks are sent (name the model without @URL, or define the subagent in %s)", a.path, a.af.model, userAgents)}
			}
			if _, seen := byName[a.af.sa.Name]; !seen {
				order = append(order, a.af.sa.Name)
			}
			byName[a.af.sa.Name] = a
		}
	}
	if len(left) > 0 {
		r.note("note: what Claude Code's subagent files say that this agent has no counterpart for is left out: %s", strings.Join(left, "; "))
	}
	subs := make([]Subagent, 0, len(order))
	var async []AsyncSubagent
	for _, n := range order {
		a := byName[n]
		sa := Subagent{Subagent: a.af.sa, ModelSpec: a.af.model, From: "subagent file " + a.path}
		switch {
		case a.af.remote:
			sa.Subagent = deepagents.Subagent{Name: a.af.sa.Name, Description: a.af.sa.Description}
			async = append(async, AsyncSubagent{Subagent: sa, URL: a.af.url, GraphID: a.af.graphID, Headers: a.af.headers})
		case a.af.background:
			async = append(async, AsyncSubagent{Subagent: sa})
		default:
			subs = append(subs, sa)
		}
	}
	return subs, async, nil
}

// HistoryDir is where conversation histories are kept beside a SQLite
// database: a folder named after the file with ".history" added. Other
// databases ("" here) keep them in the thread's state, in the database.
func HistoryDir(db *persist.DB) string {
	if db.Kind != persist.KindSQLite {
		return ""
	}
	return db.Location + ".history"
}

// DeniesCommand returns why the rules deny running command with execute
// (what the user types after ! in the interactive session is held to
// them), or "" when they do not.
func (s Spec) DeniesCommand(command string) string {
	args, _ := json.Marshal(map[string]string{"command": command})
	if d := s.Rules.Decide(permission.ExecuteTool, tool.Traits{RunsCommands: true}, args); d.Effect == permission.Deny {
		return d.Reason
	}
	return ""
}

// sameDir reports whether a and b name one folder, links resolved.
func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}

// DefaultHeadlessApprovalWait is how long a background task waiting for
// approval waits in a headless run, unless the user's file says
// otherwise (background_approval_wait).
const DefaultHeadlessApprovalWait = 2 * time.Minute

// approvalWait is the session's background_approval_wait: zero when
// someone is asked (a terminal, a server's or an editor's clients).
func (r *resolver) approvalWait() time.Duration {
	if r.in.Interactive || r.in.Served {
		return 0
	}
	if r.approvalWaitSet {
		return r.approvalWaitCfg
	}
	return DefaultHeadlessApprovalWait
}
