package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/thread"
	"github.com/deepagents-go/deepagents/tool"
)

// Defaults for Config fields left zero.
const (
	DefaultMaxSteps         = 1000
	DefaultMaxParallelTools = 16
	// MainAgent is the name of an agent whose Config gives none.
	MainAgent = "main"
)

// ErrUnknownTool is returned by New for a Config.AllowedTools name that is
// no tool of the agent.
var ErrUnknownTool = errors.New("agent: unknown tool")

// ErrMaxSteps ends a run that reached Config.MaxSteps model calls without a
// final answer.
var ErrMaxSteps = errors.New("agent: step limit reached without a final answer")

// ErrPanic is the error of a run in which a middleware hook or the model
// panicked; the run fails instead of the program.
var ErrPanic = errors.New("agent: the run panicked")

// Config describes an agent.
type Config struct {
	// Name identifies the agent in events and to the model (subagents);
	// "main" when empty.
	Name string
	// Model answers the agent's calls. Required.
	Model llm.Model
	// SystemPrompt comes first in every system prompt; middleware sections
	// follow it.
	SystemPrompt string
	// Tools are the agent's own tools, offered after the middleware's.
	Tools []tool.Tool
	// AllowedTools, when not nil, limits the agent to the tools of these
	// names, its middleware's included: the others are not offered, a
	// call of one is answered as an unknown tool, and middleware that are
	// ToolPrompters describe only the tools kept. A name that is no tool
	// of the agent is an error (ErrUnknownTool).
	AllowedTools []string
	// ToolDescriptions replace the descriptions the model is given of the
	// tools they name (a model family's wording, say: package profile).
	// A name that is no tool of the agent is ignored.
	ToolDescriptions map[string]string
	// Middleware is the stack, outermost first.
	Middleware []Middleware
	// MaxSteps caps the model calls of one run; zero means
	// DefaultMaxSteps, a negative value means no limit.
	MaxSteps int
	// MaxParallelTools caps how many tool calls of one turn run at once;
	// zero means DefaultMaxParallelTools; negative is an error.
	MaxParallelTools int
	// Checkpointer, when set, saves every step of every run durably and
	// makes threads resumable.
	Checkpointer checkpoint.Saver
	// Durability says when steps are checkpointed: DurabilityAsync (the
	// default, when empty), DurabilitySync or DurabilityExit. A run may
	// ask for another with Input.Durability.
	Durability Durability
	// Store is the cross-thread store offered to middleware and tools.
	Store store.Store
	// ResponseSchema, when set, is a JSON Schema (of an object) the final
	// answer must match: the model is asked for it, the answer is checked,
	// and an answer that does not match is sent back with the reason, up to
	// MaxResponseRetries times. The parsed answer is Result.Structured.
	ResponseSchema json.RawMessage
	// Logger receives diagnostics; slog.Default() when nil.
	Logger *slog.Logger
}

// MaxResponseRetries is how many times a final answer that does not match
// Config.ResponseSchema is sent back before the run fails.
const MaxResponseRetries = 3

// ErrResponseSchema fails a run whose final answer never matched
// Config.ResponseSchema.
var ErrResponseSchema = errors.New("agent: the final answer does not match the response schema")

// Agent runs a model with tools and middleware. It is safe for concurrent
// use; each run is independent.
type Agent struct {
	name        string
	model       llm.Model
	modelSpec   string // provider:model, named on usage events
	system      string
	tools       map[string]tool.Tool
	specs       []llm.ToolSpec
	middleware  []Middleware
	before      []BeforeAgentHook
	afterModel  []AfterModelHook
	stops       []StopHook
	private     map[string]bool // state values its middleware keep to this agent
	after       []AfterAgentHook
	callModel   ModelHandler
	callTool    ToolHandler
	callRun     RunHandler // nil when no middleware wraps runs
	maxSteps    int
	maxParallel int
	saver       checkpoint.Saver
	durability  Durability
	store       store.Store
	log         *slog.Logger
	respSchema  json.RawMessage
	respCheck   *tool.Validator
}

// New builds an agent. It fails when the model is missing, two middleware
// share a name, or two tools share a name.
func New(cfg Config) (*Agent, error) {
	if cfg.Model == nil {
		return nil, errors.New("agent: Config.Model is required")
	}
	if err := cfg.Durability.check(); err != nil {
		return nil, err
	}
	if cfg.MaxParallelTools < 0 {
		// (A turn's tool calls would otherwise panic making its semaphore.)
		return nil, fmt.Errorf("agent: Config.MaxParallelTools must not be negative: %d", cfg.MaxParallelTools)
	}
	a := &Agent{
		name:        cmp.Or(cfg.Name, MainAgent),
		model:       cfg.Model,
		modelSpec:   llm.Describe(cfg.Model).Spec(),
		tools:       make(map[string]tool.Tool),
		middleware:  cfg.Middleware,
		maxSteps:    cmp.Or(cfg.MaxSteps, DefaultMaxSteps),
		maxParallel: cmp.Or(cfg.MaxParallelTools, DefaultMaxParallelTools),
		saver:       cfg.Checkpointer,
		durability:  cfg.Durability,
		store:       cfg.Store,
		log:         cmp.Or(cfg.Logger, slog.Default()),
	}
	var sys strings.Builder
	sys.WriteString(cfg.SystemPrompt)
	addTool := func(t tool.Tool, from string) error {
		spec := t.Spec()
		if spec.Name == "" {
			return fmt.Errorf("agent: a tool from %s has no name", from)
		}
		if _, dup := a.tools[spec.Name]; dup {
			return fmt.Errorf("agent: two tools are named %q (the second from %s)", spec.Name, from)
		}
		a.tools[spec.Name] = t
		a.specs = append(a.specs, spec)
		return nil
	}
	seen := make(map[string]bool)
	for _, m := range cfg.Middleware {
		if m == nil {
			return nil, errors.New("agent: nil middleware")
		}
		name := m.Name()
		if seen[name] {
			return nil, fmt.Errorf("agent: two middleware are named %q", name)
		}
		seen[name] = true
		if p, ok := m.(ToolProvider); ok {
			for _, t := range p.Tools() {
				if err := addTool(t, "middleware "+name); err != nil {
					return nil, err
				}
			}
		}
		if h, ok := m.(BeforeAgentHook); ok {
			a.before = append(a.before, h)
		}
		if h, ok := m.(AfterModelHook); ok {
			a.afterModel = append(a.afterModel, h)
		}
		if h, ok := m.(StopHook); ok {
			a.stops = append(a.stops, h)
		}
		if h, ok := m.(AfterAgentHook); ok {
			a.after = append(a.after, h)
		}
		if p, ok := m.(PrivateValuer); ok {
			for _, k := range p.PrivateValues() {
				if a.private == nil {
					a.private = make(map[string]bool)
				}
				a.private[k] = true
			}
		}
	}
	for _, t := range cfg.Tools {
		if t == nil {
			return nil, errors.New("agent: nil tool")
		}
		if err := addTool(t, "Config.Tools"); err != nil {
			return nil, err
		}
	}
	if err := a.keepTools(cfg.AllowedTools); err != nil {
		return nil, err
	}
	for i, spec := range a.specs {
		if d, ok := cfg.ToolDescriptions[spec.Name]; ok {
			a.specs[i].Description = d
		}
	}
	offered := func(name string) bool { _, ok := a.tools[name]; return ok }
	for _, m := range cfg.Middleware {
		var section string
		switch p := m.(type) {
		case ToolPrompter:
			section = p.SystemPromptFor(offered)
		case SystemPrompter:
			section = p.SystemPrompt()
		}
		if section != "" {
			if sys.Len() > 0 {
				sys.WriteString("\n\n")
			}
			sys.WriteString(section)
		}
	}
	a.system = sys.String()
	if len(cfg.ResponseSchema) > 0 {
		var schema jsonschema.Schema
		if err := json.Unmarshal(cfg.ResponseSchema, &schema); err != nil {
			return nil, fmt.Errorf("agent: Config.ResponseSchema is not a JSON Schema: %w", err)
		}
		v, err := tool.NewValidator("response", &schema)
		if err != nil {
			return nil, fmt.Errorf("agent: Config.ResponseSchema: %w", err)
		}
		a.respSchema, a.respCheck = slices.Clone(cfg.ResponseSchema), v
	}

	// Chains are built once: a handler per middleware, innermost last.
	a.callModel = streamModel
	a.callTool = a.runTool
	for i := len(cfg.Middleware) - 1; i >= 0; i-- {
		if w, ok := cfg.Middleware[i].(RunWrapper); ok {
			next := a.callRun
			if next == nil {
				next = a.runRequest
			}
			a.callRun = func(ctx context.Context, req *RunRequest) (*Result, error) {
				return w.WrapRun(ctx, req, next)
			}
		}
		if w, ok := cfg.Middleware[i].(ModelWrapper); ok {
			next := a.callModel
			a.callModel = func(ctx context.Context, req *ModelRequest) (*llm.Response, error) {
				return w.WrapModel(ctx, req, next)
			}
		}
		if w, ok := cfg.Middleware[i].(ToolWrapper); ok {
			next := a.callTool
			a.callTool = func(ctx context.Context, req *ToolRequest) (ToolResult, error) {
				return w.WrapTool(ctx, req, next)
			}
		}
	}
	return a, nil
}

// Name returns the agent's name.
func (a *Agent) Name() string { return a.name }

// Model returns the agent's model.
func (a *Agent) Model() llm.Model { return a.model }

// SystemPrompt returns the static system prompt: the configured prompt and
// every SystemPrompter section. WrapModel hooks may add to it per call.
func (a *Agent) SystemPrompt() string { return a.system }

// keepTools drops the tools that no name in allowed matches (nil keeps
// all); a name may stand for several tools, as tool.NameMatches says.
func (a *Agent) keepTools(allowed []string) error {
	if allowed == nil {
		return nil
	}
	keep := make(map[string]bool, len(allowed))
	for _, pattern := range allowed {
		found := false
		for name := range a.tools {
			if tool.NameMatches(pattern, name) {
				keep[name], found = true, true
			}
		}
		if !found {
			names := slices.Sorted(maps.Keys(a.tools))
			return fmt.Errorf("%w %q in AllowedTools of agent %s: its tools are %s", ErrUnknownTool, pattern, a.name, strings.Join(names, ", "))
		}
	}
	maps.DeleteFunc(a.tools, func(name string, _ tool.Tool) bool { return !keep[name] })
	a.specs = slices.DeleteFunc(a.specs, func(s llm.ToolSpec) bool { return !keep[s.Name] })
	return nil
}

// ToolSpecs returns the tools offered to the model, in order.
func (a *Agent) ToolSpecs() []llm.ToolSpec { return a.specs }

// Tool returns the agent's tool of that name, a middleware's included, for
// the layers that ask a tool what it does ([tool.TraitsOf]).
func (a *Agent) Tool(name string) (tool.Tool, bool) {
	t, ok := a.tools[name]
	return t, ok
}

// ToolTraits returns what the agent's tool of that name declares it does;
// the zero Traits (it may do anything) for a name that is no tool.
func (a *Agent) ToolTraits(name string) tool.Traits { return tool.TraitsOf(a.tools[name]) }

// Middleware returns the stack, outermost first.
func (a *Agent) Middleware() []Middleware { return a.middleware }

// Checkpointer returns the configured Saver, or nil.
func (a *Agent) Checkpointer() checkpoint.Saver { return a.saver }

// Store returns the agent's cross-thread store (Config.Store), or nil.
func (a *Agent) Store() store.Store { return a.store }

// Input starts or continues a run.
type Input struct {
	// Messages are appended to the conversation before the run starts.
	Messages []llm.Message
	// ThreadID names the thread. With a Checkpointer, an existing thread
	// continues from its latest checkpoint; empty starts a new thread
	// with a fresh id.
	ThreadID string
	// CheckpointID, with a Checkpointer, continues from that checkpoint
	// instead of the latest: later checkpoints stay in the history and the
	// run starts a new branch.
	CheckpointID string
	// State, without a Checkpointer, is the state to continue from (a
	// previous Result's State, say); nil starts empty. The run takes
	// ownership of it.
	State *thread.State
	// Values are custom state keys set before the run starts.
	Values map[string]json.RawMessage
	// Files are put into the state's files before the run starts.
	Files map[string]thread.FileData
	// Events, when set, receives the run's events as they happen, from any
	// of the run's goroutines: it must be safe for concurrent use. Stream
	// sets its own.
	Events func(Event)
	// Decisions resume a run that stopped for human decisions, one per
	// pending ActionRequest, in order. Messages must be empty.
	Decisions []Decision
	// Namespace is the path of this agent under the one that started it;
	// set by parent agents for subagent runs.
	Namespace []string
	// Durability, when set, overrides Config.Durability for this run.
	Durability Durability
	// Prepare runs only the start of a run: the input is applied, the
	// BeforeAgent hooks run and what changed is saved, and the run
	// completes without calling the model. (With
	// summarization.CompactNow in its context, such a run compacts the
	// thread at once.) Decisions must be empty.
	Prepare bool
}

// Prompt returns an Input holding one user message.
func Prompt(text string) Input {
	return Input{Messages: []llm.Message{llm.UserText(text)}}
}

// Result is how a run ended.
type Result struct {
	ThreadID string
	// CheckpointID is the last checkpoint written, "" without a
	// Checkpointer.
	CheckpointID string
	Status       RunStatus
	State        *thread.State
	// Usage sums the tokens of every model call of the run, subagents'
	// included.
	Usage llm.Usage
	// Steps counts the model calls of the run.
	Steps int
	// Interrupts are the action requests awaiting decisions when Status
	// is interrupted.
	Interrupts []ActionRequest
	// Structured is the final answer as JSON when Config.ResponseSchema is
	// set and the run completed.
	Structured json.RawMessage
	// ChangedFiles and ChangedValues list the state files and value keys
	// the run changed (for merging a subagent's work back).
	ChangedFiles  []string
	ChangedValues []string
	// EndCode and EndReason say why a middleware ended the run early
	// (Runtime.EndRun, EndRunWith): a loop, a budget, a hook's stop.
	EndCode   EndCode
	EndReason string
}

// LastMessage returns the last message of the conversation, or nil.
func (r *Result) LastMessage() *llm.Message {
	if r == nil || r.State == nil || len(r.State.Messages) == 0 {
		return nil
	}
	return &r.State.Messages[len(r.State.Messages)-1]
}

// Text returns the text of the final assistant message, or "".
func (r *Result) Text() string {
	m := r.LastMessage()
	if m == nil || m.Role != llm.RoleAssistant {
		return ""
	}
	return m.Text()
}

// Invoke runs the agent to the end. A run that stops for human decisions is
// not an error: its Result has status interrupted. When the run fails,
// Invoke returns the error together with a Result describing the state
// reached, if the run got that far.
func (a *Agent) Invoke(ctx context.Context, in Input) (*Result, error) {
	return a.run(ctx, in, in.Events)
}

// Resume continues a thread that stopped for human decisions.
func (a *Agent) Resume(ctx context.Context, threadID string, decisions []Decision) (*Result, error) {
	if decisions == nil {
		decisions = []Decision{}
	}
	return a.run(ctx, Input{ThreadID: threadID, Decisions: decisions}, nil)
}

// Stream runs the agent and yields its events as they happen. The last
// event is run_end; when the run failed, one more pair follows carrying the
// error. Stopping the iteration early cancels the run.
func (a *Agent) Stream(ctx context.Context, in Input) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		q := newEventQueue()
		var runErr error
		go func() {
			defer q.close()
			_, runErr = a.run(ctx, in, q.push)
		}()
		var spare []Event
		stopped := false
		for {
			batch, done := q.take(spare)
			if done {
				break
			}
			for i := range batch {
				if !stopped && !yield(batch[i], nil) {
					stopped = true
					q.stop() // producers drop events from now on
					cancel()
				}
				batch[i] = Event{} // release what the event holds
			}
			spare = batch
		}
		if runErr != nil && !stopped {
			yield(Event{}, runErr)
		}
	}
}

// PrivateValues returns the state values this agent's middleware keep to
// it (see PrivateValuer), sorted.
func (a *Agent) PrivateValues() []string {
	return slices.Sorted(maps.Keys(a.private))
}
