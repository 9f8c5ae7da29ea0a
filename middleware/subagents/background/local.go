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
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/isolate"
	"github.com/deepagents-go/deepagents/internal/clip"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/subagents"
	"github.com/deepagents-go/deepagents/thread"
)

// Why a local task's context was cancelled.
var (
	errTaskCancelled = errors.New("cancelled by cancel_async_task")
	errTaskUpdated   = errors.New("stopped by update_async_task")
	// errNoWorkspace is launch's refusal to run a task that isolates
	// without its workspace (another call's run merged it meanwhile).
	errNoWorkspace = errors.New("the task's workspace was merged back meanwhile")
	errAgentClosed = errors.New("the agent was closed")
	errTaskTimeout = errors.New("ran longer than the time allowed")
)

// stopWait bounds how long cancel and update wait for a local task to
// stop after its context is cancelled.
const stopWait = 10 * time.Second

// localTasks runs the local background tasks of one Middleware: each
// on a goroutine of its own, with its own context, at most MaxRunning at
// once. Finished tasks keep their outcome for a later check, the latest
// KeepFinished of them.
type localTasks struct {
	limits Options

	mu       sync.Mutex
	byID     map[string]*localTask
	running  int
	finished []string // ids of finished tasks, oldest first
	closed   bool
	wg       sync.WaitGroup
	watch    watchers // Watch's functions, told of approvals
	// dir is the host folder local tasks' workspaces copy ("" isolates
	// none), wsOpts how they are made (workspace.go).
	dir    string
	wsOpts isolate.Options
}

func newLocalTasks(l Options) *localTasks {
	return &localTasks{limits: l, byID: map[string]*localTask{}}
}

// localTask is one local background task; update_async_task runs it again
// under the same id.
type localTask struct {
	id string
	e  *subagent
	// thread is the thread whose records hold the task: the caller's.
	thread string
	task   string   // the description it was started with (shortened)
	ns     []string // the namespace its runs' events and requests carry

	mu      sync.Mutex
	status  string
	started time.Time
	result  string
	err     string
	res     *agent.Result
	// base is the files the current run started from, to tell the
	// caller's later changes from the task's when merging back.
	base      map[string]thread.FileData
	history   []llm.Message // the messages the current run started with
	collected bool
	runs      int // runs launched so far
	cancel    context.CancelCauseFunc
	done      chan struct{} // closed when the current run ends
	// child is the subagent's thread in the current run, "" when it keeps
	// none (it cannot stop for approval).
	child string
	// While the task waits for approval (AwaitingApproval): what it asks,
	// closed when that ends (answered or denied), and the timer that
	// denies it after Options.ApprovalWait.
	approval *Approval
	unpark   chan struct{}
	deny     *time.Timer
	// ws is the task's workspace of its own while it works or waits for
	// approval (workspace.go), nil once merged back or when it has none;
	// wsNote what its result must say of a workspace that could not be
	// made, or was lost; merge the report of the last merge back.
	ws     *isolate.Workspace
	wsNote string
	merge  string
	// wsUsed is whether a run worked in ws (then only a merge ends it,
	// never discardWorkspace); updating counts the update_async_task
	// calls stopping the task to go on in its workspace, handedOver
	// whether a run stopped by one left ws to it (workspace.go).
	wsUsed     bool
	updating   int
	handedOver bool
	// events is the stream of the run that started the task (its
	// notices), while it lasts; nil when none.
	events func(agent.Event)
}

type taskOutcome struct {
	status             string
	started            time.Time
	result, err, merge string
}

func (t *localTask) snapshot() taskOutcome {
	t.mu.Lock()
	defer t.mu.Unlock()
	return taskOutcome{status: t.status, started: t.started, result: t.result, err: t.err, merge: t.merge}
}

// pendingApproval returns what the task asks while it waits for approval.
func (t *localTask) pendingApproval() (Approval, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status != AwaitingApproval || t.approval == nil {
		return Approval{}, false
	}
	return *t.approval, true
}

// parkChan returns the channel closed when the task's wait for approval
// ends, nil when it does not wait.
func (t *localTask) parkChan() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status != AwaitingApproval {
		return nil
	}
	return t.unpark
}

func (t *localTask) doneChan() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.done
}

func (l *localTasks) get(id string) *localTask {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byID[id]
}

// isFinished reports whether the task is not running nor waiting for
// approval (or not known here).
func (l *localTasks) isFinished(id string) bool {
	t := l.get(id)
	return t == nil || terminal(t.snapshot().status)
}

// forget drops a finished task.
func (l *localTasks) forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t := l.byID[id]; t != nil && terminal(t.snapshot().status) {
		delete(l.byID, id)
		l.finished = slices.DeleteFunc(l.finished, func(s string) bool { return s == id })
	}
}

// liveStatus is a recorded local task's status as this process sees it.
func (l *localTasks) liveStatus(rec Task) string {
	if t := l.get(rec.TaskID); t != nil {
		return t.snapshot().status
	}
	if rec.Collected || terminal(rec.Status) {
		return rec.Status
	}
	return Lost
}

// input is what a local task's run gets: the messages, and the caller's
// files and shared values, as the task tool gives them.
func taskInput(rt *agent.Runtime, e *subagent, id, callID string, msgs []llm.Message, gen int) agent.Input {
	in := e.Input(rt, callID)
	in.Messages = msgs
	if e.Durable() {
		in.ThreadID = thread.ChildID(rt.ThreadID(), id)
		if gen > 0 {
			in.ThreadID += fmt.Sprintf("/%d", gen)
		}
	}
	in.Values, in.Files = subagents.SharedState(rt)
	return in
}

// start launches a new task, in a workspace of its own when its
// subagent isolates. It returns the subagent's thread, "" when it keeps
// none, and the workspace's folder, "" when it has none.
func (l *localTasks) start(ctx context.Context, rt *agent.Runtime, e *subagent, id, callID, description string) (child, workspace string, err error) {
	t := &localTask{id: id, e: e, thread: rt.ThreadID(), task: clip.Text(description, taskText)}
	in := taskInput(rt, e, id, callID, []llm.Message{llm.UserText(description)}, 0)
	t.events = in.Events
	made := l.forkFor(ctx, t)
	if err := l.launch(ctx, t, in, false); err != nil {
		l.discardWorkspace(t, made)
		return "", "", err
	}
	return in.ThreadID, t.workspaceRoot(), nil
}

// resume runs a task that waits for approval again, from its
// subagent's checkpoint, with the decisions (and the caller's values
// now: its permission mode).
func (l *localTasks) resume(ctx context.Context, t *localTask, ds []agent.Decision, values map[string]json.RawMessage) error {
	r, err := t.e.Resumer()
	if err != nil || r == nil {
		return fmt.Errorf("async subagents: subagent %s cannot resume: %v", t.e.name, err)
	}
	t.mu.Lock()
	in := agent.Input{ThreadID: t.child, Decisions: ds, Values: values, Namespace: t.ns}
	t.mu.Unlock()
	return l.launch(ctx, t, in, true)
}

// launch runs t on a goroutine with in. The task's context keeps the
// values of ctx (the tool call's) but not its cancellation: the task
// outlives the call and the run. resumed launches a task that waits for
// approval, keeping what it started from.
func (l *localTasks) launch(ctx context.Context, t *localTask, in agent.Input, resumed bool) error {
	var answered *Approval
	defer func() { // once l.mu is released: a watcher may call in
		if answered != nil {
			l.watch.notify(*answered)
		}
	}()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errors.New("Error: the agent is shutting down; no background task can start")
	}
	if l.running >= l.limits.MaxRunning {
		return fmt.Errorf("Error: %d background tasks are already running, the most allowed; wait for one to finish (wait_async_task) or cancel one first", l.running)
	}
	// Calls of one turn run in parallel: two updates of a task, or two
	// starts under one id, must not launch it twice (the first run would
	// be out of cancel's and Close's reach).
	if other := l.byID[t.id]; other != nil && other != t {
		if resumed {
			// Two answers at once to a task parked by an earlier
			// process: the other one resumed it.
			return fmt.Errorf("%w: task %s was answered meanwhile", ErrNotWaiting, t.id)
		}
		return fmt.Errorf("Error: a background task with task_id %q exists already", t.id)
	}
	t.mu.Lock()
	status := t.status
	noWorkspace := t.ws == nil && t.wsNote == "" && l.isolates(t.e)
	t.mu.Unlock()
	switch {
	case noWorkspace && status != Running:
		return errNoWorkspace
	case resumed && status != AwaitingApproval:
		return fmt.Errorf("%w: task %s is %s", ErrNotWaiting, t.id, status)
	case status == Running:
		return fmt.Errorf("Error: background task %s is running already; wait for it (wait_async_task) or cancel it first", t.id)
	}
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	runCtx, stop := context.WithTimeoutCause(runCtx, l.limits.MaxRuntime, errTaskTimeout)
	done := make(chan struct{})
	t.mu.Lock()
	wasParked := t.approval
	t.status, t.started = Running, time.Now()
	t.result, t.err, t.res, t.collected, t.merge = "", "", nil, false, ""
	t.endPark() // an update of a task that waits for approval ends the wait too
	if !resumed {
		// Never nil: mergeBack checks a background task's files against it.
		t.base = make(map[string]thread.FileData, len(in.Files))
		maps.Copy(t.base, in.Files)
		t.history = in.Messages
		t.ns = in.Namespace
		t.runs++
	}
	t.child = in.ThreadID
	t.cancel, t.done = cancel, done
	if t.ws != nil {
		// Its file tools and commands work in its workspace.
		runCtx = backend.WithRedirect(runCtx, t.ws.Redirect())
		t.wsUsed, t.handedOver = true, false
	}
	t.mu.Unlock()
	l.byID[t.id] = t
	l.finished = slices.DeleteFunc(l.finished, func(s string) bool { return s == t.id })
	l.running++
	l.wg.Add(1)
	run := t.e.Runnable()
	if resumed {
		// Resumer did not fail in resume, which called it first.
		run, _ = t.e.Resumer()
	}
	go func() {
		defer l.wg.Done()
		defer stop()
		defer cancel(nil)
		l.run(runCtx, t, run, in, done)
	}()
	if wasParked != nil {
		a := *wasParked
		a.Status = Running
		answered = &a
	}
	return nil
}

func (l *localTasks) run(ctx context.Context, t *localTask, r subagents.Runnable, in agent.Input, done chan struct{}) {
	res, err := invokeSafely(ctx, r, in)
	status, result, msg := outcome(ctx, t.e, res, err)
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	t.mu.Lock()
	parks := status == Interrupted && t.child != "" && !closed
	// A task that parks keeps its workspace while it waits, and one
	// stopped by update_async_task goes on in it; any other end merges
	// it back before its result is reported.
	// (An update that gave up waiting for the stop takes nothing over.)
	handOver := status == Cancelled && errors.Is(context.Cause(ctx), errTaskUpdated) && t.updating > 0
	keep := parks || handOver
	var ws *isolate.Workspace
	note, events := "", t.events
	if handOver && t.ws != nil {
		t.handedOver = true
	}
	if !keep {
		ws, note = t.ws, t.wsNote
		t.ws, t.wsNote = nil, ""
	}
	t.mu.Unlock()
	if ws != nil {
		note = withNote(note, mergeWorkspace(ctx, t, ws, events))
	}
	if status == Success {
		result = withNote(result, note)
	} else {
		msg = withNote(msg, note)
	}
	var parked *Approval
	l.mu.Lock()
	// The slot is free before anyone waiting on done hears of the end.
	l.running--
	t.mu.Lock()
	t.merge = note
	if parks {
		// Its checkpoint waits in the Checkpointer: the task waits for
		// the person, not for nobody.
		status, msg = AwaitingApproval, ""
		a := Approval{ThreadID: t.thread, TaskID: t.id, Subagent: t.e.name, Task: t.task, SubagentThread: t.child,
			Requests: res.Interrupts, Status: AwaitingApproval, Since: time.Now().UTC()}
		t.approval, t.unpark = &a, make(chan struct{})
		parked = &a
	}
	t.status, t.result, t.err, t.res = status, result, msg, res
	close(done)
	t.mu.Unlock()
	if parked == nil {
		l.finishedLocked(t.id)
	}
	l.mu.Unlock()
	if parked != nil {
		l.watch.notify(*parked)
		// Its denial after ApprovalWait is armed once the park was told:
		// a watcher hears of the park before it hears of the denial.
		if w := l.limits.ApprovalWait; w > 0 {
			l.mu.Lock()
			t.mu.Lock()
			if t.status == AwaitingApproval && t.approval == parked && !l.closed {
				t.deny = time.AfterFunc(w, func() { l.denyUnanswered(t, parked) })
			}
			t.mu.Unlock()
			l.mu.Unlock()
		}
	}
}

// finishedLocked keeps a finished task's outcome, forgetting the oldest
// beyond KeepFinished. l.mu is held.
func (l *localTasks) finishedLocked(id string) {
	l.finished = append(l.finished, id)
	for len(l.finished) > l.limits.KeepFinished {
		delete(l.byID, l.finished[0])
		l.finished = l.finished[1:]
	}
}

// endPark ends the task's wait for approval. t.mu is held.
func (t *localTask) endPark() {
	if t.deny != nil {
		t.deny.Stop()
		t.deny = nil
	}
	if t.unpark != nil {
		close(t.unpark)
		t.unpark = nil
	}
	t.approval = nil
}

// denyUnanswered ends the wait of a task nobody answered within
// ApprovalWait: it is denied, and its result says so.
func (l *localTasks) denyUnanswered(t *localTask, a *Approval) {
	l.mu.Lock()
	t.mu.Lock()
	if t.status != AwaitingApproval || t.approval != a {
		t.mu.Unlock()
		l.mu.Unlock()
		return // answered meanwhile
	}
	t.endPark()
	t.status = Denied
	t.err = fmt.Sprintf("it stopped to ask for approval of %s, and nobody answered within %s, so it was denied (%v); the call(s) did not run. Do the work another way, or start the task again when someone can approve it", a.Tools(), l.limits.ApprovalWait, ErrDenied)
	ws, note := t.ws, t.wsNote
	t.ws, t.wsNote = nil, ""
	l.finishedLocked(t.id)
	l.mu.Unlock()
	// The task has ended: what it wrote before it parked is merged back
	// before anyone reads its status (t.mu is held meanwhile).
	var ev *agent.Event
	if ws != nil {
		text, e := mergeQuietly(context.Background(), t, ws)
		note, ev = withNote(note, text), &e
	}
	t.err, t.merge = withNote(t.err, note), note
	events := t.events
	t.mu.Unlock()
	if ev != nil && events != nil {
		events(*ev) // not under t.mu: the stream's reader may ask of the task
	}
	d := *a
	d.Status = Denied
	l.watch.notify(d)
}

// parkedOf returns the tasks of a thread that wait for approval, oldest
// first.
func (l *localTasks) parkedOf(threadID string) []*localTask {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*localTask
	started := map[*localTask]time.Time{}
	for _, t := range l.byID {
		if out := t.snapshot(); t.thread == threadID && out.status == AwaitingApproval {
			started[t] = out.started
		}
	}
	for t := range started {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *localTask) int {
		if c := started[a].Compare(started[b]); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return out
}

// invokeSafely runs a Runnable, turning its panic into an error: a
// background task's panic must not take the process down.
func invokeSafely(ctx context.Context, r subagents.Runnable, in agent.Input) (res *agent.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("%w: %v", agent.ErrPanic, p)
		}
	}()
	return r.Invoke(ctx, in)
}

// outcome turns how a run ended into a task status, its result and its
// error message.
func outcome(ctx context.Context, e *subagent, res *agent.Result, err error) (status, result, msg string) {
	if err != nil {
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, errTaskCancelled), errors.Is(cause, errTaskUpdated):
			return Cancelled, "", "it was cancelled before it finished"
		case errors.Is(cause, errAgentClosed):
			return Cancelled, "", "it was stopped because the agent was closed"
		case errors.Is(cause, errTaskTimeout):
			return Timeout, "", "it was stopped after running for the longest time allowed"
		}
		return Error, "", fmt.Sprintf("subagent %s failed: %v", e.name, err)
	}
	if res == nil {
		return Error, "", fmt.Sprintf("subagent %s returned no result", e.name)
	}
	if res.Status == agent.StatusInterrupted {
		var names []string
		for _, r := range res.Interrupts {
			names = append(names, r.Tool)
		}
		return Interrupted, "", fmt.Sprintf("it stopped to ask for approval of %s, which a background task cannot get; cancel it, or give the work to task instead", strings.Join(names, ", "))
	}
	report, ok := subagents.FinalReport(res)
	if !ok {
		return Error, "", fmt.Sprintf("subagent %s returned no messages", e.name)
	}
	return Success, report, ""
}

// collect hands a finished task's work to the run that reports it, once:
// its token usage, and (when it succeeded) the files and values it
// changed. It returns the files it did not apply because the caller
// changed them too.
func (l *localTasks) collect(rt *agent.Runtime, t *localTask) []string {
	t.mu.Lock()
	if t.collected || t.status == Running {
		t.mu.Unlock()
		return nil
	}
	t.collected = true
	res, base, status := t.res, t.base, t.status
	t.base = nil
	t.mu.Unlock()
	if res == nil {
		return nil
	}
	rt.AddUsage(res.Usage)
	if status != Success {
		return nil
	}
	return t.e.MergeBack(rt, base, res)
}

// cancel stops a running task and waits (a while) for it to end. It
// returns the task's status then: cancelled, or how it finished if it
// finished first.
func (l *localTasks) cancel(ctx context.Context, t *localTask) (string, error) {
	if err := l.stop(ctx, t, errTaskCancelled); err != nil {
		return "", err
	}
	return t.snapshot().status, nil
}

// stop cancels a running task's context with cause and waits for its run
// to end.
func (l *localTasks) stop(ctx context.Context, t *localTask, cause error) error {
	t.mu.Lock()
	running, cancel, done := t.status == Running, t.cancel, t.done
	t.mu.Unlock()
	if !running {
		return nil
	}
	cancel(cause)
	timer := time.NewTimer(stopWait)
	defer timer.Stop()
	select {
	case <-done:
		return nil
	case <-timer.C:
		return fmt.Errorf("Error: task %s was told to stop but is still running after %s; check it again later", t.id, stopWait)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// restart stops a running task and runs it again with its conversation
// so far and a new user message, in the workspace it worked in (a new
// one when it had finished, and merged its own back). It returns the
// report of that merge, "" when there was none.
func (l *localTasks) restart(ctx context.Context, rt *agent.Runtime, t *localTask, callID, message string) (string, error) {
	t.mu.Lock()
	t.updating++
	t.mu.Unlock()
	err := l.stop(ctx, t, errTaskUpdated)
	t.mu.Lock()
	t.updating--
	var orphan *isolate.Workspace
	note, events := "", t.events
	if err != nil && t.updating == 0 && t.handedOver {
		// The run ended, leaving its workspace to this update, which
		// gave up waiting: it is merged back now, not left behind.
		orphan, note = t.ws, t.wsNote
		t.ws, t.wsNote, t.handedOver = nil, "", false
	}
	t.mu.Unlock()
	if err != nil {
		if orphan == nil {
			return "", err
		}
		note = withNote(note, mergeWorkspace(ctx, t, orphan, events))
		t.mu.Lock()
		t.err, t.merge = withNote(t.err, note), note
		t.mu.Unlock()
		return "", fmt.Errorf("%w\n\n%s", err, note)
	}
	// What it finished with counts before it goes on.
	l.collect(rt, t)
	t.mu.Lock()
	msgs := t.history
	if t.res != nil && t.res.State != nil && len(t.res.State.Messages) > 0 {
		msgs = t.res.State.Messages
	}
	msgs = append(slices.Clone(msgs), llm.UserText(message))
	gen := t.runs // a durable subagent gets a fresh thread for each run
	merged := t.merge
	t.mu.Unlock()
	var made *isolate.Workspace
	for range 3 {
		made = l.forkFor(ctx, t)
		err = l.launch(ctx, t, taskInput(rt, t.e, t.id, callID, msgs, gen), false)
		if !errors.Is(err, errNoWorkspace) {
			break
		}
	}
	if err == nil {
		return merged, nil
	}
	if made != nil {
		l.discardWorkspace(t, made) // made for this run, which never started
		return "", err
	}
	// It does not go on: the workspace a run worked in is merged back now.
	t.mu.Lock()
	ws := t.ws
	note, events = t.wsNote, t.events
	if t.status == Running || !t.wsUsed || t.updating > 0 {
		// Another call launched it meanwhile (its workspace is that
		// run's), made it for the run it launches, or goes on in it.
		ws = nil
	} else {
		t.ws, t.wsNote, t.handedOver = nil, "", false
	}
	t.mu.Unlock()
	if ws == nil {
		return "", err
	}
	note = withNote(note, mergeWorkspace(ctx, t, ws, events))
	t.mu.Lock()
	t.err, t.merge = withNote(t.err, note), note
	t.mu.Unlock()
	return "", fmt.Errorf("%w\n\n%s", err, note)
}

// runningTasks returns the running tasks' ids with their subagents'
// names.
func (l *localTasks) runningTasks() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]string{}
	for id, t := range l.byID {
		if t.snapshot().status == Running {
			out[id] = t.e.name
		}
	}
	return out
}

// runningByThread returns the ids of the running tasks by the thread
// whose records hold them.
func (l *localTasks) runningByThread() map[string][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]string{}
	for id, t := range l.byID {
		if t.snapshot().status == Running {
			out[t.thread] = append(out[t.thread], id)
		}
	}
	return out
}

// close cancels the running tasks and waits for them to end.
func (l *localTasks) close() {
	l.mu.Lock()
	l.closed = true
	for _, t := range l.byID {
		t.mu.Lock()
		if t.status == Running {
			t.cancel(errAgentClosed)
		}
		if t.deny != nil {
			// Its checkpoint still waits, for a later process to answer.
			t.deny.Stop()
			t.deny = nil
		}
		t.mu.Unlock()
	}
	l.mu.Unlock()
	l.wg.Wait()
}

// subagentThread returns the subagent's thread in the current run.
func (t *localTask) subagentThread() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.child
}
