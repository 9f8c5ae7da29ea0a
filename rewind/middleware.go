package rewind

import (
	"context"
	"fmt"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
)

// NoticeFailed names the notice of a point that could not be recorded:
// the run goes on without it.
const NoticeFailed = "rewind_failed"

// Middleware records the Tracker's points during the runs of the agent it
// is in: a turn at each prompt, before the agent acts on it; a step before
// each model call after the first (the tools of the turn before ran), and
// at the end of each run, when the folder changed. Only top-level runs
// record: a subagent's changes are its caller's step.
func (t *Tracker) Middleware() agent.Middleware { return &middleware{t: t} }

type middleware struct{ t *Tracker }

// Name implements agent.Middleware.
func (*middleware) Name() string { return "rewind" }

// BeforeAgent implements agent.BeforeAgentHook.
func (m *middleware) BeforeAgent(ctx context.Context, rt *agent.Runtime) error {
	if len(rt.Namespace()) > 0 || rt.Resuming() {
		return nil
	}
	msgs := rt.Messages()
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != llm.RoleUser {
		return nil
	}
	m.record(ctx, rt, rt.ThreadID(), KindTurn, msgs[len(msgs)-1].Text(), rt.StartCheckpoint())
	return nil
}

// WrapModel implements agent.ModelWrapper.
func (m *middleware) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	if rt := req.Runtime; len(rt.Namespace()) == 0 && rt.Step() > 1 {
		m.record(ctx, rt, rt.ThreadID(), KindStep, "", "")
	}
	return next(ctx, req)
}

// WrapRun implements agent.RunWrapper.
func (m *middleware) WrapRun(ctx context.Context, req *agent.RunRequest, next agent.RunHandler) (*agent.Result, error) {
	res, err := next(ctx, req)
	if agent.RuntimeFromContext(ctx) == nil && res != nil {
		id := res.CheckpointID
		if _, rerr := m.t.Record(context.WithoutCancel(ctx), res.ThreadID, KindStep, "", id); rerr != nil {
			m.t.log(rerr)
		}
	}
	return res, err
}

// record records a point, a failure told as a notice: undo is a safety
// net, and the run goes on without it.
func (m *middleware) record(ctx context.Context, rt *agent.Runtime, threadID string, kind Kind, prompt, cp string) {
	if _, err := m.t.Record(ctx, threadID, kind, prompt, cp); err != nil {
		rt.Emit(agent.Event{Type: agent.EventNotice, Name: NoticeFailed,
			Content: fmt.Sprintf("The workspace checkpoint failed (%v); rewinding to this point will not restore files.", err), Error: err.Error()})
	}
}
