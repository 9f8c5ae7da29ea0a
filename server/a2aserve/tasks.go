package a2aserve

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/internal/clip"
	"github.com/deepagents-go/deepagents/langgraph"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/todos"
	"github.com/deepagents-go/deepagents/server"
	"github.com/deepagents-go/deepagents/store"
)

// An A2A task is a thread's runs towards one answer: its context is the
// thread, its first run starts with the client's message, and each answer
// to its question (a decision on the tool calls it waits on) resumes the
// thread in a run of its own. The task's record, in the server's store
// (shared by replicas), names its current run; its state is that run's
// while it goes on, and what the run ended as after.
//
// The changes of a context's tasks that decide on what they read (a task
// started in a context that may have others, a task answered, a waiting
// one cancelled, the thread's tasks forgotten) are made holding the
// context's lock, on the database: no replica's change can overwrite
// another's it did not see. A run's end is recorded without it: only the
// run's own replica writes it, and nothing else changes a task whose run
// goes on (an answer or a cancel needs the state that end writes).

// A task's record is kept in its context's namespace, by task ID, so that
// a context's tasks are a range of the store; the index finds a task's
// context from its ID alone (tasks/get).
var (
	a2aTasksNamespace = []string{"deepagents", "server", "a2a_tasks"}
	a2aIndexNamespace = []string{"deepagents", "server", "a2a_task_contexts"}
)

// contextNamespace holds a context's task records.
func contextNamespace(contextID string) []string {
	return append(slices.Clip(a2aTasksNamespace), contextID)
}

// contextLock is the lock of an A2A context's tasks.
func contextLock(contextID string) string { return "deepagents-a2a/" + contextID }

// Bounds of a task's record: the messages kept (the client's, and the
// questions asked), what each keeps of its parts (their text, data and
// links, each part counting a2aPartCost more), and a failure's reason.
const (
	a2aHistoryLimit = 20
	a2aMessageLimit = 64 << 10
	a2aPartsLimit   = 64
	a2aPartCost     = 64
	a2aReasonLimit  = 4 << 10
)

// a2aFeedLimit bounds the events a live task keeps for the streams that
// follow it: a follower that falls further behind misses the oldest.
const a2aFeedLimit = 1000

// taskRecord is an A2A task as the store keeps it.
type taskRecord struct {
	ID          a2a.TaskID    `json:"-"`
	ContextID   string        `json:"context_id"`
	AssistantID string        `json:"assistant_id"`
	RunID       string        `json:"run_id"` // the task's current run
	State       a2a.TaskState `json:"state"`
	// Status is the status message: the question of a task that waits
	// for a decision, or why it failed.
	Status *a2a.Message `json:"status,omitempty"`
	// Answer is the completed task's answer, its artifact.
	Answer string `json:"answer,omitempty"`
	// Background names the background tasks whose requests for approval
	// the task waits on (its question), when it waits on theirs.
	Background []string       `json:"background,omitempty"`
	History    []*a2a.Message `json:"history"`
	UpdatedAt  time.Time      `json:"updated_at"`
}

func (t *taskRecord) TaskInfo() a2a.TaskInfo {
	return a2a.TaskInfo{TaskID: t.ID, ContextID: t.ContextID}
}

// remember adds m to the task's history, within its bounds: what a client
// sent is kept as text, data and links, at most a2aMessageLimit bytes of
// them; files' bytes, metadata and extensions are not kept (the thread
// has what the agent read).
func (t *taskRecord) remember(m *a2a.Message) {
	kept := &a2a.Message{ID: clip.Text(m.ID, 256), Role: m.Role, TaskID: t.ID, ContextID: t.ContextID}
	budget := a2aMessageLimit
	note := func(format string, args ...any) {
		kept.Parts = append(kept.Parts, a2a.TextPart{Text: fmt.Sprintf(format, args...)})
	}
	for i, p := range m.Parts {
		if budget <= 0 || len(kept.Parts) >= a2aPartsLimit {
			note("(%d more parts, not kept in the task's history)", len(m.Parts)-i)
			break
		}
		budget -= a2aPartCost
		switch p := p.(type) {
		case a2a.TextPart:
			text := clip.Text(p.Text, max(budget, 0))
			budget -= len(text)
			kept.Parts = append(kept.Parts, a2a.TextPart{Text: text})
		case a2a.DataPart:
			b, _ := json.Marshal(p.Data)
			if len(b) > budget {
				note("%s", clip.Text(string(b), max(budget, 0)))
			} else {
				kept.Parts = append(kept.Parts, a2a.DataPart{Data: p.Data})
			}
			budget -= len(b)
		case a2a.FilePart:
			switch f := p.File.(type) {
			case a2a.FileURI:
				if len(f.URI) <= min(budget, 2048) {
					meta := a2a.FileMeta{Name: clip.Text(f.Name, 256), MimeType: clip.Text(f.MimeType, 128)}
					kept.Parts = append(kept.Parts, a2a.FilePart{File: a2a.FileURI{URI: f.URI, FileMeta: meta}})
					budget -= len(f.URI)
					continue
				}
				note("(%s, a link not kept in the task's history)", clip.Text(cmp.Or(f.Name, "a file"), 256))
			case a2a.FileBytes:
				note("(%s, not kept in the task's history)", clip.Text(cmp.Or(f.Name, "a file"), 256))
			}
		}
	}
	t.History = append(t.History, kept)
	if n := len(t.History); n > a2aHistoryLimit {
		t.History = slices.Delete(t.History, 0, n-a2aHistoryLimit)
	}
}

// inContext runs f holding the context's lock.
func (s *agents) inContext(ctx context.Context, contextID string, f func() error) error {
	unlock, err := s.srv.Lock(ctx, contextLock(contextID))
	if err != nil {
		return fmt.Errorf("%w: taking the context's lock: %v", a2a.ErrInternalError, err)
	}
	defer unlock()
	return f()
}

// putTask writes a task's record (a new one's, with its index entry, in
// one transaction), trying again a few times: a record not written would
// leave a task working forever.
func (s *agents) putTask(ctx context.Context, t *taskRecord, isNew bool) error {
	t.UpdatedAt = time.Now().UTC()
	items := []store.Item{{Namespace: contextNamespace(t.ContextID), Key: string(t.ID), Value: asValue(t)}}
	if isNew {
		items = append(items, store.Item{Namespace: a2aIndexNamespace, Key: string(t.ID), Value: map[string]any{"context_id": t.ContextID}})
	}
	ctx = context.WithoutCancel(ctx)
	for try := 1; ; try++ {
		err := store.PutAll(ctx, s.store, items)
		if err == nil || try == 3 {
			return err
		}
		time.Sleep(time.Duration(try) * 100 * time.Millisecond)
	}
}

// getTask reads a task's record; nil when there is none.
func (s *agents) getTask(ctx context.Context, id a2a.TaskID) (*taskRecord, error) {
	if idProblem(string(id)) != "" {
		return nil, nil
	}
	ix, err := s.store.Get(ctx, a2aIndexNamespace, string(id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	contextID, _ := ix.Value["context_id"].(string)
	it, err := s.store.Get(ctx, contextNamespace(contextID), string(id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return taskOf(it), nil
}

func taskOf(it *store.Item) *taskRecord {
	t := &taskRecord{}
	fromValue(it.Value, t) //nolint:errcheck // what does not fit stays zero
	t.ID = a2a.TaskID(it.Key)
	return t
}

// contextTasks are the records of a context's tasks in a state.
func (s *agents) contextTasks(ctx context.Context, contextID string, state a2a.TaskState) ([]*taskRecord, error) {
	items, err := s.store.Search(ctx, contextNamespace(contextID), store.SearchOptions{Filter: map[string]any{"state": string(state)}, Limit: 100})
	if err != nil {
		return nil, err
	}
	out := make([]*taskRecord, len(items))
	for i := range items {
		out[i] = taskOf(&items[i])
	}
	return out, nil
}

// busyWith returns the task a context's thread runs now, if any. Its
// caller holds the context's lock, under which every task is recorded
// before its run can take the thread: a task started through another
// replica is seen before its run holds the thread.
func (s *agents) busyWith(ctx context.Context, contextID string) (*taskRecord, error) {
	started, err := s.contextTasks(ctx, contextID, a2a.TaskStateSubmitted)
	if err != nil {
		return nil, err
	}
	for _, t := range started {
		if st, _, _ := s.runState(ctx, t); st == a2a.TaskStateSubmitted || st == a2a.TaskStateWorking {
			return t, nil
		}
	}
	return nil, nil
}

// settleWaiting cancels the tasks of a context that wait for a decision,
// but the one named: a new task in the context goes on from where the
// thread is, and their question is no longer asked. Its caller holds the
// context's lock.
func (s *agents) settleWaiting(ctx context.Context, contextID string, except a2a.TaskID) {
	ctx = context.WithoutCancel(ctx)
	waiting, err := s.contextTasks(ctx, contextID, a2a.TaskStateInputRequired)
	if err != nil {
		s.log.Warn("server: looking up a context's waiting A2A tasks", "context", contextID, "err", err)
		return
	}
	for _, t := range waiting {
		if t.ID != except {
			t.State, t.Status = a2a.TaskStateCanceled, nil
			if err := s.putTask(ctx, t, false); err != nil {
				s.log.Warn("server: cancelling a waiting A2A task", "task", t.ID, "err", err)
			}
		}
	}
}

// forgetTasks deletes the A2A tasks of a deleted thread, once those whose
// runs this replica executed (cancelled with the thread's runs) have
// recorded their end. A replica that records a task's end later finds no
// record, and writes none.
func (s *agents) forgetTasks(ctx context.Context, contextID string) {
	// Most threads have none: no lock is taken for them.
	if items, err := s.store.Search(ctx, contextNamespace(contextID), store.SearchOptions{Limit: 1}); err == nil && len(items) == 0 {
		return
	}
	for _, lt := range s.a2aTasks.of(contextID) {
		select {
		case <-lt.ended:
		case <-ctx.Done():
			return
		}
	}
	err := s.inContext(ctx, contextID, func() error {
		for {
			items, err := s.store.Search(ctx, contextNamespace(contextID), store.SearchOptions{Limit: 100})
			if err != nil || len(items) == 0 {
				return err
			}
			for _, it := range items {
				// The index first: a task it does not name is gone.
				if err := s.store.Delete(ctx, a2aIndexNamespace, it.Key); err != nil {
					return err
				}
				if err := s.store.Delete(ctx, it.Namespace, it.Key); err != nil {
					return err
				}
			}
		}
	})
	if err != nil {
		s.log.Warn("server: forgetting a deleted thread's A2A tasks", "thread", contextID, "err", err)
	}
	s.cfg.Saver.DeleteThread(context.WithoutCancel(ctx), contextLock(contextID)) //nolint:errcheck // a lock thread; taken again if needed
}

// taskState is the task's state as clients see it, its status message,
// and its answer when it completed.
func (s *agents) taskState(ctx context.Context, t *taskRecord) (a2a.TaskState, *a2a.Message, string) {
	if t.State.Terminal() || t.State == a2a.TaskStateInputRequired {
		return t.State, t.Status, t.Answer
	}
	return s.runState(ctx, t)
}

// taskView is the task as clients see it, at most historyLength messages
// of its history (nil: all kept).
func (s *agents) taskView(ctx context.Context, t *taskRecord, historyLength *int) *a2a.Task {
	state, msg, answer := s.taskState(ctx, t)
	at := t.UpdatedAt
	task := &a2a.Task{
		ID: t.ID, ContextID: t.ContextID,
		Status:   a2a.TaskStatus{State: state, Message: msg, Timestamp: &at},
		History:  slices.Clone(t.History),
		Metadata: map[string]any{"assistant_id": t.AssistantID, "thread_id": t.ContextID, "run_id": t.RunID},
	}
	if historyLength != nil {
		n := min(max(*historyLength, 0), len(task.History))
		task.History = task.History[len(task.History)-n:]
	}
	if task.History == nil {
		task.History = []*a2a.Message{}
	}
	if state == a2a.TaskStateCompleted {
		task.Artifacts = []*a2a.Artifact{answerArtifact(answer)}
	}
	return task
}

// runState is the state of a task whose record says its run goes on: the
// run's, here or in the shared store when another replica runs it. A run
// that ended, on a replica alive, is about to have its end recorded: the
// task still works. A run whose replica stopped without recording the
// task's end ended as its thread says.
func (s *agents) runState(ctx context.Context, t *taskRecord) (a2a.TaskState, *a2a.Message, string) {
	status, lost, err := s.srv.RunStatus(ctx, t.ContextID, t.RunID)
	switch {
	case err != nil:
		return t.State, nil, "" // nothing known now: as recorded
	case lost:
		return s.lostRun(ctx, t, status)
	}
	if status == langgraph.RunPending {
		return a2a.TaskStateSubmitted, nil, ""
	}
	return a2a.TaskStateWorking, nil, ""
}

// lostRun is the end of a task whose run's replica stopped before it
// recorded the end: a run recorded as ended, successful or waiting for a
// decision, ended as its thread shows; any other failed.
func (s *agents) lostRun(ctx context.Context, t *taskRecord, status langgraph.RunStatus) (a2a.TaskState, *a2a.Message, string) {
	snap, err := s.cfg.Saver.Load(ctx, t.ContextID, "")
	if err == nil {
		switch status {
		case langgraph.RunSuccess:
			if waiting, _ := s.srv.BackgroundApprovals(ctx, t.ContextID); len(waiting) > 0 {
				return a2a.TaskStateInputRequired, a2aBackgroundQuestion(t, lastAnswer(snap.Messages), waiting), ""
			}
			return a2a.TaskStateCompleted, nil, lastAnswer(snap.Messages)
		case langgraph.RunInterrupted:
			if reqs, _ := agent.PendingRequests(snap.Meta); len(reqs) > 0 {
				return a2a.TaskStateInputRequired, a2aQuestion(t, reqs), ""
			}
			return a2a.TaskStateCanceled, nil, ""
		}
	}
	return a2a.TaskStateFailed, a2a.NewMessageForTask(a2a.MessageRoleAgent, t, a2a.TextPart{Text: "The server running this task stopped before the task ended."}), ""
}

// lastAnswer is the text of the last assistant message that calls no
// tool.
func lastAnswer(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := &msgs[i]; m.Role == llm.RoleAssistant && len(m.ToolCalls) == 0 {
			return m.Text()
		}
	}
	return ""
}

// liveTask is a task's run on this replica, and the A2A events it made so
// far, for the streams that follow it.
type liveTask struct {
	// id and contextID are the task's; info is them for the SDK's
	// constructors.
	id        a2a.TaskID
	contextID string
	rn        *server.Run

	mu     sync.Mutex
	events []a2a.Event
	// dropped is how many events went from the front of events, beyond
	// a2aFeedLimit: events[0] is the task's event number dropped.
	dropped int
	done    bool
	changed chan struct{}
	working bool
	paused  bool   // the run ended waiting for decisions
	answer  string // the main agent's last message without tool calls
	// background names the background tasks the run answers (the
	// task's question was theirs).
	background []string
	// ended is closed once the task's end is recorded.
	ended chan struct{}
}

func newLiveTask(t *taskRecord) *liveTask {
	return &liveTask{id: t.ID, contextID: t.ContextID, changed: make(chan struct{}), ended: make(chan struct{})}
}

func (lt *liveTask) TaskInfo() a2a.TaskInfo {
	return a2a.TaskInfo{TaskID: lt.id, ContextID: lt.contextID}
}

// add appends events for the followers; lt.mu is held.
func (lt *liveTask) add(evs ...a2a.Event) {
	lt.events = append(lt.events, evs...)
	if n := len(lt.events) - a2aFeedLimit; n > 0 {
		lt.events = slices.Delete(lt.events, 0, n)
		lt.dropped += n
	}
	close(lt.changed)
	lt.changed = make(chan struct{})
}

func (lt *liveTask) status(state a2a.TaskState, msg *a2a.Message, final bool) *a2a.TaskStatusUpdateEvent {
	ev := a2a.NewStatusUpdateEvent(lt, state, msg)
	ev.Final = final
	return ev
}

// tap turns the main agent's events into status updates: the task is
// working, each assistant message that calls tools (its text and the
// calls), each new plan. The answer is kept for the end.
func (lt *liveTask) tap(ev *agent.Event) {
	if len(ev.Namespace) > 0 {
		return // a subagent's: it shows through its task tool call
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if !lt.working {
		lt.working = true
		lt.add(lt.status(a2a.TaskStateWorking, nil, false))
	}
	switch ev.Type {
	case agent.EventMessage:
		m := ev.Message
		if m == nil || m.Role != llm.RoleAssistant {
			return
		}
		if len(m.ToolCalls) == 0 {
			lt.answer = m.Text()
			return
		}
		lt.add(lt.status(a2a.TaskStateWorking, a2aToolCalls(lt, m), false))
	case agent.EventState:
		if plan, ok := todos.FromEvent(*ev); ok {
			lt.add(lt.status(a2a.TaskStateWorking, a2aPlan(lt, plan), false))
		}
	case agent.EventRunEnd:
		lt.paused = ev.Status == agent.StatusInterrupted
	}
}

// since returns the events after the task's first i (those still kept),
// the number of the next one, whether the task's run has ended, and a
// channel closed when more come.
func (lt *liveTask) since(i int) ([]a2a.Event, int, bool, <-chan struct{}) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	k := min(max(i-lt.dropped, 0), len(lt.events))
	return slices.Clone(lt.events[k:]), lt.dropped + len(lt.events), lt.done, lt.changed
}

// liveTasks are the tasks whose runs this replica executes.
type liveTasks struct {
	mu sync.Mutex
	m  map[a2a.TaskID]*liveTask
}

func (l *liveTasks) get(id a2a.TaskID) *liveTask {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[id]
}

// of returns the live tasks of a context.
func (l *liveTasks) of(contextID string) []*liveTask {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*liveTask
	for _, lt := range l.m {
		if lt.contextID == contextID {
			out = append(out, lt)
		}
	}
	return out
}

func (l *liveTasks) put(lt *liveTask) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[a2a.TaskID]*liveTask{}
	}
	l.m[lt.id] = lt
}

func (l *liveTasks) drop(lt *liveTask) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m[lt.id] == lt {
		delete(l.m, lt.id)
	}
}

// track makes a task's run live here, and records its end when it ends.
func (s *agents) track(lt *liveTask) {
	s.a2aTasks.put(lt)
	if !s.srv.Go(func() { s.settle(lt) }) {
		go s.settle(lt) // the server is closing: the run is being cancelled
	}
}

// settle waits for a task's run to end and records how it ended: the
// answer, the question of a run that waits for decisions, the failure,
// unless the record is gone (with its thread).
func (s *agents) settle(lt *liveTask) {
	defer s.a2aTasks.drop(lt)
	defer close(lt.ended)
	<-lt.rn.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lt.mu.Lock()
	paused, answer := lt.paused, lt.answer
	lt.mu.Unlock()
	var (
		state    a2a.TaskState
		msg      *a2a.Message
		question bool
		waitsOn  []string
	)
	switch status := lt.rn.Status(); {
	case status == langgraph.RunSuccess:
		state = a2a.TaskStateCompleted
		if len(lt.background) > 0 && answer == "" {
			answer = bgAnswered(lt.background)
		}
		// The main agent is done, and background tasks of its thread
		// wait for approval: the task asks for them.
		if waiting, err := s.srv.BackgroundApprovals(ctx, lt.contextID); len(waiting) > 0 {
			state, msg, question = a2a.TaskStateInputRequired, a2aBackgroundQuestion(lt, answer, waiting), true
			for _, a := range waiting {
				waitsOn = append(waitsOn, a.TaskID)
			}
		} else if err != nil {
			s.log.Warn("server: listing a thread's background approvals", "thread", lt.contextID, "err", err)
		}
	case status == langgraph.RunInterrupted && paused:
		state = a2a.TaskStateFailed
		msg = a2a.NewMessageForTask(a2a.MessageRoleAgent, lt, a2a.TextPart{Text: "The run stopped for a decision that cannot be read back from the thread."})
		if snap, err := s.cfg.Saver.Load(ctx, lt.contextID, ""); err == nil {
			if reqs, _ := agent.PendingRequests(snap.Meta); len(reqs) > 0 {
				state, msg, question = a2a.TaskStateInputRequired, a2aQuestion(lt, reqs), true
			}
		}
	case status == langgraph.RunInterrupted:
		state = a2a.TaskStateCanceled
	case s.closing():
		state = a2a.TaskStateFailed
		msg = a2a.NewMessageForTask(a2a.MessageRoleAgent, lt, a2a.TextPart{Text: "The server stopped before the task ended."})
	default:
		state = a2a.TaskStateFailed
		msg = a2a.NewMessageForTask(a2a.MessageRoleAgent, lt, a2a.TextPart{Text: "The run failed: " + clip.Text(cmp.Or(lt.rn.Failure(), "no reason given"), a2aReasonLimit)})
	}
	err := func() error {
		t, err := s.getTask(ctx, lt.id)
		if err != nil || t == nil || t.RunID != lt.rn.ID() {
			return err // forgotten with its thread
		}
		t.State, t.Status, t.Answer, t.Background = state, msg, answer, waitsOn
		if question {
			t.remember(msg)
		}
		return s.putTask(ctx, t, false)
	}()
	if err != nil {
		s.log.Warn("server: recording an A2A task's end", "task", lt.id, "err", err)
	}
	var evs []a2a.Event
	if state == a2a.TaskStateCompleted {
		evs = answerChunks(lt, answer)
	}
	lt.mu.Lock()
	lt.add(append(evs, lt.status(state, msg, true))...)
	lt.done = true
	lt.mu.Unlock()
}
