package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/langgraph"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/steer"
	"github.com/deepagents-go/deepagents/middleware/todos"
	"github.com/deepagents-go/deepagents/thread"
)

// sseEvent is one event of a run's stream; seq is its SSE id.
type sseEvent struct {
	seq  int
	name string
	data []byte
}

// run is a run the server executes, and the events it produced so far.
type run struct {
	id, threadID, assistantID string
	multitask                 langgraph.MultitaskStrategy
	onDisconnect              string
	// started is set once the run took a worker slot and began (read and
	// written by its execute goroutine only).
	started   bool
	createdAt time.Time
	metadata  map[string]any
	modes     map[langgraph.StreamMode]bool
	temporary bool   // a stateless run's thread, deleted after it
	subgraphs bool   // stream_subgraphs: subagents' events too
	startHead string // the thread's head when the run was asked for
	cancel    context.CancelCauseFunc
	finished  chan struct{}
	// tap, when set, sees each of the agent's events (runAsk.tap).
	tap     func(*agent.Event)
	endedAt time.Time // set under runs.mu

	mu        sync.Mutex
	status    langgraph.RunStatus
	updatedAt time.Time
	events    []sseEvent
	seq       int
	changed   chan struct{} // closed and replaced when events are added
	done      bool
	final     map[string]any // the last values (wait, join)
	errMsg    string
	// lastValues is the index in events of the last values event holding
	// the whole state (-1: none): such an event replaces the client's
	// whole state, so the one before it is dropped from the replay buffer,
	// which keeps a long run's buffer the size of its messages, not of its
	// steps times its state.
	lastValues int
}

// emit adds an event to the run's stream.
func (rn *run) emit(name string, v any) { rn.add(name, v, false) }

// emitState adds a values event holding the whole state, which replaces
// the values event before it in the replay buffer.
func (rn *run) emitState(v any) { rn.add("values", v, true) }

func (rn *run) add(name string, v any, state bool) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(langgraph.Failure{Error: "EncodingError", Message: err.Error()})
		name, state = "error", false
	}
	rn.mu.Lock()
	defer rn.mu.Unlock()
	rn.seq++
	if state {
		if rn.lastValues >= 0 {
			rn.events = slices.Delete(rn.events, rn.lastValues, rn.lastValues+1)
		}
		rn.lastValues = len(rn.events)
	}
	rn.events = append(rn.events, sseEvent{seq: rn.seq, name: name, data: b})
	close(rn.changed)
	rn.changed = make(chan struct{})
}

// since returns the events after seq, whether the run is done, and a
// channel closed when more come.
func (rn *run) since(seq int) ([]sseEvent, bool, <-chan struct{}) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	i, _ := slices.BinarySearchFunc(rn.events, seq+1, func(e sseEvent, s int) int { return e.seq - s })
	return slices.Clone(rn.events[i:]), rn.done, rn.changed
}

func (rn *run) setStatus(status langgraph.RunStatus) {
	rn.mu.Lock()
	rn.status, rn.updatedAt = status, time.Now().UTC()
	rn.mu.Unlock()
}

// wire is the run on the wire.
func (rn *run) wire() langgraph.Run {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	return langgraph.Run{RunID: rn.id, ThreadID: rn.threadID, AssistantID: rn.assistantID, CreatedAt: rn.createdAt,
		UpdatedAt: rn.updatedAt, Status: rn.status, Metadata: rn.metadata, MultitaskStrategy: rn.multitask, Kwargs: map[string]any{}}
}

// runs is the registry of this process's runs.
type runs struct {
	mu       sync.Mutex
	byID     map[string]*run
	active   map[string]*run // by thread: the run holding it
	finished []*run          // oldest first, for pruning
	pruned   int             // finished[:pruned] have let their events go
}

// keepFinished is how many finished runs are kept for get, join and list.
const keepFinished = 1000

func newRuns() *runs {
	return &runs{byID: map[string]*run{}, active: map[string]*run{}}
}

func (rs *runs) get(threadID, runID string) *run {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rn := rs.byID[runID]; rn != nil && rn.threadID == threadID {
		return rn
	}
	return nil
}

func (rs *runs) ofThread(threadID string) []*run {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var out []*run
	for _, rn := range rs.byID {
		if rn.threadID == threadID {
			out = append(out, rn)
		}
	}
	slices.SortFunc(out, func(a, b *run) int { return b.createdAt.Compare(a.createdAt) })
	return out
}

// claim makes rn the thread's active run, or returns the run that is.
func (rs *runs) claim(rn *run) *run {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if cur := rs.active[rn.threadID]; cur != nil && cur != rn {
		return cur
	}
	rs.active[rn.threadID] = rn
	rs.byID[rn.id] = rn
	return nil
}

func (rs *runs) finish(rn *run) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.active[rn.threadID] == rn {
		delete(rs.active, rn.threadID)
	}
	rn.endedAt = time.Now()
	rs.finished = append(rs.finished, rn)
	if len(rs.finished) > keepFinished {
		old := rs.finished[0]
		rs.finished = rs.finished[1:]
		delete(rs.byID, old.id)
		rs.pruned = max(rs.pruned-1, 0)
	}
	// A run's events serve readers still catching up with its end; a
	// minute after it, they are let go (a stream of an ended run is empty
	// anyway), and so is its final state, which join then reads from the
	// thread.
	for ; rs.pruned < len(rs.finished); rs.pruned++ {
		old := rs.finished[rs.pruned]
		if rn.endedAt.Sub(old.endedAt) < keepEvents {
			break
		}
		old.mu.Lock()
		old.events, old.final, old.lastValues = nil, nil, -1
		old.mu.Unlock()
	}
}

// activeRun is the run working on the thread, or nil.
func (rs *runs) activeRun(threadID string) *run {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.active[threadID]
}

// register makes rn known (get, list, cancel) before it claims its thread.
func (rs *runs) register(rn *run) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.byID[rn.id] = rn
}

// drop forgets a run that never started (it never reaches execute), and
// releases what waits for it to finish: a run enqueued behind it, an
// interrupt, a thread's deletion.
func (rs *runs) drop(rn *run) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.active[rn.threadID] == rn {
		delete(rs.active, rn.threadID)
	}
	delete(rs.byID, rn.id)
	close(rn.finished)
}

// keepEvents is how long an ended run's events and final state are kept.
const keepEvents = time.Minute

// cancelThread cancels every unfinished run of a thread, the active one
// and those enqueued behind it, and waits for them to end or for ctx.
func (rs *runs) cancelThread(ctx context.Context, threadID string) error {
	rs.mu.Lock()
	var mine []*run
	for _, rn := range rs.byID {
		if rn.threadID == threadID {
			mine = append(mine, rn)
		}
	}
	rs.mu.Unlock()
	for _, rn := range mine {
		rn.cancel(errCancelled)
	}
	for _, rn := range mine {
		select {
		case <-rn.finished:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

var errCancelled = errors.New("run cancelled")

// durability reads durability and checkpoint_during. Unlike LangGraph,
// whose default is async, a run is sync unless it asks: the values stream
// is read from the run's checkpoints, so each values event then comes in
// its step's place rather than during the next step.
func durability(q *langgraph.RunCreate) (agent.Durability, error) {
	switch {
	case q.Durability != "":
		return agent.ParseDurability(q.Durability)
	case q.CheckpointDuring == nil:
		return agent.DurabilitySync, nil
	case *q.CheckpointDuring:
		return agent.DurabilityAsync, nil
	}
	return agent.DurabilityExit, nil
}

// editedAction is an edit decision's new call.
type editedAction struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// decisions reads command.resume: {"decisions": [...]} as LangChain's
// human-in-the-loop middleware takes them. One decision answers every
// pending request (the Deep Agents UI sends one whatever their number).
func decisions(raw json.RawMessage, pending int) ([]agent.Decision, error) {
	var r struct {
		Decisions []struct {
			Type         agent.DecisionType `json:"type"`
			Message      string             `json:"message"`
			Args         json.RawMessage    `json:"args"`
			EditedAction *editedAction      `json:"edited_action"`
			// editedAction is how LangChain's JavaScript middleware spells it.
			EditedActionCamel *editedAction `json:"editedAction"`
		} `json:"decisions"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Decisions) == 0 {
		return nil, errors.New(`command.resume must be {"decisions": [...]}`)
	}
	out := make([]agent.Decision, 0, len(r.Decisions))
	for _, d := range r.Decisions {
		dec := agent.Decision{Type: d.Type, Message: d.Message, Args: d.Args}
		switch {
		case d.EditedAction != nil:
			dec.Args = d.EditedAction.Args
		case d.EditedActionCamel != nil:
			dec.Args = d.EditedActionCamel.Args
		}
		out = append(out, dec)
	}
	switch {
	case len(out) == pending:
		return out, nil
	case len(out) == 1:
		for len(out) < pending {
			out = append(out, out[0])
		}
		return out, nil
	}
	return nil, fmt.Errorf("%d decisions for %d pending actions", len(out), pending)
}

// startRun validates a run request and starts the run in the background.
// threadID is "" for a stateless run. It writes the error response and
// returns nil when the run cannot start.
func (s *Server) startRun(w http.ResponseWriter, r *http.Request, threadID string) *run {
	var q langgraph.RunCreate
	if !readJSON(w, r, &q) {
		return nil
	}
	rn, no := s.launch(r.Context(), runAsk{threadID: threadID, q: &q, from: r})
	if no != nil {
		no.write(w)
		return nil
	}
	return rn
}

// runAsk is a run asked for through any of the server's protocols: the
// LangGraph API's body, and what A2A and MCP have already read.
type runAsk struct {
	threadID string // "" for a stateless run
	q        *langgraph.RunCreate
	// messages, when set, are the run's input, already read (A2A's
	// parts, MCP's task); q.Input then carries none.
	messages []llm.Message
	// tap, when set, sees each event of the agent as it comes, on the
	// run's goroutine: it must not block.
	tap func(*agent.Event)
	// from is the request that asked, for Config.RunContext; nil for the
	// server's own runs (crons).
	from *http.Request
}

// Refusal is why a run (or another request) is refused, answered as
// LangGraph's server answers it.
type Refusal struct {
	status int
	msg    string
	// field, when set, is the body's field at fault: the answer is then
	// the validator's (422).
	field string
	// busy: the thread runs another run (multitask_strategy reject).
	busy bool
}

// Error is the refusal's message, as the LangGraph API answers it.
func (e *Refusal) Error() string { return e.msg }

func (e *Refusal) write(w http.ResponseWriter) {
	if e.field != "" {
		validationError(w, e.field, e.msg)
		return
	}
	httpError(w, e.status, e.msg)
}

func refuse(status int, format string, args ...any) *Refusal {
	return &Refusal{status: status, msg: fmt.Sprintf(format, args...)}
}

func invalidField(field string, err error) *Refusal {
	return &Refusal{status: http.StatusUnprocessableEntity, msg: err.Error(), field: field}
}

// storageRefusal is a Saver error as an answer.
func storageRefusal(threadID string, err error) *Refusal {
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
		return refuse(http.StatusNotFound, "Thread with ID %s not found", threadID)
	case errors.Is(err, checkpoint.ErrBusy):
		return refuse(http.StatusConflict, "Thread is busy")
	case errors.Is(err, context.Canceled):
		return refuse(499, "Request cancelled")
	}
	return refuse(http.StatusInternalServerError, "%s", err.Error())
}

// threadBusy is the answer to a second run on a busy thread.
func threadBusy() *Refusal {
	return &Refusal{status: http.StatusUnprocessableEntity, busy: true,
		msg: "Thread is already running a task. Wait for it to finish or choose a different multitask strategy."}
}

// launch validates a run and starts it in the background.
func (s *Server) launch(ctx context.Context, ask runAsk) (*run, *Refusal) {
	q, threadID := ask.q, ask.threadID
	a, wa := s.assistant(ctx, q.AssistantID)
	if a == nil {
		return nil, refuse(http.StatusNotFound, "No assistant found for %q. Make sure the assistant ID is for a valid assistant or a valid graph ID.", q.AssistantID)
	}
	list, err := q.StreamModes()
	if err != nil {
		return nil, invalidField("stream_mode", err)
	}
	modes := make(map[langgraph.StreamMode]bool, len(list))
	for _, m := range list {
		modes[m] = true
	}
	temporary := false
	if threadID == "" {
		threadID, temporary = newUUID(), q.OnCompletion != langgraph.OnCompletionKeep
	} else if _, err := s.cfg.Saver.Thread(ctx, threadID); err != nil {
		if !errors.Is(err, checkpoint.ErrNotFound) || q.IfNotExists != langgraph.IfNotExistsCreate {
			return nil, storageRefusal(threadID, err)
		}
	}
	in := agent.Input{ThreadID: threadID, Messages: ask.messages}
	if in.Durability, err = durability(q); err != nil {
		return nil, invalidField("durability", err)
	}
	if q.Input != nil {
		for _, k := range slices.Sorted(maps.Keys(q.Input.Values)) {
			if msg := s.unwritable("input", k); msg != "" {
				return nil, refuse(http.StatusUnprocessableEntity, "%s", msg)
			}
		}
		// The input's other keys are state values the run starts with,
		// as in LangGraph (a thread's goal, say).
		d, msg := decodeValues("input", q.Input.Values, time.Now().UTC())
		if msg != "" {
			return nil, refuse(http.StatusUnprocessableEntity, "%s", msg)
		}
		in.Values = d.Values
		for p, f := range d.Files {
			if f == nil {
				return nil, refuse(http.StatusUnprocessableEntity, "input.files[%q]: a run's input cannot remove a file (POST /threads/{thread_id}/state can)", p)
			}
			if in.Files == nil {
				in.Files = map[string]thread.FileData{}
			}
			in.Files[p] = *f
		}
		for i, raw := range q.Input.Messages {
			m, err := fromLangChain(raw)
			if err != nil {
				return nil, refuse(http.StatusUnprocessableEntity, "input.messages[%d]: %v", i, err)
			}
			in.Messages = append(in.Messages, m)
		}
	}
	head := ""
	if th, err := s.cfg.Saver.Thread(ctx, threadID); err == nil {
		head = th.Head
	}
	switch cp := q.CheckpointID; {
	case q.Checkpoint != nil && q.Checkpoint.CheckpointID != "" && q.Checkpoint.CheckpointID != head:
		in.CheckpointID = q.Checkpoint.CheckpointID
	case cp != "" && cp != head:
		in.CheckpointID = cp
	}
	if in.CheckpointID != "" {
		// A run from an earlier checkpoint forks the thread there (the
		// agent's Input.CheckpointID): refused at once when the thread
		// has no such checkpoint, rather than failing once started.
		if _, err := s.cfg.Saver.Load(ctx, threadID, in.CheckpointID); errors.Is(err, checkpoint.ErrNotFound) {
			return nil, refuse(http.StatusNotFound, "Checkpoint %s not found in thread %s", in.CheckpointID, threadID)
		} else if err != nil {
			return nil, storageRefusal(threadID, err)
		}
	}
	if q.Command != nil && len(q.Command.Resume) > 0 {
		if len(in.Messages) > 0 {
			return nil, refuse(http.StatusUnprocessableEntity, "a run resumes (command.resume) or takes input, not both")
		}
		var pending []agent.ActionRequest
		if head != "" {
			snap, err := s.cfg.Saver.Load(ctx, threadID, in.CheckpointID)
			if err != nil {
				return nil, storageRefusal(threadID, err)
			}
			pending, _ = agent.PendingRequests(snap.Meta)
		}
		if len(pending) == 0 && in.CheckpointID == "" && !temporary {
			// The thread's own run waits on nothing: the answer is its
			// background tasks' (background.go).
			if waiting := s.bgWaiting(ctx, threadID); len(waiting) > 0 {
				if len(in.Values) > 0 || len(in.Files) > 0 {
					// Such a run does not run the agent: the input would
					// be dropped without a word.
					return nil, refuse(http.StatusUnprocessableEntity, "a run that answers background tasks (command.resume) runs no agent, so takes no input")
				}
				return s.answerBackground(ctx, threadID, wa, q, modes, waiting)
			}
		}
		if len(pending) == 0 {
			// Nothing waits for the answer: refused, as docs/server.md
			// says, rather than a run that changes nothing.
			return nil, refuse(http.StatusBadRequest, "Cannot resume: thread %s is not waiting for decisions", threadID)
		}
		if in.Decisions, err = decisions(q.Command.Resume, len(pending)); err != nil {
			return nil, invalidField("command.resume", err)
		}
	}
	multitask := q.MultitaskStrategy
	switch multitask {
	case "":
		multitask = langgraph.MultitaskReject
	case langgraph.MultitaskReject, langgraph.MultitaskInterrupt, langgraph.MultitaskRollback, langgraph.MultitaskEnqueue:
	case langgraph.MultitaskSteer:
		cur, no := s.steer(ctx, threadID, q, in)
		if cur != nil || no != nil {
			return cur, no
		}
		multitask = langgraph.MultitaskReject // nothing works on the thread: a run as any
	default:
		return nil, invalidField("multitask_strategy", fmt.Errorf("unknown multitask_strategy %q: reject, interrupt, rollback, enqueue or steer", multitask))
	}
	metadata := q.Metadata
	if metadata == nil {
		metadata = map[string]any{}
	}
	now := time.Now().UTC()
	// The run outlives the request; RunContext may carry something of it
	// over (the caller's trace).
	base := s.baseCtx
	if s.cfg.RunContext != nil && ask.from != nil {
		base = s.cfg.RunContext(base, ask.from)
	}
	runCtx, cancel := context.WithCancelCause(base)
	rn := &run{
		id: newUUID(), threadID: threadID, assistantID: wa.AssistantID, multitask: multitask, onDisconnect: q.OnDisconnect, createdAt: now,
		metadata: metadata, modes: modes, temporary: temporary, subgraphs: q.StreamSubgraphs, cancel: cancel, finished: make(chan struct{}),
		status: langgraph.RunPending, updatedAt: now, changed: make(chan struct{}), lastValues: -1, startHead: head, tap: ask.tap,
	}
	prev, no := s.admit(ctx, rn, multitask)
	if no != nil {
		cancel(nil)
		return nil, no
	}
	// Rollback: the new run starts where the one it cancelled started, so
	// that run's steps are not in its history (they stay in the thread's
	// history, on a branch of their own).
	if multitask == langgraph.MultitaskRollback && prev != nil && in.CheckpointID == "" {
		if prev.startHead != "" {
			in.CheckpointID = prev.startHead
		} else if err := s.resetThread(ctx, threadID); err != nil {
			s.runs.drop(rn)
			cancel(nil)
			return nil, storageRefusal(threadID, err)
		}
	}
	rn.emit("metadata", map[string]any{"run_id": rn.id, "thread_id": threadID, "attempt": 1})
	s.record(rn)
	if !s.goRun(func() { s.execute(runCtx, rn, a, in) }) {
		s.runs.drop(rn)
		cancel(nil)
		return nil, refuse(http.StatusServiceUnavailable, "The server is shutting down")
	}
	return rn, nil
}

// steer gives the input's user messages to the run of this server working
// on the thread (multitask_strategy steer), saved before it answers, and
// returns that run. It returns neither a run nor a refusal when no run
// works on the thread; it refuses a thread that a run of another process
// holds, whose next model request this one cannot reach at once.
func (s *Server) steer(ctx context.Context, threadID string, q *langgraph.RunCreate, in agent.Input) (*run, *Refusal) {
	if q.Command != nil || len(in.Decisions) > 0 || in.CheckpointID != "" {
		return nil, refuse(http.StatusUnprocessableEntity, "multitask_strategy steer takes input messages, not a command or a checkpoint")
	}
	var texts []string
	for i, m := range in.Messages {
		if m.Role != llm.RoleUser || len(m.ToolCalls) > 0 || strings.TrimSpace(m.Text()) == "" {
			return nil, refuse(http.StatusUnprocessableEntity, "input.messages[%d]: multitask_strategy steer takes messages of the user with text", i)
		}
		texts = append(texts, m.Text())
	}
	if len(texts) == 0 {
		return nil, refuse(http.StatusUnprocessableEntity, "multitask_strategy steer needs input.messages")
	}
	cur := s.runs.activeRun(threadID)
	if cur == nil {
		if th, err := s.cfg.Saver.Thread(ctx, threadID); err == nil && th.Status == checkpoint.StatusBusy && s.heldElsewhere(ctx, threadID) {
			return nil, threadBusy()
		}
		return nil, nil
	}
	// The messages go where the agent of the run working reads them.
	working, _ := s.assistant(ctx, cur.assistantID)
	if working == nil || !steer.Enabled(working.Agent) {
		return nil, refuse(http.StatusUnprocessableEntity, "multitask_strategy steer: the run working on thread %s cannot take messages (its agent has no store, or no steer middleware)", threadID)
	}
	for _, t := range texts {
		if err := steer.Send(ctx, working.Agent.Store(), threadID, t); err != nil {
			return nil, refuse(http.StatusServiceUnavailable, "%s", err.Error())
		}
	}
	return cur, nil
}

// resetThread empties a thread that had no checkpoint before the run a
// rollback cancelled: its checkpoints go, its metadata stays.
func (s *Server) resetThread(ctx context.Context, threadID string) error {
	th, err := s.cfg.Saver.Thread(ctx, threadID)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := s.cfg.Saver.DeleteThread(ctx, threadID); err != nil {
		return err
	}
	lease, err := s.cfg.Saver.Acquire(ctx, threadID, th.Metadata)
	if err != nil {
		return err
	}
	return lease.Release(ctx, checkpoint.StatusIdle)
}

// admit registers rn as its thread's run, applying the multitask strategy
// to a run already there: reject refuses rn, interrupt and rollback cancel
// the run there and wait for it to end, enqueue lets rn wait for its turn
// (in execute). It returns the run it cancelled, if any, or why rn may
// not run.
func (s *Server) admit(ctx context.Context, rn *run, strategy langgraph.MultitaskStrategy) (*run, *Refusal) {
	var cancelled *run
	if strategy == langgraph.MultitaskEnqueue {
		s.runs.register(rn)
		return nil, nil
	}
	for {
		cur := s.runs.claim(rn)
		if cur == nil {
			break
		}
		if strategy == langgraph.MultitaskReject {
			return nil, threadBusy()
		}
		cur.cancel(errCancelled)
		cancelled = cur
		select {
		case <-cur.finished:
		case <-ctx.Done():
			return nil, refuse(499, "Request cancelled")
		}
	}
	// Another process may hold the thread: a CLI run, or another replica,
	// whose run interrupt and rollback cancel there.
	if th, err := s.cfg.Saver.Thread(ctx, rn.threadID); err == nil && th.Status == checkpoint.StatusBusy && s.heldElsewhere(ctx, rn.threadID) {
		remote := s.activeRemote(ctx, rn.threadID)
		if strategy == langgraph.MultitaskReject || remote == nil {
			s.runs.drop(rn)
			return nil, threadBusy()
		}
		if err := s.cancelRemote(ctx, remote); err != nil {
			s.runs.drop(rn)
			return nil, refuse(http.StatusConflict, "%s", err.Error())
		}
	}
	return cancelled, nil
}

// heldElsewhere reports whether another process holds a thread its
// status says is busy. A busy status may be the last word of a process
// that died holding the thread (a server killed mid-run and restarted: a
// SQLite lease says busy until it expires): the Saver hands such a thread
// over at once, so taking it tells a dead holder from a live one. A
// thread taken so is released as errored, which is what its run became.
// Any failure to take it reads as held.
func (s *Server) heldElsewhere(ctx context.Context, threadID string) bool {
	lease, err := s.cfg.Saver.Acquire(ctx, threadID, nil)
	if err != nil {
		return true
	}
	if err := lease.Release(context.WithoutCancel(ctx), checkpoint.StatusError); err != nil {
		s.log.Warn("server: releasing the thread of a dead run", "thread", threadID, "err", err)
		return true
	}
	return false
}

// execute runs rn to its end and records its events.
func (s *Server) execute(ctx context.Context, rn *run, a *assistantEntry, in agent.Input) {
	defer close(rn.finished)
	// An enqueued run waits for the runs before it on its thread, here
	// and on other replicas.
	for cur := s.runs.claim(rn); cur != nil; cur = s.runs.claim(rn) {
		select {
		case <-cur.finished:
		case <-ctx.Done():
			s.end(rn, langgraph.RunInterrupted, "")
			return
		}
	}
	for rn.multitask == langgraph.MultitaskEnqueue && s.remoteAhead(ctx, rn) != nil {
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			s.end(rn, langgraph.RunInterrupted, "")
			return
		}
	}
	sl := slot{slots: s.slots}
	if sl.acquire(ctx) != nil {
		s.end(rn, langgraph.RunInterrupted, "")
		return
	}
	defer sl.release()
	rn.setStatus(langgraph.RunRunning)
	rn.started = true
	s.record(rn)
	tr := translator{s: s, rn: rn, streamed: map[string]bool{}}
	status, errMsg := langgraph.RunError, ""
	for ev, err := range s.stream(ctx, rn, a, in, &sl) {
		if err != nil {
			if errors.Is(context.Cause(ctx), errCancelled) {
				status = langgraph.RunInterrupted
				break
			}
			errMsg = err.Error()
			rn.emit("error", langgraph.Failure{Error: errorName(err), Message: errMsg})
			break
		}
		if rn.tap != nil {
			rn.tap(&ev)
		}
		if ev.Type == agent.EventRunEnd && len(ev.Namespace) == 0 {
			switch ev.Status {
			case agent.StatusCompleted:
				status = langgraph.RunSuccess
			case agent.StatusInterrupted:
				status = langgraph.RunInterrupted
				tr.interrupt(ctx)
			}
			continue
		}
		tr.event(ctx, &ev)
	}
	if status == langgraph.RunSuccess || status == langgraph.RunInterrupted {
		tr.finalValues(ctx)
	}
	if status == langgraph.RunSuccess {
		// The run is done, and its thread's background tasks may wait
		// for approval: the pause goes out as a foreground one does.
		if waiting := s.bgWaiting(ctx, rn.threadID); len(waiting) > 0 {
			tr.sendInterrupt(bgInterrupts(waiting))
		}
	}
	rn.errMsg = errMsg
	s.end(rn, status, errMsg)
}

// slot is a run's hold on one of the server's MaxRuns worker slots.
type slot struct {
	slots chan struct{}
	held  bool
}

func (sl *slot) acquire(ctx context.Context) error {
	select {
	case sl.slots <- struct{}{}:
		sl.held = true
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (sl *slot) release() {
	if sl.held {
		<-sl.slots
		sl.held = false
	}
}

// stream runs the agent. An enqueued run that finds its thread held by
// another process (a run of another replica that took the thread first,
// or a CLI run) waits for it instead of failing, as enqueue promises, and
// gives its worker slot back while it waits.
func (s *Server) stream(ctx context.Context, rn *run, a *assistantEntry, in agent.Input, sl *slot) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		for {
			emitted := false
			busy := false
			for ev, err := range a.Agent.Stream(ctx, in) {
				if err != nil && !emitted && rn.multitask == langgraph.MultitaskEnqueue && errors.Is(err, checkpoint.ErrBusy) {
					busy = true
					break
				}
				emitted = true
				if !yield(ev, err) {
					return
				}
			}
			if !busy {
				return
			}
			sl.release()
			select {
			case <-time.After(200 * time.Millisecond):
			case <-ctx.Done():
				yield(agent.Event{}, context.Cause(ctx))
				return
			}
			if err := sl.acquire(ctx); err != nil {
				yield(agent.Event{}, err)
				return
			}
		}
	}
}

// end records a run's end and wakes its readers.
func (s *Server) end(rn *run, status langgraph.RunStatus, errMsg string) {
	if rn.started {
		// Recorded before the run is done, so that a client that sees its
		// stream end reads the error with the thread, and a run enqueued
		// behind it records its own after. A run cancelled while it
		// waited leaves the thread's error as the last run that ran left it.
		s.recordError(rn.threadID, errMsg)
	}
	// The thread is let go before the readers are woken: a client that
	// sees its stream end and starts the next run at once (a resume) must
	// find the thread free, not still this run's.
	s.runs.finish(rn)
	rn.mu.Lock()
	rn.status, rn.updatedAt, rn.done = status, time.Now().UTC(), true
	close(rn.changed)
	rn.changed = make(chan struct{})
	rn.mu.Unlock()
	s.record(rn)
	if rn.temporary {
		s.cfg.Saver.DeleteThread(context.Background(), rn.threadID) //nolint:errcheck // a stateless run's thread; nothing to report to
	}
}

// threadErrorsNamespace keeps, by thread, the error of its last run when
// that run failed: a thread's error, shown with it.
var threadErrorsNamespace = []string{"deepagents", "server", "thread_errors"}

// recordError keeps a thread's last run's error, or forgets it.
func (s *Server) recordError(threadID, msg string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var err error
	if msg != "" {
		err = s.store.Put(ctx, threadErrorsNamespace, threadID, map[string]any{"error": msg})
	} else {
		err = s.store.Delete(ctx, threadErrorsNamespace, threadID)
	}
	if err != nil {
		s.log.Warn("server: recording a thread's error", "thread", threadID, "err", err)
	}
}

// errorName names an error for an error event, as LangGraph sends an
// exception's class.
func errorName(err error) string {
	switch {
	case errors.Is(err, agent.ErrMaxSteps):
		return "GraphRecursionError"
	case errors.Is(err, checkpoint.ErrBusy):
		return "ThreadBusyError"
	case errors.Is(err, context.DeadlineExceeded):
		return "TimeoutError"
	}
	return "AgentError"
}

// translator turns the agent's events into LangGraph stream events.
type translator struct {
	s        *Server
	rn       *run
	streamed map[string]bool // assistant messages whose text went out as deltas
	last     *checkpoint.Snapshot
}

// meta is the metadata dict of a messages-tuple event.
func (t *translator) meta(node string, ev *agent.Event) map[string]any {
	ns := strings.Join(ev.Namespace, "|")
	return map[string]any{
		"langgraph_node": node, "langgraph_step": ev.Step, "langgraph_checkpoint_ns": ns, "checkpoint_ns": ns,
		"run_id": t.rn.id, "thread_id": t.rn.threadID, "tags": []string{},
	}
}

func (t *translator) event(ctx context.Context, ev *agent.Event) {
	rn := t.rn
	// A subagent's events go out only with stream_subgraphs, named
	// "mode|namespace" as LangGraph names a subgraph's; without, the
	// subagent shows through its task tool call.
	suffix := ""
	if len(ev.Namespace) > 0 {
		if !rn.subgraphs {
			return
		}
		suffix = "|" + strings.Join(ev.Namespace, "|")
	}
	tuples, updates := rn.modes[langgraph.StreamMessagesTuple], rn.modes[langgraph.StreamUpdates]
	switch ev.Type {
	case agent.EventCheckpoint:
		if rn.modes[langgraph.StreamValues] && suffix == "" {
			if v := t.values(ctx, ev.CheckpointID); v != nil {
				rn.emitState(v)
			}
		}
	case agent.EventTextDelta:
		if tuples {
			t.streamed[ev.MessageID] = true
			rn.emit("messages"+suffix, []any{aiChunk(ev.MessageID, ev.Delta), t.meta("model", ev)})
		}
	case agent.EventMessage:
		m := ev.Message
		if m == nil {
			return
		}
		if updates {
			rn.emit("updates"+suffix, map[string]any{"model": map[string]any{"messages": []lcMessage{toLangChain(m, m.ID)}}})
		}
		text := ""
		if !t.streamed[m.ID] {
			text = m.Text()
		}
		if !tuples || (text == "" && len(m.ToolCalls) == 0) {
			return
		}
		c := aiChunk(m.ID, text)
		calls := toolCalls(m)
		chunks := make([]lcToolCallChunk, len(calls))
		for i, tc := range calls {
			chunks[i] = lcToolCallChunk{ID: tc.ID, Name: tc.Name, Args: string(tc.Args), Index: i, Type: "tool_call_chunk"}
		}
		c.ToolCalls, c.ToolCallChunks = &calls, &chunks
		rn.emit("messages"+suffix, []any{c, t.meta("model", ev)})
	case agent.EventToolResult:
		m := llm.ToolResult(ev.ToolCallID, ev.Name, ev.Content, ev.IsError)
		msg := toLangChain(&m, ev.MessageID)
		if tuples {
			rn.emit("messages"+suffix, []any{msg, t.meta("tools", ev)})
		}
		if updates {
			rn.emit("updates"+suffix, map[string]any{"tools": map[string]any{"messages": []lcMessage{msg}}})
		}
	case agent.EventNotice:
		// What the agent tells its user on the way (a summary made or
		// failed, a model call retried) is the run's custom data.
		if rn.modes[langgraph.StreamCustom] {
			rn.emit("custom"+suffix, map[string]string{"name": ev.Name, "content": ev.Content, "error": ev.Error})
		}
	case agent.EventState:
		if plan, ok := todos.FromEvent(*ev); updates && ok {
			rn.emit("updates"+suffix, map[string]any{"tools": map[string]any{todos.Value: plan}})
		}
	}
}

// aiChunk is a streamed piece of an assistant message.
func aiChunk(id, text string) lcMessage {
	return lcMessage{Type: "AIMessageChunk", ID: id, Content: text,
		ToolCalls: &[]lcToolCall{}, ToolCallChunks: &[]lcToolCallChunk{}, InvalidToolCalls: &[]empty{}}
}

// values loads the thread's state as of a checkpoint ("" for the head),
// or nil when it cannot be read (the run goes on; the next values event
// will tell). The agent runs ahead of its events: the head may already be
// a later step than the checkpoint event being translated.
func (t *translator) values(ctx context.Context, checkpointID string) map[string]any {
	snap, err := t.s.cfg.Saver.Load(ctx, t.rn.threadID, checkpointID)
	if err != nil {
		t.s.log.Warn("server: loading a thread's state for its stream", "thread", t.rn.threadID, "err", err)
		return nil
	}
	t.last = snap
	v := values(snap, t.s.private)
	t.rn.mu.Lock()
	t.rn.final = v
	t.rn.mu.Unlock()
	return v
}

// interrupt sends the pause as LangGraph does: the state, then the
// interrupt alone in a values event.
func (t *translator) interrupt(ctx context.Context) {
	if t.last == nil {
		t.values(ctx, "")
	}
	if t.last == nil {
		return
	}
	reqs, _ := agent.PendingRequests(t.last.Meta)
	if len(reqs) == 0 {
		return
	}
	t.sendInterrupt([]langgraph.Interrupt{interruptOf(t.last.ID, reqs)})
}

// sendInterrupt adds interrupts to the run's final values, and sends them
// alone in a values (or updates) event.
func (t *translator) sendInterrupt(irq []langgraph.Interrupt) {
	t.rn.mu.Lock()
	if t.rn.final != nil {
		t.rn.final[langgraph.InterruptKey] = irq
	}
	t.rn.mu.Unlock()
	if t.rn.modes[langgraph.StreamValues] || t.rn.modes[langgraph.StreamUpdates] {
		name := langgraph.StreamValues
		if !t.rn.modes[langgraph.StreamValues] {
			name = langgraph.StreamUpdates
		}
		t.rn.emit(string(name), map[string]any{langgraph.InterruptKey: irq})
	}
}

// finalValues makes sure the run's final state is known for wait and join.
func (t *translator) finalValues(ctx context.Context) {
	t.rn.mu.Lock()
	known := t.rn.final != nil
	t.rn.mu.Unlock()
	if !known {
		t.values(ctx, "")
	}
}
