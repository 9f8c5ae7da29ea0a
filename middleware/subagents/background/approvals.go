package background

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/internal/clip"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/thread"
)

// A local task whose subagent keeps a thread (it has approval rules) and
// stops to ask parks: its run ends interrupted, its checkpoint (with the
// pending requests) saved in the Checkpointer, and the task waits in
// status AwaitingApproval for whoever drives the top-level thread to
// answer (Answer). The parked checkpoint is the durable record: after a
// restart, Approvals finds it again from the thread's task records, and
// Answer resumes the subagent from it.

// Errors of Approvals and Answer.
var (
	// ErrNotWaiting: the task is not waiting for approval (it runs,
	// it finished, it was denied, or it is not known).
	ErrNotWaiting = errors.New("async subagents: the task is not waiting for approval")
	// ErrDenied is the cause of a task denied because nobody answered
	// its request within Options.ApprovalWait.
	ErrDenied = errors.New("async subagents: nobody answered the request for approval in time")
)

// Approval is a background task's request for approval, waiting for a
// person: which thread's task asks, which subagent on which task, and
// the tool calls it wants to make.
type Approval struct {
	// ThreadID is the top-level thread whose task asks: the thread that
	// started it, whose driver (terminal, server, editor) answers.
	ThreadID string `json:"thread_id"`
	// TaskID is the task's id, as the model knows it.
	TaskID string `json:"task_id"`
	// Subagent is the name of the subagent that asks.
	Subagent string `json:"subagent"`
	// Task is the task the subagent was given (shortened).
	Task string `json:"task"`
	// SubagentThread is the subagent's thread, where its run waits.
	SubagentThread string `json:"subagent_thread"`
	// Requests are the calls awaiting a decision, in the order Answer
	// takes the decisions.
	Requests []agent.ActionRequest `json:"requests"`
	// Status is AwaitingApproval while it waits; a watcher (Watch) also
	// hears Running once it is answered, and Denied once it has waited
	// for Options.ApprovalWait in vain.
	Status string `json:"status"`
	// Since is when the task stopped to ask (zero when it was found
	// again after a restart).
	Since time.Time `json:"since,omitzero"`
}

// Tools names the tools the approval is for: "note, execute".
func (a Approval) Tools() string {
	names := make([]string, len(a.Requests))
	for i, r := range a.Requests {
		names[i] = r.Tool
	}
	return strings.Join(names, ", ")
}

// taskText is how much of a task's description an Approval keeps.
const taskText = 300

// watchers are the functions Watch registered.
type watchers struct {
	mu   sync.Mutex
	next int
	fs   map[int]func(Approval)
}

func (w *watchers) notify(a Approval) {
	w.mu.Lock()
	fs := make([]func(Approval), 0, len(w.fs))
	for _, k := range slices.Sorted(maps.Keys(w.fs)) {
		fs = append(fs, w.fs[k])
	}
	w.mu.Unlock()
	for _, f := range fs {
		f(a)
	}
}

// Watch calls f whenever a local task of any thread stops to ask for
// approval (Status AwaitingApproval), is answered (Running) or is denied
// for want of an answer (Denied): a driver shows and drops its requests
// so. f runs on the task's goroutine and must not block; it may call
// Answer. stop ends the watch.
func (s *Middleware) Watch(f func(Approval)) (stop func()) {
	w := &s.local.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fs == nil {
		w.fs = map[int]func(Approval){}
	}
	k := w.next
	w.next++
	w.fs[k] = f
	return func() {
		w.mu.Lock()
		delete(w.fs, k)
		w.mu.Unlock()
	}
}

// Holds reports whether the task runs, or waits, in this process under
// this middleware. Another middleware on the same Checkpointer (another
// agent of the same program) may find a request of it there, parked
// before this one resumed it: that request is this middleware's to
// answer, or nobody's.
func (s *Middleware) Holds(taskID string) bool { return s.local.get(taskID) != nil }

// Approvals returns the requests for approval the background tasks of a
// top-level thread wait on, oldest task first: those parked in this
// process, and, through the Checkpointer, those parked by an earlier
// process (killed, say) that a later run of the thread can still collect.
func (s *Middleware) Approvals(ctx context.Context, threadID string) ([]Approval, error) {
	var out []Approval
	seen := map[string]bool{}
	for _, t := range s.local.parkedOf(threadID) {
		if a, ok := t.pendingApproval(); ok && stillParked(ctx, t, a) {
			out = append(out, a)
			seen[t.id] = true
		}
	}
	recs, err := s.savedRecords(ctx, threadID)
	if err != nil {
		return out, err
	}
	var errs []error
	for _, rec := range recs {
		if seen[rec.TaskID] || s.local.get(rec.TaskID) != nil {
			continue
		}
		a, ok, err := s.parkedInSaver(ctx, threadID, rec)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			out = append(out, a)
		}
	}
	return out, errors.Join(errs...)
}

// Answer gives a waiting task the person's decisions, one per request of
// its Approval, in order; the task's subagent then resumes from its
// checkpoint on a goroutine of this process, as the task it was, and the
// thread's next check_async_task or wait_async_task collects its result.
// A task of no thread of this process (parked before a restart) is found
// through the Checkpointer. ErrNotWaiting when the task does not wait.
func (s *Middleware) Answer(ctx context.Context, threadID, taskID string, decisions []agent.Decision) error {
	values := s.modeOf(ctx, threadID)
	if t := s.local.get(taskID); t != nil {
		a, ok := t.pendingApproval()
		if !ok || t.thread != threadID {
			return fmt.Errorf("%w: task %s", ErrNotWaiting, clip.Text(taskID, 100))
		}
		if !stillParked(ctx, t, a) {
			return fmt.Errorf("%w: task %s was answered in another process", ErrNotWaiting, t.id)
		}
		if err := checkAnswer(a, decisions); err != nil {
			return err
		}
		return s.local.resume(ctx, t, decisions, values)
	}
	recs, err := s.savedRecords(ctx, threadID)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(recs, func(r Task) bool { return r.TaskID == taskID })
	if i < 0 {
		return fmt.Errorf("%w: no task %s in thread %s", ErrNotWaiting, clip.Text(taskID, 100), clip.Text(threadID, 100))
	}
	rec := recs[i]
	a, ok, err := s.parkedInSaver(ctx, threadID, rec)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: task %s", ErrNotWaiting, rec.TaskID)
	}
	if err := checkAnswer(a, decisions); err != nil {
		return err
	}
	e := s.byName[rec.AgentName]
	saver := entrySaver(e)
	// What the subagent started from, to tell the caller's later
	// changes from its own when its result is collected.
	base, msgs := map[string]thread.FileData{}, []llm.Message(nil)
	if first, err := firstSnapshot(ctx, saver, a.SubagentThread); err == nil {
		base, msgs = first.Files, first.Messages
	}
	t := &localTask{id: rec.TaskID, e: e, thread: threadID, child: a.SubagentThread, task: a.Task, runs: 1}
	t.status = AwaitingApproval
	t.base, t.history = base, msgs
	if len(a.Requests) > 0 {
		t.ns = a.Requests[0].Namespace
	}
	t.approval = &a
	if rec.Workspace != "" {
		// Its workspace is not taken up again: the task goes on in a
		// fresh one (or the shared folder), and its result says what
		// became of what it wrote before.
		t.wsNote = lostWorkspaceNote(rec.Workspace)
	}
	made := s.local.forkFor(ctx, t)
	if err := s.local.resume(ctx, t, decisions, values); err != nil {
		s.local.discardWorkspace(t, made)
		return err
	}
	return nil
}

// stillParked reports whether a task parked in this process still waits
// in the Checkpointer as it parked: its subagent thread is not held by a
// run (another process's that resumed it) and its head asks for the same
// calls. A task another process answered (from the Checkpointer, as
// Answer does for a task it does not hold) reads false, so that it is
// neither shown nor answered twice here. A task whose subagent keeps no
// Checkpointer, or whose thread cannot be read now, reads true.
func stillParked(ctx context.Context, t *localTask, a Approval) bool {
	saver := entrySaver(t.e)
	if saver == nil || a.SubagentThread == "" {
		return true
	}
	th, err := saver.Thread(ctx, a.SubagentThread)
	if err != nil {
		return !errors.Is(err, checkpoint.ErrNotFound)
	}
	if th.Status == checkpoint.StatusBusy {
		return false
	}
	head, err := saver.Load(ctx, a.SubagentThread, "")
	if err != nil {
		return !errors.Is(err, checkpoint.ErrNotFound)
	}
	reqs, _ := agent.PendingRequests(head.Meta)
	return slices.EqualFunc(reqs, a.Requests, func(x, y agent.ActionRequest) bool { return x.ToolCallID == y.ToolCallID })
}

// checkAnswer checks decisions against the requests they answer, so that
// a wrong answer fails now rather than in the task's goroutine.
func checkAnswer(a Approval, decisions []agent.Decision) error {
	if len(decisions) != len(a.Requests) {
		return fmt.Errorf("%w: task %s waits on %d request(s), %d decision(s) given", agent.ErrDecisionCount, a.TaskID, len(a.Requests), len(decisions))
	}
	for i, d := range decisions {
		r := a.Requests[i]
		switch d.Type {
		case agent.DecisionApprove, agent.DecisionReject, agent.DecisionEdit:
		default:
			return fmt.Errorf("async subagents: decision %d: unknown decision type %q (want approve, edit or reject)", i+1, clip.Text(string(d.Type), 40))
		}
		if len(r.Allowed) > 0 && !slices.Contains(r.Allowed, d.Type) {
			return fmt.Errorf("%w: %s for %s (allowed: %v)", agent.ErrDecisionNotAllow, d.Type, r.Tool, r.Allowed)
		}
	}
	return nil
}

// savedRecords returns the local task records of a thread's head in the
// Checkpointer that have not ended, oldest first; none without a
// Checkpointer or a thread.
func (s *Middleware) savedRecords(ctx context.Context, threadID string) ([]Task, error) {
	if s.saver == nil || threadID == "" {
		return nil, nil
	}
	head, err := s.saver.Load(ctx, threadID, "")
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("async subagents: thread %s: %w", threadID, err)
	}
	tasks, err := Tasks(head.Values)
	if err != nil {
		return nil, err
	}
	var out []Task
	for _, t := range tasks {
		if !t.Remote && t.ThreadID != "" && !terminal(t.Status) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b Task) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.TaskID, b.TaskID)
	})
	return out, nil
}

// parkedInSaver reports whether a recorded local task's subagent thread
// waits for decisions in the Checkpointer, and what it asks.
func (s *Middleware) parkedInSaver(ctx context.Context, threadID string, rec Task) (Approval, bool, error) {
	e := s.byName[rec.AgentName]
	if e == nil || e.Entry == nil || rec.Remote || rec.ThreadID == "" || terminal(rec.Status) {
		return Approval{}, false, nil
	}
	// A subagent thread is its task's: under the thread that started it.
	if !strings.HasPrefix(rec.ThreadID, thread.ChildID(threadID, "")) {
		return Approval{}, false, nil
	}
	saver := entrySaver(e)
	if saver == nil {
		return Approval{}, false, nil
	}
	head, err := saver.Load(ctx, rec.ThreadID, "")
	if errors.Is(err, checkpoint.ErrNotFound) {
		return Approval{}, false, nil
	}
	if err != nil {
		return Approval{}, false, fmt.Errorf("async subagents: task %s: %w", rec.TaskID, err)
	}
	reqs, err := agent.PendingRequests(head.Meta)
	if err != nil || len(reqs) == 0 {
		return Approval{}, false, err
	}
	a := Approval{ThreadID: threadID, TaskID: rec.TaskID, Subagent: rec.AgentName, SubagentThread: rec.ThreadID, Requests: reqs, Status: AwaitingApproval}
	if len(head.Messages) > 0 {
		a.Task = clip.Text(head.Messages[0].Text(), taskText)
	}
	return a, true, nil
}

// modeOf is the thread's permission mode now, as a resumed subagent gets
// it (the person may have changed it while the task waited).
func (s *Middleware) modeOf(ctx context.Context, threadID string) map[string]json.RawMessage {
	if s.saver == nil || threadID == "" {
		return nil
	}
	head, err := s.saver.Load(ctx, threadID, "")
	if err != nil {
		return nil
	}
	if mode, ok := head.Values[hitl.ModeValue]; ok {
		return map[string]json.RawMessage{hitl.ModeValue: mode}
	}
	return nil
}

// entrySaver is the Checkpointer a local subagent keeps its thread in.
func entrySaver(e *subagent) checkpoint.Saver {
	if e == nil || e.Entry == nil {
		return nil
	}
	if c, ok := e.Runnable().(interface{ Checkpointer() checkpoint.Saver }); ok {
		return c.Checkpointer()
	}
	return nil
}

// firstSnapshot loads a thread's first checkpoint: what its run started
// from.
func firstSnapshot(ctx context.Context, saver checkpoint.Saver, threadID string) (*checkpoint.Snapshot, error) {
	if saver == nil {
		return nil, checkpoint.ErrNotFound
	}
	hist, err := saver.History(ctx, threadID, checkpoint.ListOptions{})
	if err != nil {
		return nil, err
	}
	if len(hist) == 0 {
		return nil, checkpoint.ErrNotFound
	}
	return saver.Load(ctx, threadID, hist[len(hist)-1].ID)
}
