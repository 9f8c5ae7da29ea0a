package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/thread"
)

// Runtime is one run's view of its thread: the state, the event stream and
// the run's identity. Middleware receives it with every hook; a tool finds it
// with [RuntimeFromContext]. Its methods are safe for concurrent use by the
// tool calls of a turn.
type Runtime struct {
	agent     *Agent
	threadID  string
	namespace []string
	store     store.Store

	mu    sync.Mutex
	state *thread.State
	step  int
	usage llm.Usage
	// messageID is the ID of the assistant message the current model
	// turn produces, chosen before the call so that its deltas carry it.
	messageID string
	// answeredBy is the model the current turn's call reached, after the
	// middleware that may swap it (a fallback, say): its usage is named
	// after it (the last one, if a middleware called several). Under mu.
	answeredBy llm.Model
	// context is what filled the current turn's call, measured when
	// someone listens (its usage event carries it). Under mu.
	context *ContextWindow
	meter   contextMeter // counts context, message by message; under mu

	// start is the checkpoint the run continued from, "" for a new
	// thread; set once the thread is loaded. last is the run's latest
	// checkpoint, written or queued; under mu.
	start, last string

	decisions map[string]Decision // by tool call id, set on resume
	resuming  bool
	// prompt is the user's message the run's input ends with, as given;
	// nil for none (see Prompt).
	prompt *llm.Message

	emit func(Event) // nil when nobody listens
	// emitMu and ended stop Emit once the run is over: goroutines the run
	// does not wait for (background subagents) may still hold the Runtime.
	emitMu sync.RWMutex
	ended  bool

	local sync.Map // run-scoped scratch space for middleware

	endMu     sync.Mutex
	endReason string  // set by EndRun
	endCode   EndCode // set by EndRunWith
}

// EndRun asks the run to end, completed, once the tool calls of the
// current turn have run (or at once, on a final answer): what a hook that
// stops the agent asks for. The reason is for people; the first one
// stays. Subagents' runs are their own: ending one ends neither its
// caller nor its siblings.
func (r *Runtime) EndRun(reason string) { r.EndRunWith("", reason) }

// EndRunWith is EndRun with a code that says, for programs, why the run
// ended early ([EndLoop], [EndBudget]): the run's Result and its run_end
// event carry both.
func (r *Runtime) EndRunWith(code EndCode, reason string) {
	r.endMu.Lock()
	defer r.endMu.Unlock()
	if r.endReason == "" {
		r.endReason, r.endCode = cmp.Or(reason, "ended"), code
	}
}

// EndReason returns the reason given to EndRun, "" when nothing asked
// the run to end.
func (r *Runtime) EndReason() string {
	r.endMu.Lock()
	defer r.endMu.Unlock()
	return r.endReason
}

// EndCode returns the code given to EndRunWith, "" when none was.
func (r *Runtime) EndCode() EndCode {
	r.endMu.Lock()
	defer r.endMu.Unlock()
	return r.endCode
}

func (r *Runtime) endAsked() bool { return r.EndReason() != "" }

// Local returns a value a middleware stored for this run with SetLocal.
// Run-local values are not saved and not seen by other runs; use them to
// cache what a hook computed once per run (a formatted prompt section, say).
func (r *Runtime) Local(key any) (any, bool) { return r.local.Load(key) }

// SetLocal stores a run-local value (see Local). Use an unexported key type,
// as with context values.
func (r *Runtime) SetLocal(key, value any) { r.local.Store(key, value) }

// LocalOrSet returns the run-local value of key, storing value first when
// there is none: one value however many tools of a turn, running in
// parallel, ask at once.
func (r *Runtime) LocalOrSet(key, value any) any {
	v, _ := r.local.LoadOrStore(key, value)
	return v
}

// Checkpoint returns the run's latest checkpoint: written, or queued to
// be (see Durability); the one it continued from before its first. ""
// before any, and without a Checkpointer.
func (r *Runtime) Checkpoint() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

func (r *Runtime) setCheckpoint(id string) {
	r.mu.Lock()
	r.last = id
	r.mu.Unlock()
}

// StartCheckpoint returns the checkpoint the run continued from: the
// thread's head before the run's input (or Input.CheckpointID), "" for a
// new thread or without a Checkpointer. Agent.Fork at it undoes the run.
func (r *Runtime) StartCheckpoint() string { return r.start }

// Model is the model the agent calls.
func (r *Runtime) Model() llm.Model { return r.agent.model }

// Agent returns the agent that runs: a subagent's own in a subagent's run.
func (r *Runtime) Agent() *Agent { return r.agent }

// ThreadID returns the thread the run belongs to.
func (r *Runtime) ThreadID() string { return r.threadID }

// Namespace returns the path of the running agent: empty for the main agent.
func (r *Runtime) Namespace() []string { return r.namespace }

// AgentName returns the running agent's name.
func (r *Runtime) AgentName() string { return r.agent.name }

// Store returns the cross-thread store configured for the agent, or nil.
func (r *Runtime) Store() store.Store { return r.store }

// Step returns the number of model calls made so far in this run.
func (r *Runtime) Step() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.step
}

// Messages returns the conversation. The slice is shared: do not modify it.
// During a turn's tool calls it does not yet hold that turn's results.
func (r *Runtime) Messages() []llm.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state.Messages
}

// RewriteMessages keeps the first keep messages and replaces the rest with
// tail. Use it to repair history (appending is done by the loop). The next
// checkpoint records the rewrite.
func (r *Runtime) RewriteMessages(keep int, tail []llm.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	keep = r.state.RewriteMessages(keep, tail)
	identify(r.state.Messages[keep:])
}

func (r *Runtime) appendMessages(msgs ...llm.Message) {
	r.mu.Lock()
	n := len(r.state.Messages)
	r.state.Messages = append(r.state.Messages, msgs...)
	identify(r.state.Messages[n:])
	r.mu.Unlock()
}

// identify gives every message without an ID a new one. It works on the
// state's copies, never on a caller's slice.
func identify(msgs []llm.Message) {
	for i := range msgs {
		if msgs[i].ID == "" {
			msgs[i].ID = newID()
		}
	}
}

// Files returns the thread's in-memory files (the State backend's).
func (r *Runtime) Files() *thread.Files { return r.state.Files }

// Value returns a custom state value.
func (r *Runtime) Value(key string) (json.RawMessage, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.state.Values[key]
	return v, ok
}

// SetValue stores a custom state value; nil deletes the key. Values travel
// with checkpoints and, unless a middleware keeps them private, into
// subagents and back.
func (r *Runtime) SetValue(key string, v json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state.SetValue(key, v)
}

// Values returns a copy of all custom state values.
func (r *Runtime) Values() map[string]json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]json.RawMessage, len(r.state.Values))
	for k, v := range r.state.Values {
		out[k] = v
	}
	return out
}

// IsPrivate reports whether the state value key belongs to this agent
// alone: a middleware of its declared it (see PrivateValuer).
func (r *Runtime) IsPrivate(key string) bool { return r.agent.private[key] }

// AddUsage adds token usage to the run's total (a subagent's, for one).
func (r *Runtime) AddUsage(u llm.Usage) {
	r.mu.Lock()
	r.usage.Add(u)
	r.mu.Unlock()
}

// AddCallUsage counts a model call a middleware makes of its own (a
// summary, a grade, a classification): its usage is the run's, and a
// streaming run reports it as that of an agent named name under this one.
func (r *Runtime) AddCallUsage(model llm.Model, name string, u llm.Usage) {
	r.AddUsage(u)
	if r.Streaming() {
		r.Emit(Event{Type: EventUsage, Name: llm.Describe(model).Spec(), Usage: &u, Namespace: append(slices.Clone(r.namespace), name)})
	}
}

// Usage returns the run's token usage so far.
func (r *Runtime) Usage() llm.Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.usage
}

// Decision returns the human decision for a pending tool call when the run
// was resumed with decisions.
func (r *Runtime) Decision(toolCallID string) (Decision, bool) {
	d, ok := r.decisions[toolCallID]
	return d, ok
}

// Prompt returns the user's prompt of this run: the user message its
// input ends with, as the input gave it (before middleware added to it),
// and true. A run that resumes, one of Input.Prepare (input added without
// a model turn, such as a shell command's output) and one whose input
// ends otherwise have none. Hooks on a user's prompt (UserPromptSubmit,
// a rewind's turn) run on it.
func (r *Runtime) Prompt() (llm.Message, bool) {
	if r.prompt == nil {
		return llm.Message{}, false
	}
	return *r.prompt, true
}

// Resuming reports whether this run resumes an interrupted one with human
// decisions: the last assistant message's pending tool calls are about to
// run, so they must not be treated as abandoned.
func (r *Runtime) Resuming() bool { return r.resuming }

// Streaming reports whether anyone receives this run's events, so that
// middleware can skip building events nobody reads.
func (r *Runtime) Streaming() bool { return r.emit != nil }

// Emit sends an event to the run's stream, filling in the namespace and step
// when unset. It does nothing when nobody listens, and nothing once the run
// has ended: a goroutine that outlives the run (a background subagent's)
// may keep calling it.
func (r *Runtime) Emit(e Event) {
	if r.emit == nil {
		return
	}
	r.send(r.fill(e))
}

// fill sets e's namespace and step when unset.
func (r *Runtime) fill(e Event) Event {
	if e.Namespace == nil {
		e.Namespace = r.namespace
	}
	if e.Step == 0 {
		e.Step = r.Step()
	}
	return e
}

// send delivers e unless the run has ended.
func (r *Runtime) send(e Event) {
	r.emitMu.RLock()
	defer r.emitMu.RUnlock()
	if !r.ended {
		r.emit(e)
	}
}

// emitCheckpoint reports cp committed, at its own step (which may be 0):
// the writer of a DurabilityAsync run reports a step's checkpoint during
// later steps.
func (r *Runtime) emitCheckpoint(cp *checkpoint.Checkpoint) {
	if r.emit == nil {
		return
	}
	r.send(Event{Type: EventCheckpoint, ThreadID: cp.ThreadID, CheckpointID: cp.ID, Step: cp.Step, Namespace: r.namespace})
}

// emitLast sends the run's last event (run_end) and makes Emit a no-op
// from then on, so that nothing follows run_end in the stream.
func (r *Runtime) emitLast(e Event) {
	e = r.fill(e)
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	r.ended = true
	r.emit(e)
}

// end makes Emit a no-op, after the events being emitted are delivered.
func (r *Runtime) end() {
	r.emitMu.Lock()
	r.ended = true
	r.emitMu.Unlock()
}

// noticeRetry reports a provider's retry of a model call as a notice.
func (r *Runtime) noticeRetry(rt llm.Retry) {
	what := "The model call failed"
	if rt.Err != nil {
		what += " (" + rt.Err.Error() + ")"
	}
	when := ""
	if rt.Wait > 0 {
		when = " in " + rt.Wait.Round(10*time.Millisecond).String()
	}
	e := Event{Type: EventNotice, Name: NoticeModelRetry,
		Content: fmt.Sprintf("%s; retrying%s (attempt %d of %d).", what, when, rt.Attempt+1, rt.MaxAttempts)}
	if rt.Err != nil {
		e.Error = rt.Err.Error()
	}
	r.Emit(e)
}

type runtimeKey struct{}

// RuntimeFromContext returns the Runtime of the run a tool is called in, or
// nil outside a run.
func RuntimeFromContext(ctx context.Context) *Runtime {
	r, _ := ctx.Value(runtimeKey{}).(*Runtime)
	return r
}

type callKey struct{}

// ToolCallFromContext returns the tool call being executed, or nil outside
// a tool call.
func ToolCallFromContext(ctx context.Context) *llm.ToolCall {
	c, _ := ctx.Value(callKey{}).(*llm.ToolCall)
	return c
}
