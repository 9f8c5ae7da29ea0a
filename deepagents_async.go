package deepagents

import (
	"context"

	"github.com/deepagents-go/deepagents/middleware/subagents/background"
)

// Background subagents (see Config.AsyncSubagents).
type (
	AsyncSubagent = background.Subagent
	AsyncOptions  = background.Options
	AsyncTask     = background.Task
	// AsyncApproval is a background task's request for approval.
	AsyncApproval = background.Approval
)

// A background task's statuses an AsyncApproval carries: it waits for an
// answer, it was answered (and runs), or nobody answered in time.
const (
	AsyncAwaitingApproval = background.AwaitingApproval
	AsyncRunning          = background.Running
	AsyncDenied           = background.Denied
)

// ErrAsyncNotWaiting is background.ErrNotWaiting: the task answered is not
// waiting for approval.
var ErrAsyncNotWaiting = background.ErrNotWaiting

// allSubagents returns the subagents the configuration declares: the task
// tool's and the local background ones (a remote one's tools are its
// server's).
func allSubagents(cfg Config) []Subagent {
	if len(cfg.AsyncSubagents) == 0 {
		return cfg.Subagents
	}
	out := append([]Subagent(nil), cfg.Subagents...)
	for _, a := range cfg.AsyncSubagents {
		if a.URL == "" && a.GraphID == "" {
			out = append(out, a.Subagent)
		}
	}
	return out
}

// ShutdownBackground cancels the agent's background (async) subagent tasks
// still running, waits for them to end, and records them as cancelled in
// the agent's Checkpointer, each on the thread that started it, so that a
// later run of the thread lists them as cancelled rather than lost. It returns the tasks
// it cancelled, by id, with their subagents' names: a program about to
// end can say which work it stopped. An agent without AsyncSubagents has
// none.
func ShutdownBackground(ctx context.Context, a *Agent) (map[string]string, error) {
	if async := Background(a); async != nil {
		return async.Shutdown(ctx, a.Checkpointer())
	}
	return nil, nil
}

// Background returns the agent's background (async) subagents middleware,
// nil when it has none: a program that drives a thread lists the approvals
// its background tasks wait on (Approvals), hears of new ones (Watch) and
// answers them (Answer). See docs/background-subagents.md.
func Background(a *Agent) *background.Middleware {
	for _, m := range a.Middleware() {
		if async, ok := m.(*background.Middleware); ok {
			return async
		}
	}
	return nil
}
