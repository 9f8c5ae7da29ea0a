package server

import (
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
	"github.com/deepagents-go/deepagents/store"
)

// An A2A task is a thread's runs towards one answer: its context is the
// thread, its first run starts with the client's message, and each answer
// to its question (a decision on the tool calls it waits on) resumes the
// thread in a run of its own. The task's record, in the server's store
// (shared by replicas), names its current run; its state is that run's
// while it goes on, and what the run ended as after.

// a2aTasksNamespace holds the A2A tasks' records, by task ID.
var a2aTasksNamespace = []string{"deepagents", "server", "a2a_tasks"}

// Bounds of a task's record: the messages kept (the client's, and the
// questions asked), and what each keeps of its parts.
const (
	a2aHistoryLimit = 20
	a2aMessageLimit = 64 << 10
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
	Answer    string         `json:"answer,omitempty"`
	History   []*a2a.Message `json:"history"`
	UpdatedAt time.Time      `json:"updated_at"`
}

func (t *taskRecord) TaskInfo() a2a.TaskInfo {
	return a2a.TaskInfo{TaskID: t.ID, ContextID: t.ContextID}
}

// remember adds m to the task's history, within its bounds: a message
// keeps at most a2aMessageLimit bytes of its parts' text and data, files'
// bytes are not kept (the thread has what the agent read of them).
func (t *taskRecord) remember(m *a2a.Message) {
	kept := *m
	kept.TaskID, kept.ContextID = t.ID, t.ContextID
	kept.Parts = make(a2a.ContentParts, 0, len(m.Parts))
	budget := a2aMessageLimit
	for i, p := range m.Parts {
		if budget <= 0 {
			kept.Parts = append(kept.Parts, a2a.TextPart{Text: fmt.Sprintf("(%d more parts, not kept in the task's history)", len(m.Parts)-i)})
			break
		}
		switch p := p.(type) {
		case a2a.TextPart:
			p.Text = clip.Text(p.Text, budget)
			budget -= len(p.Text)
			kept.Parts = append(kept.Parts, p)
		case a2a.DataPart:
			b, _ := json.Marshal(p.Data)
			budget -= len(b)
			if budget < 0 {
				kept.Parts = append(kept.Parts, a2a.TextPart{Text: clip.Text(string(b), budget+len(b))})
				continue
			}
			kept.Parts = append(kept.Parts, p)
		case a2a.FilePart:
			name := ""
			switch f := p.File.(type) {
			case a2a.FileBytes:
				name = f.Name
			case a2a.FileURI:
				if budget -= len(f.URI); budget >= 0 {
					kept.Parts = append(kept.Parts, p)
					continue
				}
				name = f.Name
			}
			kept.Parts = append(kept.Parts, a2a.TextPart{Text: "(" + cmpName(name, "a file") + ", not kept in the task's history)"})
		}
	}
	t.History = append(t.History, &kept)
	if n := len(t.History); n > a2aHistoryLimit {
		t.History = slices.Delete(t.History, 0, n-a2aHistoryLimit)
	}
}

// putTask writes a task's record.
func (s *Server) putTask(ctx context.Context, t *taskRecord) error {
	t.UpdatedAt = time.Now().UTC()
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	return s.store.Put(context.WithoutCancel(ctx), a2aTasksNamespace, string(t.ID), v)
}

// getTask reads a task's record; nil when there is none.
func (s *Server) getTask(ctx context.Context, id a2a.TaskID) (*taskRecord, error) {
	if id == "" || idProblem(string(id)) != "" {
		return nil, nil
	}
	it, err := s.store.Get(ctx, a2aTasksNamespace, string(id))
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
	if b, err := json.Marshal(it.Value); err == nil {
		json.Unmarshal(b, t) //nolint:errcheck // what does not fit stays zero
	}
	t.ID = a2a.TaskID(it.Key)
	return t
}

// settleWaiting cancels the tasks of a context that wait for a decision,
// but the one named: a new task in the context goes on from where the
// thread is, and their question is no longer asked.
func (s *Server) settleWaiting(ctx context.Context, contextID string, except a2a.TaskID) {
	items, err := s.store.Search(ctx, a2aTasksNamespace, store.SearchOptions{Filter: map[string]any{"context_id": contextID, "state": string(a2a.TaskStateInputRequired)}, Limit: 100})
	if err != nil {
		s.log.Warn("server: looking up a context's waiting A2A tasks", "context", contextID, "err", err)
		return
	}
	for i := range items {
		if t := taskOf(&items[i]); t.ID != except {
			t.State, t.Status = a2a.TaskStateCanceled, nil
			if err := s.putTask(ctx, t); err != nil {
				s.log.Warn("server: cancelling a waiting A2A task", "task", t.ID, "err", err)
			}
		}
	}
}

// forgetTasks deletes the A2A tasks of a deleted thread, once those whose
// runs this replica executed (cancelled with the thread's runs) have
// recorded their end.
func (s *Server) forgetTasks(ctx context.Context, contextID string) {
	for _, lt := range s.a2aTasks.of(contextID) {
		select {
		case <-lt.ended:
		case <-ctx.Done():
			return
		}
	}
	for {
		items, err := s.store.Search(ctx, a2aTasksNamespace, store.SearchOptions{Filter: map[string]any{"context_id": contextID}, Limit: 100})
		if err != nil || len(items) == 0 {
			return
		}
		for _, it := range items {
			if err := s.store.Delete(ctx, a2aTasksNamespace, it.Key); err != nil {
				return // what remains is found by no context: thread IDs are not reused
			}
		}
	}
}

// taskView is the task as clients see it, at most historyLength messages
// of its history (nil: all kept). While its run goes on, the run says its
// state: here, or in the shared store when another replica runs it.
func (s *Server) taskView(ctx context.Context, t *taskRecord, historyLength *int) *a2a.Task {
	state, msg := t.State, t.Status
	if !state.Terminal() && state != a2a.TaskStateInputRequired {
		state, msg = s.runState(ctx, t)
	}
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
		task.Artifacts = []*a2a.Artifact{answerArtifact(t.Answer)}
	}
	return task
}

// runState is the state of a task whose run has not ended as far as its
// record says. A run that ended, whose replica is alive, is about to have
// its end recorded: it still reads as working.
func (s *Server) runState(ctx context.Context, t *taskRecord) (a2a.TaskState, *a2a.Message) {
	status := langgraph.RunStatus("")
	if rn := s.runs.get(t.ContextID, t.RunID); rn != nil {
		status = rn.wire().Status
		if status.Done() {
			return a2a.TaskStateWorking, nil
		}
	} else if s.cfg.Store != nil {
		if it, err := s.cfg.Store.Get(ctx, runsNamespace, t.RunID); err == nil {
			rec := recordOf(it)
			status = rec.Status
			if _, dead := s.replica(ctx, rec.Replica); !dead && rec.Replica != s.replicaID {
				if status.Done() {
					return a2a.TaskStateWorking, nil
				}
			} else if !status.Done() || rec.Replica == s.replicaID {
				status = langgraph.RunError
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return t.State, nil // nothing known now: as recorded
		}
	}
	switch status {
	case langgraph.RunPending:
		return a2a.TaskStateSubmitted, nil
	case langgraph.RunRunning:
		return a2a.TaskStateWorking, nil
	}
	// The run is gone with the server that ran it (killed, restarted).
	return a2a.TaskStateFailed, a2a.NewMessageForTask(a2a.MessageRoleAgent, t, a2a.TextPart{Text: "The server running this task stopped before the task ended."})
}

// liveTask is a task's run on this replica, and the A2A events it made so
// far, for the streams that follow it.
type liveTask struct {
	rec *taskRecord // written by the follower alone once the run started
	rn  *run

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
	// ended is closed once the task's end is recorded.
	ended chan struct{}
}

func newLiveTask(rec *taskRecord) *liveTask {
	return &liveTask{rec: rec, changed: make(chan struct{}), ended: make(chan struct{})}
}

func (lt *liveTask) TaskInfo() a2a.TaskInfo { return lt.rec.TaskInfo() }

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
		if lt.rec.ContextID == contextID {
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
	l.m[lt.rec.ID] = lt
}

func (l *liveTasks) drop(lt *liveTask) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m[lt.rec.ID] == lt {
		delete(l.m, lt.rec.ID)
	}
}

// follow records the task's run, and its end once the run ends: the
// answer, the question of a run that waits for decisions, the failure.
// The record is written before follow returns, so that the end, written
// later by the same goroutine, is never overwritten by the start.
func (s *Server) follow(ctx context.Context, lt *liveTask) {
	if err := s.putTask(ctx, lt.rec); err != nil {
		s.log.Warn("server: recording an A2A task", "task", lt.rec.ID, "err", err)
	}
	s.a2aTasks.put(lt)
	if !s.goRun(func() { s.settle(lt) }) {
		s.settle(lt) // the server is closing: the run is being cancelled
	}
}

// settle waits for a task's run to end and records how it ended.
func (s *Server) settle(lt *liveTask) {
	defer s.a2aTasks.drop(lt)
	<-lt.rn.finished
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := lt.rec
	lt.mu.Lock()
	paused, answer := lt.paused, lt.answer
	lt.mu.Unlock()
	var evs []a2a.Event
	rec.Status = nil
	switch status := lt.rn.wire().Status; {
	case status == langgraph.RunSuccess:
		rec.State, rec.Answer = a2a.TaskStateCompleted, answer
		evs = append(answerChunks(lt, answer), lt.status(rec.State, nil, true))
	case status == langgraph.RunInterrupted && paused:
		snap, err := s.cfg.Saver.Load(ctx, rec.ContextID, "")
		var reqs []agent.ActionRequest
		if err == nil {
			reqs, _ = agent.PendingRequests(snap.Meta)
		}
		if len(reqs) == 0 {
			rec.State = a2a.TaskStateFailed
			rec.Status = a2a.NewMessageForTask(a2a.MessageRoleAgent, rec, a2a.TextPart{Text: "The run stopped for a decision that cannot be read back from the thread."})
		} else {
			rec.State = a2a.TaskStateInputRequired
			rec.Status = a2aQuestion(rec, snap.ID, reqs)
			rec.remember(rec.Status)
		}
		evs = append(evs, lt.status(rec.State, rec.Status, true))
	case status == langgraph.RunInterrupted:
		rec.State = a2a.TaskStateCanceled
		evs = append(evs, lt.status(rec.State, nil, true))
	default:
		rec.State = a2a.TaskStateFailed
		rec.Status = a2a.NewMessageForTask(a2a.MessageRoleAgent, rec, a2a.TextPart{Text: "The run failed: " + cmpName(lt.rn.errMsg, "no reason given")})
		evs = append(evs, lt.status(rec.State, rec.Status, true))
	}
	if err := s.putTask(ctx, rec); err != nil {
		s.log.Warn("server: recording an A2A task's end", "task", rec.ID, "err", err)
	}
	lt.mu.Lock()
	lt.add(evs...)
	lt.done = true
	lt.mu.Unlock()
	close(lt.ended)
}
