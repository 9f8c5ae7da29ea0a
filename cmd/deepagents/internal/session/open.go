package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"

	"go.opentelemetry.io/otel/trace"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/isolate"
	"github.com/deepagents-go/deepagents/backend/sandbox"
	"github.com/deepagents-go/deepagents/hooks"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/providers"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/mcp"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/netproxy"
	"github.com/deepagents-go/deepagents/persist"
	"github.com/deepagents-go/deepagents/profile"
	"github.com/deepagents-go/deepagents/rewind"
	"github.com/deepagents-go/deepagents/tool"
	"github.com/deepagents-go/deepagents/workspace"
)

// Deps are what Open uses besides the Spec.
type Deps struct {
	// DB keeps the threads (its Saver) and long-term memories (its
	// Store); Open does not close it.
	DB *persist.DB
	// Getenv reads the providers' keys and base URLs, and what MCP
	// servers are given.
	Getenv func(string) string
	// Logger gets the warnings of the agent and the MCP servers.
	Logger *slog.Logger
	// TracerProvider returns the provider to trace the agent with (nil
	// for none); nil traces nothing. Open asks for it only once the
	// agent's parts are open, so that tracing is set up only for an agent
	// about to run.
	TracerProvider func() trace.TracerProvider
	// Buffers are the editor's (deepagents acp, when the client offers
	// its file system): the workspace folder's text files are read and
	// written through them (workspace.Config.Buffers). Zero: the disk.
	Buffers backend.Buffers
	// AskHost asks the person whether a sandboxed command may reach a
	// host no rule names (the terminal's question); nil refuses such
	// hosts, as a headless run must. A thread's earlier "for this thread"
	// and the user's "always" answer without asking.
	AskHost HostAsker
	// Middleware is added to the agent's stack after the workspace's:
	// none in the product; the CLI's tests break a tool with one (an eval
	// that must score lower).
	Middleware []deepagents.Middleware
	// NewTaskID makes background task ids (AsyncOptions.NewTaskID): nil,
	// random ids, in the product; the CLI's tests name them.
	NewTaskID func() string
}

// Session is an open agent, with its files.
type Session struct {
	// Agent is the deep agent; Close closes it.
	Agent *deepagents.Agent
	// Backend is the agent's filesystem, through which the terminal's
	// @file reads.
	Backend backend.Backend
	// Profile is the harness profile the agent runs with.
	Profile profile.Profile
	// MCP are the MCP servers started (nil for none): their states and
	// tools, for /mcp.
	MCP *mcp.Servers
	// Rewind records the workspace's checkpoints as the agent works (its
	// middleware is in the agent's stack) and rewinds threads.
	Rewind *rewind.Tracker
	// Hooks runs the hooks of the session (spec.Hooks) on the events the
	// command owns (SessionStart, SessionEnd, the idle Notification), as
	// the agent runs them on its own; nil when there are none.
	Hooks *hooks.Runner
	// SkillDirs are the host folders the agent's skills are read from,
	// in order (a later one wins a name), for /skills.
	SkillDirs []string
	// Proxy is the network proxy of the sandbox's commands (nil when they
	// have none): what they exchanged with each host, for /context.
	Proxy *netproxy.Proxy
	close func()
}

// Close closes the agent, then what its tools use (MCP servers, the
// shell). It does not close the database.
func (s *Session) Close() { s.close() }

// Open opens what spec describes: the model (recorded when spec.Record
// says so), the agent's files (package workspace), the subagents' models,
// the MCP servers, and the deep agent.
func Open(ctx context.Context, spec Spec, deps Deps) (*Session, error) {
	s := &Session{close: func() {}}
	fail := func(err error) (*Session, error) {
		s.close()
		return nil, err
	}
	ms := &models{getenv: deps.Getenv}
	if spec.Record != "" {
		ms.rec = replay.NewRecording(spec.Record)
	}
	model, err := ms.openDefault(ctx, spec.Model)
	if err != nil {
		return nil, err
	}
	proxy, err := openProxy(spec, deps)
	if err != nil {
		return nil, err
	}
	ws, err := openWorkspace(spec, deps.DB, deps.Buffers, proxy)
	if err != nil {
		if proxy != nil {
			proxy.Close()
		}
		return nil, err
	}
	s.Backend = ws.Backend
	s.Proxy = proxy
	s.close = func() { ws.Close() }
	if proxy != nil {
		// The proxy closes after the shell: its commands have ended.
		s.close = func() { ws.Close(); proxy.Close() }
	}
	tracked := spec.Dir
	if spec.StateWorkspace || spec.NoFileCheckpoints {
		tracked = "" // its turns alone (the files are the thread's state, or not recorded)
	}
	tr, err := rewind.New(rewind.Config{Dir: tracked, Store: deps.DB.Store})
	if err != nil {
		return fail(err)
	}
	s.Rewind = tr
	wsClose := s.close
	s.close = func() { wsClose(); tr.Close() }
	subagents := make([]deepagents.Subagent, 0, len(spec.Subagents))
	for _, sa := range spec.Subagents {
		d, err := ms.subagent(ctx, sa)
		if err != nil {
			return fail(err)
		}
		subagents = append(subagents, d)
	}
	var async []deepagents.AsyncSubagent
	for _, sa := range spec.AsyncSubagents {
		d, err := ms.subagent(ctx, sa.Subagent)
		if err != nil {
			return fail(err)
		}
		async = append(async, deepagents.AsyncSubagent{Subagent: d, URL: sa.URL, GraphID: sa.GraphID, Headers: sa.Headers})
	}
	on := map[string]deepagents.InterruptOn{}
	for _, name := range spec.InterruptOn {
		on[name] = deepagents.InterruptOn{}
	}
	servers, err := ConnectMCP(ctx, spec, deps)
	if err != nil {
		return fail(err)
	}
	var mcpTools []tool.Tool
	if servers != nil {
		s.MCP = servers
		s.close = func() { servers.Close(); wsClose(); tr.Close() }
		mcpTools = servers.Tools()
	}
	s.Profile = spec.Profile.For(model)
	if ms.rec != nil {
		raw, _ := json.Marshal(s.Profile) // plain fields: cannot fail
		ms.rec.SetProfile(raw)
	}
	cfg := deepagents.Config{
		Model:          model,
		Profile:        &s.Profile,
		SystemPrompt:   spec.SystemPrompt,
		Tools:          mcpTools,
		Backend:        ws.Backend,
		Checkpointer:   deps.DB.Saver,
		Store:          deps.DB.Store,
		Subagents:      subagents,
		AsyncSubagents: async,
		Async:          deepagents.AsyncOptions{ApprovalWait: spec.ApprovalWait, NewTaskID: deps.NewTaskID},
		InterruptOn:    on,
		Permissions:    spec.Rules,
		PermissionMode: spec.PermissionMode,
		Memory:         ws.Memory,
		Skills:         ws.Skills,
		Middleware:     slices.Concat(ws.Middleware, deps.Middleware),
		Rewind:         tr,
		MaxSteps:       spec.MaxSteps,
		// A plain setting's resolved value is the settings' the run records.
		MaxParallelTools: spec.Settings.MaxParallelTools,
		MultiEdit:        spec.Settings.MultiEdit,
		Isolation:        isolate.Mode(spec.Settings.Isolation), // checked as the flag is
		Durability:       spec.Durability,
		GrepRegexp:       spec.GrepRegexp,
		Loops:            spec.Loops,
		Budget:           spec.Budget,
		Verify:           spec.Verify,
		LocalContext:     spec.LocalContext,
		Logger:           deps.Logger,
	}
	if spec.ClassifierModel != "" {
		cm, err := ms.open(ctx, spec.ClassifierModel)
		if err != nil {
			return fail(fmt.Errorf("classifier_model: %w", err))
		}
		cfg.Classifier = hitl.NewClassifier(cm, 0)
	}
	if len(spec.Hooks) > 0 {
		cfg.Hooks = hooksConfig(spec, ws, deps)
		cfg.Hooks.Model = model // the session's own events' prompt hooks too
		if s.Hooks, err = hooks.New(cfg.Hooks); err != nil {
			return fail(UsageError{err})
		}
	}
	if deps.TracerProvider != nil {
		cfg.TracerProvider = deps.TracerProvider()
	}
	// An assistant's memory and skills replace the workspace's.
	if spec.Memory != nil {
		cfg.Memory = spec.Memory
	}
	if spec.Skills != nil {
		cfg.Skills = spec.Skills
	} else if len(spec.PluginSkills) > 0 {
		// Before the user's own, which win a name they share.
		cfg.Skills = append(slices.Clone(spec.PluginSkills), cfg.Skills...)
	}
	for _, d := range cfg.Skills {
		if host, ok := ws.HostPath(d); ok {
			s.SkillDirs = append(s.SkillDirs, host)
		}
	}
	if servers != nil {
		withoutFailedServers(&cfg, servers.Failed())
	}
	a, err := deepagents.New(cfg)
	if errors.Is(err, deepagents.ErrUnknownTool) {
		return fail(UsageError{err})
	}
	if err != nil {
		return fail(err)
	}
	// Background subagents stop before what their tools use (shells, MCP
	// servers) closes.
	closeRest := s.close
	s.Agent = a
	s.close = func() { a.Close(); closeRest() }
	return s, nil
}

// hooksConfig is the configuration of spec's hooks: run in the workspace
// folder (the process's directory for a workspace kept in the threads'
// state), the agent's paths mapped to the host's for hooks in Claude
// Code's dialect.
func hooksConfig(spec Spec, ws *workspace.Workspace, deps Deps) hooks.Config {
	dir := spec.Dir
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return hooks.Config{Hooks: spec.Hooks, Dir: dir, HostPath: ws.HostPath, AgentPath: ws.AgentPath, Logger: deps.Logger}
}

// openWorkspace opens the agent's files (package workspace): the
// workspace at "/" (with execute when spec.Shell is set), scratch files in
// the thread's state, the user's folder at /user/ and long-term memories
// in the store. Whatever the workspace is, the user's configuration and
// shell start-up files stay read-only and the files that hold keys
// unreadable (spec.ReadOnly, spec.Unreadable), in the file tools as in
// the sandbox, and the rules deny reading to ls, glob, grep and the
// terminal's @file as to read_file. With bufs, the workspace's text files
// are the editor's.
//
// proxy, when set, is the network of the sandbox's commands (openProxy).
func openWorkspace(spec Spec, db *persist.DB, bufs backend.Buffers, proxy *netproxy.Proxy) (*workspace.Workspace, error) {
	cfg := workspace.Config{
		Dir:         spec.Dir,
		Shell:       spec.Shell,
		UserDir:     spec.UserDir,
		Home:        spec.Home,
		OtherAgents: spec.OtherAgents,
		HistoryDir:  spec.HistoryDir,
		Store:       db.Store,
		ReadOnly:    spec.ReadOnly,
		Unreadable:  spec.Unreadable,
		Rules:       spec.Rules,
		Buffers:     bufs,
	}
	if spec.StateWorkspace {
		cfg.Dir = ""
	}
	if cfg.Dir != "" && spec.Shell && spec.Sandbox == "bwrap" {
		cfg.Sandbox = &sandbox.Bubblewrap{Network: spec.Network == NetworkHost, Proxy: proxy, Protected: spec.Protected}
	}
	ws, err := workspace.Open(cfg)
	switch {
	case errors.Is(err, sandbox.ErrNoSandbox):
		return nil, fmt.Errorf("--shell: %w; install bubblewrap (apt-get install bubblewrap), or pass --sandbox none to run commands unisolated, as yourself", err)
	case errors.Is(err, workspace.ErrReadRules):
		return nil, UsageError{err}
	case errors.Is(err, workspace.ErrDir):
		return nil, fmt.Errorf("--dir: %w", err)
	}
	return ws, err
}

// models opens model specs for one session, recording them when asked.
type models struct {
	getenv func(string) string
	rec    *replay.Recording
}

// registry returns the model providers the CLI knows: every provider of
// llm/providers, with keys and base URLs from the environment, and the
// scripted model as "replay".
func (m *models) registry() *llm.Registry {
	r := &llm.Registry{}
	providers.RegisterEnv(r, m.getenv)
	replay.Register(r)
	return r
}

// open opens spec. A spec that is malformed or names a provider the CLI
// does not know is a UsageError; a provider that cannot open the model (a
// missing key, a missing script) is not, the command line being right.
func (m *models) open(ctx context.Context, spec string) (llm.Model, error) {
	model, err := m.registry().New(ctx, spec)
	if errors.Is(err, llm.ErrUnknownProvider) || errors.Is(err, llm.ErrBadSpec) {
		return nil, UsageError{err}
	}
	if err != nil || m.rec == nil {
		return model, err
	}
	return m.rec.Wrap(model), nil
}

// openDefault opens spec, or the default model the environment allows.
func (m *models) openDefault(ctx context.Context, spec string) (llm.Model, error) {
	if spec == "" {
		var err error
		if spec, err = providers.DefaultSpec(m.getenv); err != nil {
			return nil, UsageError{fmt.Errorf("%w; --model replay:FILE plays a script offline", err)}
		}
	}
	return m.open(ctx, spec)
}

// subagent returns sa's definition with its model opened, and a tool list
// of its own (withoutFailedServers changes it in place).
func (m *models) subagent(ctx context.Context, sa Subagent) (deepagents.Subagent, error) {
	d := sa.Subagent
	d.AllowedTools = slices.Clone(d.AllowedTools)
	if sa.ModelSpec != "" {
		model, err := m.open(ctx, sa.ModelSpec)
		if err != nil {
			return d, UsageError{fmt.Errorf("%s: %w", sa.From, err)}
		}
		d.Model = model
	}
	return d, nil
}
