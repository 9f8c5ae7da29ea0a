package agent

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/thread"
)

// run is the bookkeeping of one Invoke, Stream or Resume.
type run struct {
	a  *Agent
	rt *Runtime

	lease      checkpoint.Lease
	checkpoint string // last checkpoint written (or queued) or loaded
	pending    []pendingInterrupt

	durability Durability
	writer     *cpWriter // DurabilityAsync's, once a step was queued
	committed  string    // the writer's last committed checkpoint

	// nested holds, by tool call id, the decisions for interrupts a tool
	// raised (a subagent's), to hand back when the call runs again.
	nested map[string][]Decision

	structured  json.RawMessage
	retries     int   // final answers sent back for not matching the schema
	continued   int   // final answers StopHooks sent back
	responseErr error // set when they never matched
}

// pendingInterrupt is a set of action requests raised by one source: an
// AfterModel hook (Owner "") or the tool call Owner.
type pendingInterrupt struct {
	Owner    string          `json:"owner,omitempty"`
	Requests []ActionRequest `json:"requests"`
}

// runMeta is what a checkpoint's Meta holds.
type runMeta struct {
	Status     RunStatus          `json:"status,omitempty"`
	Agent      string             `json:"agent,omitempty"`
	Interrupts []pendingInterrupt `json:"interrupts,omitempty"`
}

// run runs the agent on in, through the RunWrapper chain if there is one.
func (a *Agent) run(ctx context.Context, in Input, emit func(Event)) (*Result, error) {
	threadID := in.ThreadID
	if threadID == "" {
		threadID = newID()
	}
	if a.callRun == nil {
		return a.runThread(ctx, in, threadID, emit)
	}
	return a.wrappedRun(ctx, &RunRequest{Agent: a, ThreadID: threadID, Input: in, emit: emit})
}

// wrappedRun runs req through the RunWrapper chain, turning a wrapper's
// panic into the run's error as safeLoop does for the other hooks.
func (a *Agent) wrappedRun(ctx context.Context, req *RunRequest) (res *Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			a.log.Error("agent: a run wrapper panicked", "thread", req.ThreadID, "panic", p, "stack", string(debug.Stack()))
			res, err = nil, fmt.Errorf("%w: %v", ErrPanic, p)
		}
	}()
	return a.callRun(ctx, req)
}

// runRequest is the innermost run handler.
func (a *Agent) runRequest(ctx context.Context, req *RunRequest) (*Result, error) {
	threadID := req.ThreadID
	if threadID == "" {
		threadID = newID()
	}
	return a.runThread(ctx, req.Input, threadID, req.emit)
}

// runThread is one run on the thread threadID.
func (a *Agent) runThread(ctx context.Context, in Input, threadID string, emit func(Event)) (res *Result, err error) {
	if in.Decisions != nil && len(in.Messages) > 0 {
		return nil, errors.New("agent: an Input resumes with Decisions or adds Messages, not both")
	}
	if in.Decisions != nil && in.Prepare {
		return nil, errors.New("agent: an Input resumes with Decisions or prepares a thread, not both")
	}
	if in.Decisions != nil && in.ThreadID == "" {
		return nil, errors.New("agent: resuming needs the ThreadID of the interrupted run")
	}
	if err := in.Durability.check(); err != nil {
		return nil, err
	}
	rt := &Runtime{agent: a, threadID: threadID, namespace: in.Namespace, store: a.store, emit: emit}
	r := &run{a: a, rt: rt, durability: cmp.Or(in.Durability, a.durability, DurabilityAsync)}
	defer rt.end()

	state, err := r.load(ctx, in)
	if err != nil {
		return nil, err
	}
	rt.state = state
	state.BeginJournal()
	defer func() {
		if r.lease != nil {
			st := checkpoint.StatusIdle
			switch {
			case res != nil && res.Status == StatusInterrupted:
				st = checkpoint.StatusInterrupted
			case err != nil:
				st = checkpoint.StatusError
			}
			rctx, cancel := detached(ctx)
			if rerr := r.lease.Release(rctx, st); rerr != nil {
				a.log.Warn("releasing thread", "thread", threadID, "err", rerr)
			}
			cancel()
		}
	}()

	defer r.closeWriter() // before the lease is released; finish has flushed already
	rt.Emit(Event{Type: EventRunStart, ThreadID: threadID, CheckpointID: r.checkpoint})
	status, runErr := r.safeLoop(ctx, in)
	return r.finish(ctx, status, runErr)
}

// safeLoop runs the loop, and turns a panic in a middleware hook or a
// model into the run's error: the run fails, the thread is released as
// failed, and every step checkpointed before stays. (A tool's panic is its
// call's error result; see callTool.)
func (r *run) safeLoop(ctx context.Context, in Input) (status RunStatus, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.a.log.Error("agent: a run panicked", "thread", r.rt.threadID, "panic", p, "stack", string(debug.Stack()))
			status, err = StatusFailed, fmt.Errorf("%w: %v", ErrPanic, p)
		}
	}()
	return r.loop(ctx, in)
}

// load acquires the thread and reads its state.
func (r *run) load(ctx context.Context, in Input) (*thread.State, error) {
	a := r.a
	if a.saver == nil {
		if in.Decisions != nil {
			return nil, fmt.Errorf("%w: resuming needs a Checkpointer", ErrNotInterrupted)
		}
		if in.CheckpointID != "" {
			return nil, errors.New("agent: Input.CheckpointID needs a Checkpointer")
		}
		st := in.State
		if st == nil {
			st = thread.NewState()
		}
		if st.Files == nil {
			st.Files = thread.NewFiles(nil)
		}
		return st, nil
	}
	if in.State != nil {
		return nil, errors.New("agent: Input.State cannot be used with a Checkpointer; the thread's state is loaded from it")
	}
	meta, _ := json.Marshal(map[string]string{"agent": a.name})
	lease, err := a.saver.Acquire(ctx, r.rt.threadID, meta)
	if err != nil {
		return nil, fmt.Errorf("agent: thread %s: %w", r.rt.threadID, err)
	}
	r.lease = lease
	snap, err := a.saver.Load(ctx, r.rt.threadID, in.CheckpointID)
	switch {
	case errors.Is(err, checkpoint.ErrNotFound) && in.CheckpointID == "" && in.Decisions == nil:
		return thread.NewState(), nil // a new thread
	case err != nil:
		r.lease.Release(context.WithoutCancel(ctx), checkpoint.StatusError) //nolint:errcheck // reporting the load error matters more
		r.lease = nil
		return nil, fmt.Errorf("agent: loading thread %s: %w", r.rt.threadID, err)
	}
	r.checkpoint, r.committed, r.rt.start = snap.ID, snap.ID, snap.ID
	r.rt.setCheckpoint(snap.ID)
	st := &thread.State{Messages: snap.Messages, Files: thread.NewFiles(snap.Files), Values: snap.Values}
	if len(snap.Meta) > 0 {
		var m runMeta
		if err := json.Unmarshal(snap.Meta, &m); err != nil {
			r.lease.Release(context.WithoutCancel(ctx), checkpoint.StatusError) //nolint:errcheck
			r.lease = nil
			return nil, fmt.Errorf("agent: thread %s: checkpoint metadata: %w: %v", r.rt.threadID, checkpoint.ErrCorrupt, err)
		}
		if m.Status == StatusInterrupted {
			r.pending = m.Interrupts
		}
	}
	return st, nil
}

// loop runs the run's steps until the model stops calling tools: start,
// then turns of the model (modelTurn), of the gates on its tool calls
// (gateTurn), and of the tools (toolTurn), each saved by a checkpoint; a
// gate or a tool may stop the run with an interrupt. A resumed run starts
// at the gates or the tools of the interrupted turn.
func (r *run) loop(ctx context.Context, in Input) (RunStatus, error) {
	ctx = r.context(ctx)
	resuming, gate, err := r.start(ctx, in)
	if err != nil {
		return StatusFailed, err
	}
	if in.Prepare {
		return StatusCompleted, nil // start saved what changed
	}
	for {
		if !resuming {
			next, err := r.modelTurn(ctx)
			switch {
			case err != nil:
				return StatusFailed, err
			case next == answerRejected:
				continue
			case next == finalAnswer:
				more, err := r.beforeStop(ctx)
				if err != nil {
					return StatusFailed, err
				}
				if !more {
					return StatusCompleted, r.saveStep(ctx)
				}
				continue
			}
		}
		turn, idx, err := r.toolCallsTurn(resuming)
		if err != nil {
			return StatusFailed, err
		}
		if gate {
			if stop, status, err := r.gateTurn(ctx, turn, idx); stop {
				return status, err
			}
		}
		resumed := resuming
		resuming, gate = false, true
		if stop, status, err := r.toolTurn(ctx, turn, idx); stop {
			return status, err
		}
		if resumed {
			r.endResume()
		}
		if r.rt.endAsked() {
			return StatusCompleted, nil // toolTurn saved the step
		}
	}
}

// beforeStop runs the StopHooks on a final answer; more reports that one
// kept the run going, its text added for the model.
func (r *run) beforeStop(ctx context.Context) (more bool, err error) {
	rt := r.rt
	if len(r.a.stops) == 0 || rt.endAsked() {
		return false, nil
	}
	s := &Stop{Runtime: rt, Answer: &rt.state.Messages[len(rt.state.Messages)-1], Continued: r.continued}
	for _, h := range r.a.stops {
		text, err := h.BeforeStop(ctx, s)
		if err != nil {
			return false, fmt.Errorf("agent: %s: %w", middlewareName(h), err)
		}
		if text != "" {
			r.continued++
			rt.appendMessages(llm.UserText(text))
			return true, nil
		}
	}
	return false, nil
}

// endResume forgets the decisions of the interrupt the run resumed, once
// the turn they were for has run: they answered those calls only. A later
// call that reuses one of their ids (a model or server that repeats ids)
// goes through the gates like any other, never under an old approval.
func (r *run) endResume() {
	r.rt.decisions, r.rt.resuming, r.nested = nil, false, nil
}

// context is ctx with what tools and models of this run reach through it:
// the runtime, the state's files, the agent's name and retry notices.
func (r *run) context(ctx context.Context) context.Context {
	a, rt := r.a, r.rt
	if len(a.name) > 0 {
		ctx = llm.WithAgent(ctx, a.name)
	}
	if rt.emit != nil {
		ctx = llm.WithRetryNotify(ctx, rt.noticeRetry)
	}
	return thread.WithFiles(context.WithValue(ctx, runtimeKey{}, rt), rt.state.Files)
}

// start applies the input (decisions that resume an interrupt, then new
// messages, values and files), runs the BeforeAgent hooks and saves what
// changed. It reports whether the run resumes an interrupted turn, and
// whether that turn's gates run again: only if one of them raised the
// interrupt (calls that passed them before, and whose tools interrupted,
// run again directly).
func (r *run) start(ctx context.Context, in Input) (resuming, gate bool, err error) {
	a, rt := r.a, r.rt
	resuming, gate = in.Decisions != nil, true
	if resuming {
		if err := r.applyDecisions(in.Decisions); err != nil {
			return false, false, err
		}
		rt.resuming = true
		gate = slices.ContainsFunc(r.pending, func(p pendingInterrupt) bool { return p.Owner == "" })
	}
	if n := len(in.Messages); n > 0 && !in.Prepare && !resuming && in.Messages[n-1].Role == llm.RoleUser {
		m := in.Messages[n-1].Clone()
		rt.prompt = &m
	}
	r.pending = nil // answered, or abandoned by new input
	if len(in.Messages) > 0 {
		rt.appendMessages(in.Messages...)
	}
	for k, v := range in.Values {
		rt.SetValue(k, v)
	}
	for p, d := range in.Files {
		rt.state.Files.Put(p, d)
	}
	for _, h := range a.before {
		if err := h.BeforeAgent(ctx, rt); err != nil {
			return false, false, fmt.Errorf("agent: %s: %w", middlewareName(h), err)
		}
	}
	if r.dirty() {
		if err := r.saveStep(ctx); err != nil {
			return false, false, err
		}
	}
	return resuming, gate, nil
}

// modelOutcome is what a model turn leads to.
type modelOutcome int

const (
	callsTools     modelOutcome = iota // the message calls tools
	finalAnswer                        // a final answer: the run is done
	answerRejected                     // a final answer that fails the response schema: ask again
)

// modelTurn calls the model once, within the step limit, and records its
// message, usage and events.
func (r *run) modelTurn(ctx context.Context) (modelOutcome, error) {
	a, rt := r.a, r.rt
	if a.maxSteps > 0 && rt.step >= a.maxSteps {
		return 0, fmt.Errorf("%w (%d model calls)", ErrMaxSteps, a.maxSteps)
	}
	rt.mu.Lock()
	rt.step++
	rt.mu.Unlock()
	// The answer's ID is chosen before the call, so that its deltas carry it.
	rt.messageID = newID()
	rt.mu.Lock()
	rt.answeredBy = nil
	rt.mu.Unlock()
	resp, err := a.callModel(ctx, &ModelRequest{
		Request: llm.Request{System: a.system, Messages: rt.state.Messages, Tools: a.specs, ResponseSchema: a.respSchema},
		Model:   a.model,
		Runtime: rt,
	})
	if err != nil {
		return 0, fmt.Errorf("agent: model call %d: %w", rt.step, err)
	}
	msg := resp.Message
	msg.Role = llm.RoleAssistant
	msg.ID = rt.messageID
	fixToolCalls(&msg)
	rt.appendMessages(msg)
	rt.AddUsage(resp.Usage)
	if rt.emit != nil {
		ev := msg
		if len(msg.ToolCalls) > 0 {
			// The gates may rewrite the calls' arguments in the state's
			// copy (a hook's updatedInput) while a listener reads this
			// one: the event keeps what the model said.
			ev = msg.Clone()
		}
		rt.Emit(Event{Type: EventMessage, Message: &ev})
		u := resp.Usage
		rt.mu.Lock()
		answered, measured := rt.answeredBy, rt.context
		rt.mu.Unlock()
		rt.Emit(Event{Type: EventUsage, Name: r.a.specOf(answered), Usage: &u, Context: measured})
	}
	switch {
	case len(msg.ToolCalls) > 0:
		return callsTools, nil
	case a.respCheck != nil && !r.checkResponse(msg.Text()):
		return answerRejected, nil
	}
	return finalAnswer, nil
}

// toolCallsTurn returns the turn of the last assistant message and its
// index. On resume, the decisions are enforced on a copy of the message
// (hooks may edit the call arguments), which the next checkpoint records
// again.
func (r *run) toolCallsTurn(resuming bool) (*Turn, int, error) {
	rt := r.rt
	idx := lastAssistant(rt.state.Messages)
	if idx < 0 {
		return nil, 0, fmt.Errorf("%w: no assistant message to resume", ErrNotInterrupted)
	}
	if resuming {
		rt.mu.Lock()
		rt.state.ReplaceMessage(idx, rt.state.Messages[idx].Clone())
		rt.mu.Unlock()
	}
	turn := &Turn{Runtime: rt, Message: &rt.state.Messages[idx]}
	if resuming {
		// The decisions apply whatever middleware this agent was
		// rebuilt with: the pending requests came from the checkpoint,
		// not from the gates.
		r.enforceDecisions(turn)
	}
	return turn, idx, nil
}

// gateTurn runs the AfterModel hooks on the turn's tool calls. A hook that
// raises an interrupt stops the run (stop is true), once the calls a gate
// answered (a rule's refusal) have their results, so that they stay
// answered whatever agent resumes the thread.
func (r *run) gateTurn(ctx context.Context, turn *Turn, idx int) (stop bool, status RunStatus, err error) {
	for _, h := range r.a.afterModel {
		err := h.AfterModel(ctx, turn)
		var ie *InterruptError
		if errors.As(err, &ie) {
			r.keepAnswers(ctx, turn, idx)
			status, err := r.interrupt(ctx, []pendingInterrupt{{Requests: ie.Requests}})
			return true, status, err
		}
		if err != nil {
			return true, StatusFailed, fmt.Errorf("agent: %s: %w", middlewareName(h), err)
		}
	}
	return false, "", nil
}

// toolTurn runs the turn's unanswered tool calls, records their results and
// saves a checkpoint. It stops the run (stop is true) when the run is
// cancelled (keeping what finished: unanswered calls are repaired on the
// next run), when a tool interrupts, or when the checkpoint fails.
func (r *run) toolTurn(ctx context.Context, turn *Turn, idx int) (stop bool, status RunStatus, err error) {
	rt := r.rt
	results, interrupts := r.execTools(ctx, turn, pendingCalls(rt.state.Messages, idx))
	msgs := make([]llm.Message, 0, len(results))
	for _, res := range results {
		if res != nil {
			msgs = append(msgs, *res)
		}
	}
	rt.appendMessages(msgs...)
	if err := ctx.Err(); err != nil {
		sctx, cancel := detached(ctx)
		serr := r.save(sctx, nil)
		cancel()
		return true, StatusFailed, errors.Join(err, serr)
	}
	if len(interrupts) > 0 {
		status, err := r.interrupt(ctx, interrupts)
		return true, status, err
	}
	if err := r.saveStep(ctx); err != nil {
		return true, StatusFailed, err
	}
	return false, "", nil
}

// checkResponse validates a final answer against the response schema. A
// mismatch is sent back to the model (true means the answer stands).
func (r *run) checkResponse(text string) bool {
	raw := json.RawMessage(llm.Unfence(text))
	err := r.a.respCheck.Validate(raw)
	if err == nil && json.Valid(raw) {
		r.structured = raw
		return true
	}
	if err == nil {
		err = errors.New("the answer is not JSON")
	}
	r.retries++
	if r.retries > MaxResponseRetries {
		r.structured = nil
		r.responseErr = fmt.Errorf("%w: %v", ErrResponseSchema, err)
		return true
	}
	r.rt.appendMessages(llm.UserText(fmt.Sprintf("Your final answer must be only a JSON object matching the response schema, and it is not: %v. Answer again with the JSON alone.", err)))
	return false
}

// streamModel is the innermost model handler: it streams the call and
// forwards deltas as events.
func streamModel(ctx context.Context, req *ModelRequest) (*llm.Response, error) {
	rt := req.Runtime
	rt.mu.Lock()
	rt.answeredBy = req.Model // a middleware may call next on another goroutine
	if rt.emit != nil {
		rt.context = rt.meter.measure(&req.Request, llm.Describe(req.Model).ContextWindow)
	}
	rt.mu.Unlock()
	for c, err := range req.Model.Stream(ctx, &req.Request) {
		if err != nil {
			return nil, err
		}
		switch c.Type {
		case llm.ChunkText:
			rt.Emit(Event{Type: EventTextDelta, Delta: c.Text, MessageID: rt.messageID})
		case llm.ChunkReasoning:
			rt.Emit(Event{Type: EventReasoningDelta, Delta: c.Text, MessageID: rt.messageID})
		case llm.ChunkDone:
			if c.Response == nil {
				return nil, llm.ErrIncomplete
			}
			return c.Response, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, llm.ErrIncomplete
}

// specOf names m, the model that answered, as usage events do; the
// configured model's name when m does not describe itself. (Models are
// not compared: a model's type need not be comparable.)
func (a *Agent) specOf(m llm.Model) string {
	if m != nil {
		if s := llm.Describe(m).Spec(); s != "" {
			return s
		}
	}
	return a.modelSpec
}

// finish runs the AfterAgent hooks of a completed run, reports the end and
// assembles the Result.
func (r *run) finish(ctx context.Context, status RunStatus, runErr error) (*Result, error) {
	a, rt := r.a, r.rt
	if err := r.flush(); err != nil {
		status, runErr = StatusFailed, errors.Join(runErr, err)
	}
	if runErr == nil && r.responseErr != nil {
		status, runErr = StatusFailed, r.responseErr
	}
	if status == StatusCompleted && runErr == nil {
		for i := len(a.after) - 1; i >= 0; i-- {
			if err := a.after[i].AfterAgent(ctx, rt); err != nil {
				status, runErr = StatusFailed, fmt.Errorf("agent: %s: %w", middlewareName(a.after[i]), err)
				break
			}
		}
	}
	// What is left to save: a completed run's last changes (its AfterAgent
	// hooks'), and with DurabilityExit the whole run, however it ended but
	// interrupted (an interrupt saved it). A cancelled context does not
	// lose them.
	if status != StatusInterrupted && r.a.saver != nil && (runErr == nil || r.durability == DurabilityExit) && r.dirty() {
		sctx, cancel := detached(ctx)
		if err := r.save(sctx, nil); err != nil {
			status, runErr = StatusFailed, errors.Join(runErr, err)
		}
		cancel()
	}
	if runErr != nil {
		status = StatusFailed
	}
	changedFiles, changedValues := rt.state.Changed()
	res := &Result{
		ThreadID:      rt.threadID,
		CheckpointID:  r.checkpoint,
		Status:        status,
		State:         rt.state,
		Usage:         rt.Usage(),
		Steps:         rt.Step(),
		ChangedFiles:  changedFiles,
		ChangedValues: changedValues,
		EndCode:       rt.EndCode(),
		EndReason:     rt.EndReason(),
	}
	if status == StatusCompleted {
		res.Structured = r.structured
	}
	if status == StatusInterrupted {
		for _, p := range r.pending {
			res.Interrupts = append(res.Interrupts, p.Requests...)
		}
	}
	if rt.emit != nil {
		if runErr != nil {
			rt.Emit(Event{Type: EventError, Error: runErr.Error()})
		}
		if status == StatusInterrupted {
			rt.Emit(Event{Type: EventInterrupt, Interrupts: res.Interrupts})
		}
		u := res.Usage
		end := Event{Type: EventRunEnd, ThreadID: rt.threadID, CheckpointID: r.checkpoint, Status: status, Usage: &u, Interrupts: res.Interrupts,
			EndCode: res.EndCode, EndReason: res.EndReason}
		if runErr != nil {
			end.Error = runErr.Error()
		}
		rt.emitLast(end)
	}
	return res, runErr
}

// fixToolCalls gives every call a unique id and a JSON object for
// arguments, whatever the model produced, so results pair with calls. An
// id it makes up comes from the message's own (random) id, so it is
// unique in the thread, across runs too: a subagent's thread is named by
// its call's id, and providers pair results with calls by id.
func fixToolCalls(m *llm.Message) {
	var seen map[string]bool
	for i := range m.ToolCalls {
		c := &m.ToolCalls[i]
		if c.ID == "" || seen[c.ID] {
			c.ID = "call_" + m.ID[:min(len(m.ID), 12)] + "_" + strconv.Itoa(i)
		}
		if len(m.ToolCalls) > 1 {
			if seen == nil {
				seen = make(map[string]bool, len(m.ToolCalls))
			}
			seen[c.ID] = true
		}
		if len(c.Args) == 0 {
			c.Args = json.RawMessage("{}")
		}
	}
}

// lastAssistant returns the index of the last assistant message.
func lastAssistant(msgs []llm.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleAssistant {
			return i
		}
	}
	return -1
}

// pendingCalls returns the calls of msgs[idx] that have no result after it.
func pendingCalls(msgs []llm.Message, idx int) []llm.ToolCall {
	calls := msgs[idx].ToolCalls
	if idx == len(msgs)-1 {
		return calls
	}
	done := make(map[string]bool)
	for _, m := range msgs[idx+1:] {
		if m.Role == llm.RoleTool {
			done[m.ToolCallID] = true
		}
	}
	var out []llm.ToolCall
	for _, c := range calls {
		if !done[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

func middlewareName(h any) string {
	if m, ok := h.(Middleware); ok {
		return m.Name()
	}
	return fmt.Sprintf("%T", h)
}

// newID returns a random identifier for a thread.
func newID() string {
	var b [16]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
