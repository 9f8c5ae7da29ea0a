package background

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/subagents"
	"github.com/deepagents-go/deepagents/thread"
)

// Why a local task's context was cancelled.
var (
	errTaskCancelled = errors.New("cancelled by cancel_async_task")
	errTaskUpdated   = errors.New("stopped by update_async_task")
	errAgentClosed   = errors.New("the agent was closed")
	errTaskTimeout   = errors.New("ran longer than the time allowed")
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
}

type taskOutcome struct {
	status      string
	started     time.Time
	result, err string
}

func (t *localTask) snapshot() taskOutcome {
	t.mu.Lock()
	defer t.mu.Unlock()
	return taskOutcome{status: t.status, started: t.started, result: t.result, err: t.err}
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

// isFinished reports whether the task is not running (or not known here).
func (l *localTasks) isFinished(id string) bool {
	t := l.get(id)
	return t == nil || t.snapshot().status != Running
}

// forget drops a finished task.
func (l *localTasks) forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t := l.byID[id]; t != nil && t.snapshot().status != Running {
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

// start launches a new task.
func (l *localTasks) start(ctx context.Context, rt *agent.Runtime, e *subagent, id, callID, description string) error {
	t := &localTask{id: id, e: e, thread: rt.ThreadID()}
	return l.launch(ctx, t, taskInput(rt, e, id, callID, []llm.Message{llm.UserText(description)}, 0))
}

// launch runs t on a goroutine with in. The task's context keeps the
// values of ctx (the tool call's) but not its cancellation: the task
// outlives the call and the run.
func (l *localTasks) launch(ctx context.Context, t *localTask, in agent.Input) error {
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
		return fmt.Errorf("Error: a background task with task_id %q exists already", t.id)
	}
	t.mu.Lock()
	running := t.status == Running
	t.mu.Unlock()
	if running {
		return fmt.Errorf("Error: background task %s is running already; wait for it (wait_async_task) or cancel it first", t.id)
	}
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	runCtx, stop := context.WithTimeoutCause(runCtx, l.limits.MaxRuntime, errTaskTimeout)
	done := make(chan struct{})
	t.mu.Lock()
	t.status, t.started = Running, time.Now()
	t.result, t.err, t.res, t.collected = "", "", nil, false
	// Never nil: mergeBack checks a background task's files against it.
	t.base = make(map[string]thread.FileData, len(in.Files))
	maps.Copy(t.base, in.Files)
	t.history = in.Messages
	t.cancel, t.done = cancel, done
	t.runs++
	t.mu.Unlock()
	l.byID[t.id] = t
	l.finished = slices.DeleteFunc(l.finished, func(s string) bool { return s == t.id })
	l.running++
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer stop()
		defer cancel(nil)
		l.run(runCtx, t, in, done)
	}()
	return nil
}

func (l *localTasks) run(ctx context.Context, t *localTask, in agent.Input, done chan struct{}) {
	res, err := invokeSafely(ctx, t.e.Runnable(), in)
	status, result, msg := outcome(ctx, t.e, res, err)
	l.mu.Lock()
	defer l.mu.Unlock()
	// The slot is free before anyone waiting on done hears of the end.
	l.running--
	t.mu.Lock()
	t.status, t.result, t.err, t.res = status, result, msg, res
	close(done)
	t.mu.Unlock()
	l.finished = append(l.finished, t.id)
	for len(l.finished) > l.limits.KeepFinished {
		delete(l.byID, l.finished[0])
		l.finished = l.finished[1:]
	}
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
// so far and a new user message.
func (l *localTasks) restart(ctx context.Context, rt *agent.Runtime, t *localTask, callID, message string) error {
	if err := l.stop(ctx, t, errTaskUpdated); err != nil {
		return err
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
	t.mu.Unlock()
	return l.launch(ctx, t, taskInput(rt, t.e, t.id, callID, msgs, gen))
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
		t.mu.Unlock()
	}
	l.mu.Unlock()
	l.wg.Wait()
}
