package background

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend/isolate"
	"github.com/deepagents-go/deepagents/middleware/subagents"
)

// A local task that writes works in a workspace of its own (package
// backend/isolate), made when the task starts from the folder as it is
// then, and merged back when the task ends (finished, failed, cancelled,
// timed out, denied or stopped by Close), before its result is reported:
// the merge's report ends the task's result (or error). A task that
// parks for approval keeps its workspace while it waits, and an update
// (update_async_task) goes on in it.

// isolates reports whether e's tasks work in a workspace of their own.
func (l *localTasks) isolates(e *subagent) bool {
	return l.dir != "" && e.Entry != nil && e.isolation != isolate.None
}

// forkFor makes t's workspace, when its subagent isolates and t has none
// yet, and returns it (nil when it made none); one that cannot be made
// leaves the task in the shared folder, which its result then says. t's
// lock is not held. Calls of one turn run in parallel: of two forks for
// one task, the one that comes second is removed at once.
func (l *localTasks) forkFor(ctx context.Context, t *localTask) *isolate.Workspace {
	t.mu.Lock()
	has := t.ws != nil
	t.mu.Unlock()
	if has || !l.isolates(t.e) {
		return nil
	}
	opts := l.wsOpts
	opts.Group = nil // from the folder as it is now
	opts.Label = t.e.name + "-" + t.id
	ws, err := isolate.Fork(ctx, l.dir, t.e.isolation, opts)
	t.mu.Lock()
	if err != nil {
		if t.ws == nil {
			t.wsNote = withNote(t.wsNote, fmt.Sprintf("The task worked in the shared folder: its own workspace could not be made (%v).", err))
		}
		t.mu.Unlock()
		return nil
	}
	if t.ws != nil {
		t.mu.Unlock()
		_ = ws.Remove() // another call made one meanwhile
		return nil
	}
	t.ws, t.wsUsed = ws, false
	t.mu.Unlock()
	return ws
}

// workspaceRoot returns the folder of t's workspace, "" when it has none.
func (t *localTask) workspaceRoot() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ws == nil {
		return ""
	}
	return t.ws.Root
}

// discardWorkspace removes ws, made by forkFor for a run that never
// started: nothing was written in it. It is left alone when it is no
// longer t's, or a run (launched by another call meanwhile) works in it.
func (l *localTasks) discardWorkspace(t *localTask, ws *isolate.Workspace) {
	t.mu.Lock()
	if ws == nil || t.ws != ws || t.wsUsed {
		t.mu.Unlock()
		return
	}
	t.ws = nil
	t.mu.Unlock()
	_ = ws.Remove()
}

// mergeWorkspace merges ws back into the folder and returns the report
// for the model; it tells the person through events (the stream of the
// run that started the task, while it lasts).
func mergeWorkspace(ctx context.Context, t *localTask, ws *isolate.Workspace, events func(agent.Event)) string {
	text, ev := mergeQuietly(ctx, t, ws)
	if events != nil {
		events(ev)
	}
	return text
}

// mergeQuietly merges ws back into the folder and returns the report for
// the model and the notice for the person.
func mergeQuietly(ctx context.Context, t *localTask, ws *isolate.Workspace) (string, agent.Event) {
	rep, err := ws.Merge(context.WithoutCancel(ctx))
	text := strings.Replace(rep.Text(), "The subagent worked", "The task worked", 1)
	if err != nil {
		text += fmt.Sprintf("\nThe merge stopped (%v); the task's workspace is kept at %s.", err, rep.Kept)
	}
	paths := rep.Paths()
	for i, p := range paths {
		paths[i] = "/" + p
	}
	summary := fmt.Sprintf("background task %s (%s): %d file(s) merged back, %d conflict(s)", t.id, t.e.name, len(rep.Applied)+len(rep.Removed)+len(rep.Merged), len(rep.Conflicts))
	ev := agent.Event{Type: agent.EventNotice, Name: subagents.NoticeMerge, Content: summary, Files: paths}
	if err != nil {
		ev.Error = err.Error()
	}
	return text, ev
}

// lostWorkspaceNote is what a task found again after its process ended
// says of the workspace it worked in, at root: no later process takes it
// up, and nothing of it was merged.
func lostWorkspaceNote(root string) string {
	if _, err := os.Stat(root); err != nil {
		return fmt.Sprintf("The task worked in a workspace of its own at %s, which is gone: what it wrote there before its process ended was lost, and nothing of it was merged into the folder.", root)
	}
	return fmt.Sprintf("The task worked in a workspace of its own at %s; its process ended before the task did, so nothing of it was merged into the folder: what it wrote is still there, to look at or copy by hand.", root)
}

// withNote appends note to s, a paragraph apart.
func withNote(s, note string) string {
	switch {
	case note == "":
		return s
	case s == "":
		return note
	}
	return s + "\n\n" + note
}
