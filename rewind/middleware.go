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
// each model call that follows tools that may change the folder (not only
// read_file, ls, glob, grep or write_todos), and at the end of each run,
// when the folder changed. Only top-level runs
// record: a subagent's changes are its caller's step.
func (t *Tracker) Middleware() agent.Middleware { return &middleware{t: t} }

type middleware struct{ t *Tracker }

// Name implements agent.Middleware.
func (*middleware) Name() string { return "rewind" }

// BeforeAgent implements agent.BeforeAgentHook: a prompt of the user's,
// and only that, is a turn; its text is as the user sent it, without what
// middleware added (a UserPromptSubmit hook's context).
func (m *middleware) BeforeAgent(ctx context.Context, rt *agent.Runtime) error {
	if prompt, ok := rt.Prompt(); ok && len(rt.Namespace()) == 0 {
		m.record(ctx, rt, rt.ThreadID(), KindTurn, prompt.Text(), rt.StartCheckpoint())
	}
	return nil
}

// readOnly are the tools that cannot change the folder: a step that
// called only these is not scanned.
var readOnly = map[string]bool{"read_file": true, "ls": true, "glob": true, "grep": true, "write_todos": true}

// wrote marks, in a run's Runtime.Local, that a tool that may change the
// folder ran since the last point.
type wrote struct{}

// WrapTool implements agent.ToolWrapper: a call of a tool that may change
// the folder (execute, the file tools that write, task, an MCP tool, ...)
// marks the step for a scan.
func (m *middleware) WrapTool(ctx context.Context, req *agent.ToolRequest, next agent.ToolHandler) (agent.ToolResult, error) {
	if !readOnly[req.Call.Name] && len(req.Runtime.Namespace()) == 0 {
		req.Runtime.SetLocal(wrote{}, true)
	}
	return next(ctx, req)
}

// WrapModel implements agent.ModelWrapper.
func (m *middleware) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	if rt := req.Runtime; len(rt.Namespace()) == 0 && rt.Step() > 1 {
		if w, _ := rt.Local(wrote{}); w == true {
			rt.SetLocal(wrote{}, false)
			// The folder as the tools of the turn before left it: the
			// turn's checkpoint, saved or queued.
			m.record(ctx, rt, rt.ThreadID(), KindStep, "", rt.Checkpoint())
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
	res, err := next(ctx, req)
	if top && res != nil {
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
