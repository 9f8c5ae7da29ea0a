package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
)

// stopBackground ends the background (async) subagent tasks still running
// when the process is about to end (a run of run, -p or resume is over,
// or the interactive session ends), and they with it. It says so on
// stderr, naming them, cancels them, and records them as cancelled on the
// threads that started them, so that a later run lists them as such rather
// than as lost.
func stopBackground(ctx context.Context, env Env, o *opened) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	stopped, err := deepagents.ShutdownBackground(ctx, o.Agent)
	for _, l := range backgroundStopped("the run", stopped, err) {
		fmt.Fprintln(env.Stderr, "deepagents: warning: "+l)
	}
}

// backgroundStopped says which background tasks ended with what, and
// whether they could not all be recorded.
func backgroundStopped(with string, stopped map[string]string, err error) []string {
	var out []string
	if len(stopped) > 0 {
		ids := slices.Sorted(maps.Keys(stopped))
		names := make([]string, len(ids))
		for i, id := range ids {
			names[i] = fmt.Sprintf("%s (%s)", id, stopped[id])
		}
		out = append(out, fmt.Sprintf("%s ended %d background task(s) still running, now cancelled: %s; a task's result comes only to a run that waits for it (wait_async_task)", with, len(ids), strings.Join(names, ", ")))
	}
	if err != nil {
		out = append(out, fmt.Sprintf("the cancelled tasks were not all recorded (a later run will list those as lost): %v", err))
	}
	return out
}

// taskAnswer is resume --task: the decisions for a background task's
// request for approval.
type taskAnswer struct {
	task      string
	decisions []deepagents.Decision
}

// answeredNotice is the message of the turn resume --task runs: the main
// agent collects the task it answered for.
func answeredNotice(task string) string {
	return fmt.Sprintf("[The user answered the request for approval of background task %s. Wait for it with wait_async_task and report its result.]", task)
}

// answerTask gives a background task of thread its decisions: its
// subagent resumes on a goroutine of this process.
func answerTask(ctx context.Context, o *opened, thread string, a *taskAnswer) error {
	bg := deepagents.Background(o.Agent)
	if bg == nil {
		return usageError{fmt.Errorf("resume --task %s: this session has no background subagents", a.task)}
	}
	if err := bg.Answer(ctx, thread, a.task, a.decisions); err != nil {
		if errors.Is(err, deepagents.ErrAsyncNotWaiting) {
			return usageError{fmt.Errorf("resume --task: %w", err)}
		}
		return fmt.Errorf("resume --task: %w", err)
	}
	return nil
}

// printParked says on stderr which background tasks of thread wait for
// approval when a run is over, each with the command that answers it:
// they wait in the database, for a later process.
func printParked(ctx context.Context, env Env, o *opened, thread string) {
	bg := deepagents.Background(o.Agent)
	if bg == nil || thread == "" {
		return
	}
	list, err := bg.Approvals(ctx, thread)
	if err != nil {
		fmt.Fprintf(env.Stderr, "deepagents: warning: the background tasks' approvals could not all be read: %v\n", err)
	}
	for _, l := range parkedLines(list) {
		fmt.Fprintln(env.Stderr, "deepagents: "+l)
	}
}

// parkedLines says what each waiting background task asks, and how to
// answer it.
func parkedLines(list []deepagents.AsyncApproval) []string {
	var out []string
	for _, a := range list {
		var calls []string
		for _, r := range a.Requests {
			calls = append(calls, r.Tool+" "+display.Clip(string(r.Args), 120))
		}
		decisions := strings.Repeat(" --decision approve", len(a.Requests))
		out = append(out, fmt.Sprintf("background task %s (%s: %s) waits for approval of %s; answer with: deepagents resume %s --task %s%s (or reject:REASON)",
			a.TaskID, a.Subagent, display.OneLine(display.Clip(a.Task, 80)), strings.Join(calls, "; "), a.ThreadID, a.TaskID, decisions))
	}
	return out
}

// testTaskIDs makes the background task ids of the sessions the tests
// run in this process; nil (random ids) otherwise.
var testTaskIDs func() string
