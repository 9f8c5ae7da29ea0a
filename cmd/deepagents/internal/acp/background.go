package acp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/internal/clip"
)

// Background is how a session reaches the requests for approval of its
// thread's background tasks: a task that stops to ask waits (durably,
// parked) until somebody answers it, and the session asks the client,
// whether a prompt runs or not.
type Background struct {
	// Watch calls f whenever a background task of the session's thread
	// stops to ask (Waiting true) or waits no longer (Waiting false: it
	// was answered, or denied for want of an answer); stop ends the
	// watch. f must not block.
	Watch func(f func(TaskApproval)) (stop func())
	// Waiting returns the requests the thread's background tasks wait
	// on now, those parked by an earlier process included (session/load
	// asks the client about them).
	Waiting func(ctx context.Context) ([]TaskApproval, error)
	// Answer gives a waiting task the client's decisions, one per
	// request, in order: its subagent resumes in the background.
	Answer func(ctx context.Context, taskID string, ds []deepagents.Decision) error
}

// TaskApproval is a background task's request for approval.
type TaskApproval struct {
	// TaskID is the task's id, as the agent knows it.
	TaskID string
	// Subagent is the name of the subagent that asks.
	Subagent string
	// Task is the task the subagent was given (shortened).
	Task string
	// Requests are the calls awaiting a decision, in the order Answer
	// takes the decisions.
	Requests []deepagents.ActionRequest
	// Waiting says that the task waits for an answer.
	Waiting bool
}

// bgAsking is what a session asks its client about its background
// tasks: the tasks asked about, each with the function that withdraws
// its request.
type bgAsking struct {
	ctx    context.Context // the session's: ends when it closes
	cancel context.CancelFunc
	stop   func() // the watch's
	tasks  map[string]context.CancelFunc
	// gaveUp says that the client gave up a request whose task still
	// waits (a session/cancel cancels every request pending): the next
	// prompt asks again.
	gaveUp bool
}

// watchBackground asks the client about the requests of the session's
// background tasks from now on, and, when load is set, about those that
// wait already (parked by an earlier process). A session closed before
// (or while) its watch starts asks about nothing: its watch is stopped.
func (s *server) watchBackground(ss *session, load bool) {
	bg := ss.ws.Background
	if bg == nil || bg.Watch == nil || bg.Answer == nil {
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	b := &bgAsking{ctx: ctx, cancel: cancel, tasks: map[string]context.CancelFunc{}}
	ss.bgMu.Lock()
	if ss.bgClosed {
		ss.bgMu.Unlock()
		cancel()
		return
	}
	ss.bg = b
	ss.bgMu.Unlock()
	stop := bg.Watch(func(a TaskApproval) { s.heard(ss, a) })
	ss.bgMu.Lock()
	if ss.bg != b { // closed meanwhile: stopBackground saw no stop to call
		ss.bgMu.Unlock()
		stop()
		return
	}
	b.stop = stop
	ss.bgMu.Unlock()
	if !load || bg.Waiting == nil {
		return
	}
	list, err := bg.Waiting(ctx)
	if err != nil {
		s.logf("reading the background tasks' requests for approval of thread %s: %v", ss.id, err)
	}
	for _, a := range list {
		a.Waiting = true
		s.heard(ss, a)
	}
}

// heard takes a background task's news: a request not yet asked about is
// asked on a goroutine of its own (the prompt running, if one is, goes
// on); one that waits no more is withdrawn.
func (s *server) heard(ss *session, a TaskApproval) {
	ss.bgMu.Lock()
	defer ss.bgMu.Unlock()
	b := ss.bg
	if b == nil || b.ctx.Err() != nil {
		return
	}
	withdraw, asking := b.tasks[a.TaskID]
	switch {
	case !a.Waiting && asking:
		withdraw()
		delete(b.tasks, a.TaskID)
	case a.Waiting && !asking && len(a.Requests) > 0:
		ctx, cancel := context.WithCancel(b.ctx)
		b.tasks[a.TaskID] = cancel
		go s.askBackground(ctx, ss, a)
	}
}

// stopBackground ends the session's asking: the watch, and the requests
// the client has not answered (their tasks wait on, for a later session).
func (ss *session) stopBackground() {
	ss.bgMu.Lock()
	b := ss.bg
	ss.bg = nil
	ss.bgClosed = true
	ss.bgMu.Unlock()
	if b == nil {
		return
	}
	if b.stop != nil {
		b.stop()
	}
	b.cancel()
}

// answered says whether the session still asks about task, and stops
// asking; false when the request was withdrawn meanwhile.
func (ss *session) answered(task string) bool {
	ss.bgMu.Lock()
	defer ss.bgMu.Unlock()
	if ss.bg == nil {
		return false
	}
	cancel, ok := ss.bg.tasks[task]
	if ok {
		cancel()
		delete(ss.bg.tasks, task)
	}
	return ok
}

// askBackground asks the client about each call a background task waits
// on, as a tool call of its own naming the subagent and its task, and
// gives the task the client's decisions. A request cancelled (the session
// closed, the task denied meanwhile, the client gave up) leaves the task
// waiting.
func (s *server) askBackground(ctx context.Context, ss *session, a TaskApproval) {
	ds := make([]deepagents.Decision, 0, len(a.Requests))
	calls := make([]*call, 0, len(a.Requests))
	for _, r := range a.Requests {
		c := backgroundCall(ss.ws, a, r)
		calls = append(calls, c)
		if err := s.update(ctx, ss.id, c.start(sdk.ToolCallStatusPending)); err != nil {
			s.logf("announcing background task %s's request: %v", a.TaskID, err)
		}
		d, err := s.ask(ctx, ss, r, c)
		if err != nil {
			if ctx.Err() == nil {
				s.logf("asking about background task %s's %s: %v", a.TaskID, r.Tool, err)
			}
			s.withdrawn(ss, a, calls)
			return
		}
		ds = append(ds, d)
	}
	if ss.backgroundClosed() || s.ctx.Err() != nil {
		return
	}
	if !ss.answered(a.TaskID) {
		s.endCalls(ss, calls, false, "Background task "+a.TaskID+" no longer waits for approval.")
		return
	}
	if err := ss.ws.Background.Answer(context.WithoutCancel(ctx), a.TaskID, ds); err != nil {
		s.logf("answering background task %s: %v", a.TaskID, err)
		s.endCalls(ss, calls, false, fmt.Sprintf("Background task %s was not answered: %v", a.TaskID, err))
		return
	}
	for i, c := range calls {
		if ds[i].Type == deepagents.DecisionReject {
			s.endCalls(ss, []*call{c}, false, "Rejected: background task "+a.TaskID+" ("+a.Subagent+") is told so.")
		} else {
			s.endCalls(ss, []*call{c}, true, "Allowed: background task "+a.TaskID+" ("+a.Subagent+") goes on.")
		}
	}
}

// withdrawn ends the calls of a request that was not answered: nothing
// is said to a session that closed (one loaded in its place asks again,
// under the same call ids); a task that waits no more (answered, or
// denied for want of an answer) is said to; otherwise the client gave the
// request up, and the task still waits.
func (s *server) withdrawn(ss *session, a TaskApproval, calls []*call) {
	switch {
	case ss.backgroundClosed() || s.ctx.Err() != nil:
	case !ss.answered(a.TaskID):
		s.endCalls(ss, calls, false, "Background task "+a.TaskID+" no longer waits for approval.")
	default:
		ss.bgMu.Lock()
		if ss.bg != nil {
			ss.bg.gaveUp = true
		}
		ss.bgMu.Unlock()
		s.endCalls(ss, calls, false, "The request was withdrawn: background task "+a.TaskID+" still waits for approval; the next prompt asks again.")
	}
}

// reaskBackground asks again, on a goroutine, about the requests of the
// session's background tasks that the client gave up while they still
// wait (those it is asked about now are not asked twice).
func (s *server) reaskBackground(ss *session) {
	bg := ss.ws.Background
	if bg == nil || bg.Waiting == nil {
		return
	}
	ss.bgMu.Lock()
	b := ss.bg
	if b == nil || !b.gaveUp {
		ss.bgMu.Unlock()
		return
	}
	b.gaveUp = false
	ss.bgMu.Unlock()
	go func() {
		list, err := bg.Waiting(b.ctx)
		if err != nil && b.ctx.Err() == nil {
			s.logf("reading the background tasks' requests for approval of thread %s: %v", ss.id, err)
		}
		for _, a := range list {
			a.Waiting = true
			s.heard(ss, a)
		}
	}()
}

// backgroundClosed says whether the session stopped asking about its
// background tasks (it closed).
func (ss *session) backgroundClosed() bool {
	ss.bgMu.Lock()
	defer ss.bgMu.Unlock()
	return ss.bgClosed
}

// endCalls ends background calls shown to the client, with text:
// completed when ok (allowed), failed otherwise.
func (s *server) endCalls(ss *session, calls []*call, ok bool, text string) {
	ctx := context.WithoutCancel(s.ctx)
	for _, c := range calls {
		if err := s.update(ctx, ss.id, c.finish(text, !ok)); err != nil {
			s.logf("ending a background task's call: %v", err)
		}
	}
}

// backgroundCall is a background task's call as the client is asked
// about it: its own id, and a title and content naming the subagent and
// its task.
func backgroundCall(ws *Workspace, a TaskApproval, r deepagents.ActionRequest) *call {
	c := newCall(ws, "bg-"+a.TaskID+"-"+r.ToolCallID, r.Tool, r.Args)
	c.title = clipTitle(fmt.Sprintf("%s (background task %s): %s", a.Subagent, a.TaskID, c.title))
	about := fmt.Sprintf("Background task %s: subagent %s asks to run %s.", a.TaskID, a.Subagent, r.Tool)
	if t := strings.TrimSpace(a.Task); t != "" {
		about += "\nIts task: " + clip.Text(firstLine(t), maxTitle)
	}
	c.about = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(about))}
	c.meta = map[string]any{"deepagents": map[string]any{"background_task": a.TaskID, "subagent": a.Subagent}}
	return c
}
