package rewind

import (
	"context"
	"fmt"
	"sync"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/tool"
)

// NoticeFailed names the notice of a point that could not be recorded:
// the run goes on without it.
const NoticeFailed = "rewind_failed"

// Middleware records the Tracker's points during the runs of the agent it
// is in: a turn at each prompt, recorded while the model answers its first
// request (a tool that may change the folder waits for it); a step before
// each model call that follows tools that may have changed the folder, and
// at the end of each run, when the folder changed. What a step costs
// follows from its tools' traits (tool.Traits): nothing after read-only
// tools; a look at the paths they changed after tools that change files
// through the backends alone (which report each change:
// backend.WithChanges); a walk of the folder after any other (execute,
// task, an MCP tool, a tool without traits). Only top-level runs record: a
// subagent's changes are its caller's step.
func (t *Tracker) Middleware(opts ...MiddlewareOption) agent.Middleware {
	m := &middleware{t: t}
	for _, o := range opts {
		o(m)
	}
	return m
}

// MiddlewareOption changes what the Middleware takes a step to have done.
type MiddlewareOption func(*middleware)

// WalkEveryStep takes every tool call to have possibly changed anything:
// a step that called any tool walks the folder. It is for an agent whose
// tool calls run something besides the tools (hooks around them, say),
// which no backend reports.
func WalkEveryStep() MiddlewareOption { return func(m *middleware) { m.walkEvery = true } }

type middleware struct {
	t         *Tracker
	walkEvery bool
}

// Name implements agent.Middleware.
func (*middleware) Name() string { return "rewind" }

// run is what a top-level run's hooks share, in the context WrapRun gives
// it: the turn's point being recorded, and what the tools since the last
// point changed.
type run struct {
	turn *turn
	step step
}

type runKey struct{}

// runOf returns the run's state; nil in a subagent's run, and in a run
// whose WrapRun was not this middleware's.
func runOf(ctx context.Context, rt *agent.Runtime) *run {
	if len(rt.Namespace()) != 0 {
		return nil
	}
	r, _ := ctx.Value(runKey{}).(*run)
	return r
}

// turn is the recording of a turn's point.
type turn struct {
	done chan struct{}
	err  error
	told sync.Once
}

// wait waits for the turn's point; its failure is told once, as a notice.
func (tn *turn) wait(ctx context.Context, rt *agent.Runtime) {
	select {
	case <-tn.done:
	case <-ctx.Done():
		return
	}
	if tn.err != nil {
		tn.told.Do(func() { notice(rt, tn.err) })
	}
}

// BeforeAgent implements agent.BeforeAgentHook: a prompt of the user's,
// and only that, is a turn; its text is as the user sent it, without what
// middleware added (a UserPromptSubmit hook's context). The point is
// recorded while the run goes on to its first model request.
func (m *middleware) BeforeAgent(ctx context.Context, rt *agent.Runtime) error {
	prompt, ok := rt.Prompt()
	r := runOf(ctx, rt)
	if !ok || r == nil {
		return nil
	}
	tn := &turn{done: make(chan struct{})}
	r.turn = tn
	threadID, text, cp := rt.ThreadID(), prompt.Text(), rt.StartCheckpoint()
	go func() {
		defer close(tn.done)
		_, tn.err = m.t.Record(ctx, threadID, KindTurn, text, cp)
	}()
	return nil
}

// waitTurn waits for the run's turn point, if one is being recorded.
func (r *run) waitTurn(ctx context.Context, rt *agent.Runtime) {
	if r.turn != nil {
		r.turn.wait(ctx, rt)
	}
}

// step is what the tools since the last point changed: the changes the
// backends reported, and whether a tool that may change anything ran.
type step struct {
	mu      sync.Mutex
	wrote   bool
	walk    bool
	changes []backend.Change
}

func (s *step) observe(c backend.Change) {
	s.mu.Lock()
	s.changes = append(s.changes, backend.Change{Path: c.Path, Info: c.Info, Content: append([]byte(nil), c.Content...)})
	s.mu.Unlock()
}

// take returns what the step changed, and starts the next.
func (s *step) take() (wrote bool, changes []backend.Change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wrote, changes = s.wrote, s.changes
	if s.walk {
		changes = nil // a walk
	} else if changes == nil {
		changes = []backend.Change{} // nothing reported: nothing to look at
	}
	s.wrote, s.walk, s.changes = false, false, nil
	return wrote, changes
}

// WrapTool implements agent.ToolWrapper: a call of a tool that may change
// the folder waits for the turn's point, and marks the step for a point:
// the changes its backend reports when it edits files through one alone,
// a walk otherwise.
func (m *middleware) WrapTool(ctx context.Context, req *agent.ToolRequest, next agent.ToolHandler) (agent.ToolResult, error) {
	rt := req.Runtime
	traits := tool.TraitsOf(req.Tool) // none for a tool that does not exist
	r := runOf(ctx, rt)
	if m.walkEvery {
		traits = tool.Traits{}
	}
	if traits.ReadOnly || r == nil {
		return next(ctx, req)
	}
	r.waitTurn(ctx, rt)
	s := &r.step
	s.mu.Lock()
	s.wrote = true
	if !traits.EditsFiles {
		s.walk = true
	}
	s.mu.Unlock()
	if traits.EditsFiles {
		ctx = backend.WithChanges(ctx, s.observe)
	}
	return next(ctx, req)
}

// WrapModel implements agent.ModelWrapper.
func (m *middleware) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	if r := runOf(ctx, req.Runtime); r != nil && req.Runtime.Step() > 1 {
		rt := req.Runtime
		if wrote, changes := r.step.take(); wrote {
			// The folder as the tools of the turn before left it: the
			// turn's checkpoint, saved or queued.
			m.record(ctx, rt, changes)
		}
	}
	return next(ctx, req)
}

// WrapRun implements agent.RunWrapper: a run from an earlier checkpoint
// (agent.Input.CheckpointID: time travel over the LangGraph API) starts
// with the folder as it was there, what changed outside the agent since
// kept; a run's end records what its last steps changed.
func (m *middleware) WrapRun(ctx context.Context, req *agent.RunRequest, next agent.RunHandler) (*agent.Result, error) {
	top := agent.RuntimeFromContext(ctx) == nil
	if saver := req.Agent.Checkpointer(); top && saver != nil && req.Input.CheckpointID != "" && req.Input.Decisions == nil {
		if _, err := m.t.RestoreAt(ctx, saver, req.ThreadID, req.Input.CheckpointID, RestoreOptions{}); err != nil {
			m.t.log(err)
		}
	}
	if !top {
		return next(ctx, req)
	}
	r := &run{}
	res, err := next(context.WithValue(ctx, runKey{}, r), req)
	if r.turn != nil {
		<-r.turn.done
		if r.turn.err != nil {
			m.t.log(r.turn.err) // told as a notice too, if a tool waited for it
		}
	}
	threadID := req.ThreadID
	if res != nil {
		threadID = res.ThreadID
		if wrote, changes := r.step.take(); wrote {
			if _, rerr := m.t.RecordChanges(context.WithoutCancel(ctx), res.ThreadID, KindStep, "", res.CheckpointID, changes); rerr != nil {
				m.t.log(rerr)
			}
		}
	}
	// What waits is written before the run ends: another process
	// (deepagents rewind) reads the points next.
	if threadID != "" {
		if ferr := m.t.Flush(context.WithoutCancel(ctx), threadID); ferr != nil {
			m.t.log(ferr)
		}
	}
	return res, err
}

// record records a step's point, a failure told as a notice: undo is a
// safety net, and the run goes on without it.
func (m *middleware) record(ctx context.Context, rt *agent.Runtime, changes []backend.Change) {
	if _, err := m.t.recordThread(ctx, rt.ThreadID(), KindStep, "", rt.Checkpoint(), changes, true); err != nil {
		notice(rt, err)
	}
}

func notice(rt *agent.Runtime, err error) {
	rt.Emit(agent.Event{Type: agent.EventNotice, Name: NoticeFailed,
		Content: fmt.Sprintf("The workspace checkpoint failed (%v); rewinding to this point will not restore files.", err), Error: err.Error()})
}

// Of returns the Tracker whose Middleware is in a's stack, nil when none
// is.
func Of(a *agent.Agent) *Tracker {
	for _, mw := range a.Middleware() {
		if m, ok := mw.(*middleware); ok {
			return m.t
		}
	}
	return nil
}
