package deepagents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/trace"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/isolate"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/hooks"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/budget"
	"github.com/deepagents-go/deepagents/middleware/caching"
	"github.com/deepagents-go/deepagents/middleware/filesystem"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/middleware/localcontext"
	"github.com/deepagents-go/deepagents/middleware/loops"
	"github.com/deepagents-go/deepagents/middleware/memory"
	"github.com/deepagents-go/deepagents/middleware/patch"
	"github.com/deepagents-go/deepagents/middleware/skills"
	"github.com/deepagents-go/deepagents/middleware/steer"
	"github.com/deepagents-go/deepagents/middleware/subagents"
	"github.com/deepagents-go/deepagents/middleware/subagents/background"
	"github.com/deepagents-go/deepagents/middleware/summarization"
	"github.com/deepagents-go/deepagents/middleware/todos"
	"github.com/deepagents-go/deepagents/middleware/verify"
	"github.com/deepagents-go/deepagents/permission"
	"github.com/deepagents-go/deepagents/profile"
	"github.com/deepagents-go/deepagents/rewind"
	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/telemetry"
	"github.com/deepagents-go/deepagents/tool"
)

// Config describes a deep agent. Only Model is required.
type Config struct {
	// Name identifies the agent; "main" when empty.
	Name string
	// Model answers the agent's calls. Required.
	Model llm.Model
	// SystemPrompt is placed before the base prompt.
	SystemPrompt string
	// Profile shapes the harness for the model's family: a prompt
	// section, tool descriptions, prompt caching (package profile). Nil
	// means the built-in profile for the model, profile.For(
	// llm.Describe(Model)). Subagents use the main agent's profile, with
	// their own model too.
	Profile *profile.Profile
	// Tools are added to the built-in ones; subagents get them too unless
	// they list their own.
	Tools []tool.Tool
	// Middleware is added to the default stack, after the built-in
	// middleware and before human-in-the-loop. One with the name of a
	// built-in replaces it in place.
	Middleware []Middleware
	// Subagents the task tool can delegate to; a general-purpose one is
	// always available unless one of that name is given.
	Subagents []Subagent
	// AsyncSubagents can be started in the background, with the tools
	// start_async_task, check_async_task, wait_async_task,
	// update_async_task, cancel_async_task and list_async_tasks: local
	// ones run on goroutines of this process (until they finish, are
	// cancelled, or Agent.Close), remote ones on a LangGraph API server
	// such as deepagents serve. See docs/background-subagents.md.
	AsyncSubagents []AsyncSubagent
	// Async bounds the background tasks; zero fields take the defaults.
	Async AsyncOptions
	// Isolation is whether the task tool's subagents that set none
	// (Subagent.Isolation) work in a workspace of their own, a copy of
	// the folder merged back when they end (package backend/isolate):
	// "" is isolate.Auto, a workspace for each of the task calls of a
	// turn that makes several, where Backend's files are a host folder
	// (backend.HostRoot). The local AsyncSubagents follow it too, for
	// whom "" means a workspace always (a background task always runs
	// beside the main agent). isolate.None shares the folder always. See
	// docs/background-subagents.md.
	Isolation isolate.Mode
	// WorkspaceDir is where the subagents' workspaces are made; empty
	// means os.TempDir().
	WorkspaceDir string
	// Backend holds the agent's files; nil means the thread's state
	// (backend.State).
	Backend backend.Backend
	// Checkpointer saves every step and makes threads resumable. Without
	// one, an agent with InterruptOn keeps interrupted threads in memory.
	Checkpointer checkpoint.Saver
	// Durability says when steps are checkpointed (see agent.Durability):
	// in the background while the next steps run (the default), before the
	// next step, or once at the end of a run.
	Durability Durability
	// Store is the cross-thread store (for a Store backend, say).
	Store store.Store
	// InterruptOn asks for human approval before these tools run.
	InterruptOn map[string]InterruptOn
	// Permissions are allow, ask and deny rules (package permission),
	// applied to the main agent's and its subagents' calls before
	// InterruptOn: a denied call is refused, an asked one waits for
	// approval, an allowed one runs without asking.
	Permissions *permission.Rules
	// PermissionMode is the permission mode of a thread whose state sets
	// none: ask (""), accept-edits, plan or auto (see hitl.Mode). A
	// program changes a thread's mode with Input.Values
	// (hitl.ModeValues). Setting it, ask included, gives the agent (and
	// its declarative subagents) the human_in_the_loop middleware, which
	// honours the thread's mode; an agent with InterruptOn or Permissions
	// has it anyway. Deny and ask rules of Permissions hold in every mode.
	PermissionMode PermissionMode
	// AfterPlan is the mode an approved plan switches the thread to when
	// the run resuming with the approval sets none; "" is ask.
	AfterPlan PermissionMode
	// Hooks run at the agent's events (package hooks): commands in
	// Claude Code's hook format, or Go functions. PreToolUse hooks decide
	// before Permissions and InterruptOn (a deny wins, an ask asks, an
	// allow skips the prompt but never a deny or ask rule) and give the
	// agent human_in_the_loop; the main agent's and its declarative
	// subagents' calls run them alike.
	Hooks hooks.Config
	// Rewind, when set, records the workspace's checkpoints as the agent
	// works (package rewind), for Rewind to put a thread back before any
	// of its prompts. Its Store is usually the Checkpointer's database's.
	Rewind *rewind.Tracker
	// Memory lists AGENTS.md paths (in the backend) loaded into the
	// system prompt; Skills lists directories of skills.
	Memory []string
	Skills []string
	// ResponseSchema asks for a final answer matching this JSON Schema.
	ResponseSchema json.RawMessage
	// MaxSteps caps the model calls of one run (see agent.Config).
	MaxSteps int
	// MaxParallelTools caps how many tool calls of one turn run at once
	// (see agent.Config).
	MaxParallelTools int
	// GrepRegexp makes grep's pattern an RE2 regular expression; by
	// default it is literal text, as in the reference implementations.
	GrepRegexp bool
	// MultiEdit offers the multi_edit tool: several edits of one file in
	// one call, every one or none (filesystem.Config.MultiEdit).
	MultiEdit bool
	// Loops sets the loop guard of the agent and its subagents (package
	// middleware/loops): the zero value is its defaults, a nudge to the
	// model at the third identical call with the same result and the run
	// ended (agent.EndLoop) at the eighth; loops.Off turns it off.
	Loops loops.Config
	// Verify, when set, adds the verification pass (package
	// middleware/verify): an answer given while the plan has open items,
	// or after edits with no command since, sends the main agent back to
	// check its work (once for &verify.Config{}). Off by default: whether
	// it makes tasks succeed more often is for a measurement with a real
	// model to say (docs/harness.md). Nil or not, a thread's goal (the
	// state value verify.GoalValue, set with verify.GoalValues) is graded
	// before each final answer, unless Passes is negative.
	// Classifier decides, in auto mode (hitl.ModeAuto), the main agent's
	// calls that would ask: nil is hitl.NewClassifier on Model, with its
	// default timeout. A subagent's calls ask.
	Classifier hitl.Gate
	Verify     *verify.Config
	// LocalContext adds a section to the main agent's system prompt that
	// says, once per thread, what the workspace is: its layout, build
	// files, the check they imply, the runtimes and git's state (package
	// middleware/localcontext; the runtimes and git's status when Backend
	// runs commands). Off by default: whether it helps is for a
	// measurement with a real model to say (docs/harness.md).
	LocalContext bool
	// Budget limits each task (a run and its subagents' runs): model
	// calls, tokens, dollars, wall time (package middleware/budget). The
	// zero value sets none.
	Budget budget.Config
	// Logger receives diagnostics.
	Logger *slog.Logger
	// TracerProvider, when set, traces every run of the agent and of its
	// declarative subagents with OpenTelemetry spans that follow the GenAI
	// semantic conventions (package telemetry): a span per run, model call
	// and tool call. Nil means no tracing, at no cost. Package
	// telemetry/otlp builds one from the standard OTEL_* variables.
	TracerProvider trace.TracerProvider
	// TraceContent also records prompts, completions, tool arguments and
	// results on the spans, bounded (telemetry.Options.CaptureContent);
	// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true turns it on
	// too.
	TraceContent bool
}

// New returns a deep agent: the model with the default middleware stack,
//
//	profile, todos, memory, skills, filesystem, subagents, async
//	subagents, summarization, prompt caching, patch tool calls, your
//	middleware, human in the loop
//
// (profile only when its prompt is not empty; memory, skills, async
// subagents and human in the loop only when configured; with a
// TracerProvider, tracing comes first), the configured tools and the base
// system prompt. An agent with AsyncSubagents must be
// closed (Agent.Close) to stop the background tasks still running.
func New(cfg Config) (*Agent, error) {
	if cfg.Model == nil {
		return nil, errors.New("deepagents: Config.Model is required")
	}
	for _, m := range []PermissionMode{cfg.PermissionMode, cfg.AfterPlan} {
		if _, err := hitl.ParseMode(string(m)); err != nil {
			return nil, fmt.Errorf("deepagents: %w", err)
		}
	}
	b := cfg.Backend
	if b == nil {
		b = backend.NewStateBackend(nil)
	}
	// A run that can stop for approval (its own, or a subagent's) needs a
	// Saver to resume from: without one, interrupted threads are kept in
	// memory.
	saver := cfg.Checkpointer
	if saver == nil && asksApproval(cfg) {
		saver = checkpoint.NewMemorySaver()
	}
	var hk *hooks.Runner
	if len(cfg.Hooks.Hooks) > 0 {
		hc := cfg.Hooks
		if hc.Model == nil {
			hc.Model = cfg.Model // prompt hooks ask the agent's model
		}
		var err error
		if hk, err = hooks.New(hc); err != nil {
			return nil, fmt.Errorf("deepagents: %w", err)
		}
	}
	var gate, ask hitl.Gate
	if hk.Has(hooks.PreToolUse) {
		gate = hk.Gate
	}
	if hk.Has(hooks.PermissionRequest) {
		ask = hk.Permission
	}
	sh, err := newShared(cfg, b, hk)
	if err != nil {
		return nil, fmt.Errorf("deepagents: %w", err)
	}
	// Subagents get the file tools, planning and context management, but
	// not memory, skills or further subagents.
	var tracing []agent.Middleware // outermost, so that its spans cover the rest
	if cfg.TracerProvider != nil {
		tracing = []agent.Middleware{telemetry.New(cfg.TracerProvider, telemetry.Options{CaptureContent: cfg.TraceContent})}
	}
	if hk != nil {
		// Next: PostToolUse sees a result as the model will, and what
		// it adds reaches the model whole.
		tracing = append(tracing, hk.Middleware())
	}
	subStack := func() []agent.Middleware {
		return append(slices.Clone(tracing), append(sh.head(), sh.plan, sh.files, sh.summarize, sh.cache, sh.repair)...)
	}
	// The options the main agent and its subagents share: a subagent
	// inherits all of them but those it overrides (see
	// subagents.Parent.Agent).
	base := agent.Config{
		Model:            cfg.Model,
		Tools:            cfg.Tools,
		ToolDescriptions: sh.profile.ToolDescriptions,
		MaxSteps:         cfg.MaxSteps,
		MaxParallelTools: cfg.MaxParallelTools,
		Checkpointer:     saver,
		Durability:       cfg.Durability,
		Store:            cfg.Store,
		Logger:           cfg.Logger,
	}
	parent := subagents.Parent{Agent: base, InterruptOn: cfg.InterruptOn, Permissions: cfg.Permissions, PermissionMode: cfg.PermissionMode, PreToolUse: gate, PermissionRequest: ask, Middleware: subStack}
	subs, err := subagents.New(subagents.Config{Parent: parent, Subagents: cfg.Subagents,
		Workspace: backend.HostRoot(b), Isolation: cfg.Isolation, WorkspaceOptions: isolate.Options{TempDir: cfg.WorkspaceDir, Logger: cfg.Logger}})
	if err != nil {
		return nil, fmt.Errorf("deepagents: %w", err)
	}
	defaults := append(slices.Clone(tracing), sh.head()...)
	check := verify.Config{GoalOnly: true}
	if cfg.Verify != nil {
		check = *cfg.Verify
	}
	defaults = append(defaults, verify.New(check))
	defaults = append(defaults, sh.plan)
	if cfg.LocalContext {
		lc, err := localcontext.New(localcontext.Config{Backend: b})
		if err != nil {
			return nil, fmt.Errorf("deepagents: %w", err)
		}
		defaults = append(defaults, lc) // before memory, which may change during a thread: its bytes stay in the cached prefix
	}
	if len(cfg.Memory) > 0 {
		mem, err := memory.New(memory.Config{Backend: b, Sources: cfg.Memory})
		if err != nil {
			return nil, fmt.Errorf("deepagents: %w", err)
		}
		defaults = append(defaults, mem)
	}
	if len(cfg.Skills) > 0 {
		sk, err := skills.New(skills.Config{Backend: b, Sources: cfg.Skills})
		if err != nil {
			return nil, fmt.Errorf("deepagents: %w", err)
		}
		defaults = append(defaults, sk)
	}
	defaults = append(defaults, sh.files, subs)
	if len(cfg.AsyncSubagents) > 0 {
		async, err := background.New(background.Config{Parent: parent, Subagents: cfg.AsyncSubagents, Options: cfg.Async, Logger: cfg.Logger,
			Workspace: backend.HostRoot(b), Isolation: cfg.Isolation, WorkspaceOptions: isolate.Options{TempDir: cfg.WorkspaceDir, Logger: cfg.Logger}})
		if err != nil {
			return nil, fmt.Errorf("deepagents: %w", err)
		}
		defaults = append(defaults, async)
	}
	if cfg.Store != nil {
		// Messages sent while a run works (steer.Send, into the store)
		// join the conversation before the summary and the cache see it:
		// the main agent's alone.
		defaults = append(defaults, steer.New())
	}
	defaults = append(defaults, sh.summarize, sh.cache, sh.repair)
	if cfg.Rewind != nil {
		var opts []rewind.MiddlewareOption
		if hk.Has(hooks.PreToolUse) || hk.Has(hooks.PermissionRequest) || hk.Has(hooks.PostToolUse) || hk.Has(hooks.PostToolUseFailure) {
			// A hook's command may change any file around a call.
			opts = append(opts, rewind.WalkEveryStep())
		}
		defaults = append(defaults, cfg.Rewind.Middleware(opts...))
	}
	stack, err := buildStack(defaults, cfg.Middleware)
	if err != nil {
		return nil, err
	}
	if len(cfg.InterruptOn) > 0 || cfg.Permissions != nil || cfg.PermissionMode != "" || gate != nil {
		classify := cfg.Classifier
		if classify == nil {
			classify = hitl.NewClassifier(cfg.Model, 0)
		}
		approvals, err := hitl.New(hitl.Config{On: cfg.InterruptOn, Rules: cfg.Permissions, Mode: cfg.PermissionMode, AfterPlan: cfg.AfterPlan, PreToolUse: gate, PermissionRequest: ask, Classifier: classify})
		if err != nil {
			return nil, fmt.Errorf("deepagents: %w", err)
		}
		stack = append(stack, approvals)
	}
	prompt := BasePrompt
	if cfg.SystemPrompt != "" {
		prompt = cfg.SystemPrompt + "\n\n" + BasePrompt
	}
	main := base
	main.Name = cfg.Name
	main.SystemPrompt = prompt
	main.Middleware = stack
	main.ResponseSchema = cfg.ResponseSchema
	a, err := agent.New(main)
	if err != nil {
		return nil, err
	}
	if err := checkInterruptOn(cfg, a); err != nil {
		return nil, err
	}
	return a, nil
}

// shared are the built-in middleware the main agent and its subagents
// share. They keep no per-run state, so one instance each serves every
// agent: their tools and schemas are built once, and the filesystem's
// per-path write locks cover every agent writing to the backend.
type shared struct {
	profile   profile.Profile
	section   *profileSection    // nil when the profile adds no prompt
	loops     *loops.Middleware  // nil when it is off
	budget    *budget.Middleware // nil without a budget
	plan      *todos.Middleware
	files     *filesystem.Middleware
	summarize *summarization.Middleware
	cache     *caching.Middleware
	repair    *patch.Middleware
}

func newShared(cfg Config, b backend.Backend, hk *hooks.Runner) (shared, error) {
	var sh shared
	if cfg.Profile != nil {
		sh.profile = *cfg.Profile
	} else {
		sh.profile = profile.For(llm.Describe(cfg.Model))
	}
	if sh.profile.Prompt != "" {
		sh.section = &profileSection{prompt: sh.profile.Prompt}
	}
	errs := make([]error, 7)
	if !cfg.Loops.IsOff() {
		sh.loops, errs[5] = loops.New(cfg.Loops)
	}
	if !cfg.Budget.IsZero() {
		sh.budget, errs[6] = budget.New(cfg.Budget)
	}
	sh.plan, errs[0] = todos.New(todos.Config{})
	sh.files, errs[1] = filesystem.New(filesystem.Config{Backend: b, GrepRegexp: cfg.GrepRegexp, MultiEdit: cfg.MultiEdit})
	sumCfg := summarization.Config{Backend: b}
	if hk.Has(hooks.PreCompact) {
		sumCfg.BeforeSummary = hk.BeforeSummary
	}
	sh.summarize, errs[2] = summarization.New(sumCfg)
	sh.cache, errs[3] = caching.New(caching.Config{Cache: sh.profile.Cache})
	sh.repair, errs[4] = patch.New(patch.Config{})
	return sh, errors.Join(errs...)
}

// head is the head of a stack: the profile's prompt section, if any, then
// the guards, outside the tools' middleware so that they see their results
// as the model will: the budget, whose last turn the loop guard does not
// count, and the loop guard.
func (sh shared) head() []agent.Middleware {
	var h []agent.Middleware
	if sh.section != nil {
		h = append(h, sh.section)
	}
	if sh.budget != nil {
		h = append(h, sh.budget)
	}
	if sh.loops != nil {
		h = append(h, sh.loops)
	}
	return h
}

// profileSection adds the profile's prompt to the system prompt, right
// after the base prompt: first in the stack, so that the sections that
// may change during a thread (memory) come after it and the cached
// prefix before them stays the same.
type profileSection struct{ prompt string }

// Name implements agent.Middleware.
func (*profileSection) Name() string { return "profile" }

// SystemPrompt implements agent.SystemPrompter.
func (p *profileSection) SystemPrompt() string { return p.prompt }

// ErrUnknownTool is returned by New when an approval or permission rule,
// or a subagent's AllowedTools, names a tool that neither the agent nor any
// of its subagents has: a typo there would silently leave the tool it meant
// unguarded. It is agent.ErrUnknownTool.
var ErrUnknownTool = agent.ErrUnknownTool

// asksApproval reports whether the agent or one of its declarative
// subagents can stop for a human's approval.
func asksApproval(cfg Config) bool {
	return len(cfg.InterruptOn) > 0 || cfg.Permissions != nil || cfg.PermissionMode != "" || hasPreToolUse(cfg) ||
		slices.ContainsFunc(cfg.Subagents, func(s Subagent) bool { return s.Runnable == nil && len(s.InterruptOn) > 0 })
}

// hasPreToolUse reports whether a hook may ask for approval.
func hasPreToolUse(cfg Config) bool {
	return slices.ContainsFunc(cfg.Hooks.Hooks, func(h hooks.Hook) bool { return h.Event == hooks.PreToolUse })
}

// checkInterruptOn checks that every tool named in the approval rules is
// one the agent or a subagent can call.
func checkInterruptOn(cfg Config, a *Agent) error {
	subagents := allSubagents(cfg)
	if len(cfg.InterruptOn) == 0 && cfg.Permissions == nil && !slices.ContainsFunc(subagents, func(s Subagent) bool { return len(s.InterruptOn) > 0 }) {
		return nil
	}
	known := map[string]bool{}
	addTools := func(ts []tool.Tool) {
		for _, t := range ts {
			known[t.Spec().Name] = true
		}
	}
	for _, s := range a.ToolSpecs() {
		known[s.Name] = true
	}
	for _, sub := range subagents {
		addTools(sub.Tools)
		for _, m := range sub.Middleware {
			if tp, ok := m.(agent.ToolProvider); ok {
				addTools(tp.Tools())
			}
		}
	}
	// A rule may name several tools (mcp__server); it must name one at least.
	matchesOne := func(pattern string) bool {
		for name := range known {
			if tool.NameMatches(pattern, name) {
				return true
			}
		}
		return false
	}
	check := func(where string, on map[string]InterruptOn) error {
		for _, name := range slices.Sorted(maps.Keys(on)) {
			if !known[name] {
				return fmt.Errorf("%w %q in %s: the tools are %s", ErrUnknownTool, name, where, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
			}
		}
		return nil
	}
	if err := check("InterruptOn", cfg.InterruptOn); err != nil {
		return err
	}
	for _, name := range cfg.Permissions.Tools() {
		if !matchesOne(name) {
			return fmt.Errorf("%w %q in Permissions: the tools are %s", ErrUnknownTool, name, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
		}
	}
	for _, sub := range subagents {
		if err := check("the InterruptOn of subagent "+sub.Name, sub.InterruptOn); err != nil {
			return err
		}
	}
	return nil
}

// buildStack appends user middleware to the defaults; a user middleware
// named like a default one takes its place.
func buildStack(defaults, user []Middleware) ([]Middleware, error) {
	stack := append([]Middleware(nil), defaults...)
	pos := make(map[string]int, len(stack))
	for i, m := range stack {
		pos[m.Name()] = i
	}
	for _, m := range user {
		if m == nil {
			return nil, errors.New("deepagents: nil middleware in Config.Middleware")
		}
		if i, ok := pos[m.Name()]; ok {
			if i < len(defaults) && stack[i] == defaults[i] {
				stack[i] = m
				continue
			}
			return nil, fmt.Errorf("deepagents: two middleware are named %q", m.Name())
		}
		pos[m.Name()] = len(stack)
		stack = append(stack, m)
	}
	return stack, nil
}

// Rewind puts a thread of a back as it was before its turn-th prompt (from
// 1): the workspace's files and the conversation, or one of them (see
// rewind.Options). The agent must have been built with Config.Rewind
// and a Checkpointer. rewind.Tracker.Turns lists the prompts.
func Rewind(ctx context.Context, a *Agent, threadID string, turn int, opts rewind.Options) (*rewind.Result, error) {
	tr := rewind.Of(a)
	if tr == nil || a.Checkpointer() == nil {
		return nil, errors.New("deepagents: Rewind needs an agent built with Config.Rewind and a Checkpointer")
	}
	return tr.Rewind(ctx, a.Checkpointer(), threadID, turn, opts)
}
