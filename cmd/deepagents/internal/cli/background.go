package cli

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/middleware/subagents"
)

// stopBackground ends the background (async) subagent tasks still running
// when a run of run, -p or resume is over: the process is about to end,
// and they with it. It says so on stderr, naming them, cancels them, and
// records them on the thread as cancelled, so that a later run of the
// thread lists them as such rather than as lost. (The interactive session
// keeps them running until it ends.)
func stopBackground(ctx context.Context, env Env, o *opened, thread string) {
	var async *subagents.AsyncMiddleware
	for _, m := range o.Agent.Middleware() {
		if a, ok := m.(*subagents.AsyncMiddleware); ok {
			async = a
		}
	}
	if async == nil {
		return
	}
	running := async.Running()
	if len(running) == 0 {
		return
	}
	ids := slices.Sorted(maps.Keys(running))
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = fmt.Sprintf("%s (%s)", id, running[id])
	}
	fmt.Fprintf(env.Stderr, "deepagents: warning: the run ended with %d background task(s) still running, now cancelled: %s; a task's result comes only to a run that waits for it (wait_async_task)\n",
		len(ids), strings.Join(names, ", "))
	async.Close() // cancels them, and waits for them to end
	if thread == "" {
		return
	}
	if err := recordCancelled(ctx, o, thread, ids); err != nil {
		fmt.Fprintf(env.Stderr, "deepagents: warning: the cancelled tasks were not recorded on thread %s (a later run will list them as lost): %v\n", thread, err)
	}
}

// recordCancelled marks the tasks ids cancelled in the thread's records
// (subagents.AsyncTasksValue), as a checkpoint after the thread's head
// that changes nothing else.
func recordCancelled(ctx context.Context, o *opened, thread string, ids []string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	saver := o.db.Saver
	th, err := saver.Thread(ctx, thread)
	if err != nil {
		return err
	}
	lease, err := saver.Acquire(ctx, thread, nil)
	if err != nil {
		return err
	}
	defer lease.Release(ctx, th.Status) //nolint:errcheck // the status is what it was
	head, err := saver.Load(ctx, thread, "")
	if err != nil {
		return err
	}
	tasks, err := subagents.AsyncTasks(head.Values)
	if err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Second)
	changed := false
	for _, id := range ids {
		t, ok := tasks[id]
		if !ok || t.Remote || t.Status != subagents.AsyncRunning {
			continue // not recorded (its start's step was not saved), or known to have ended
		}
		t.Status, t.LastUpdatedAt = subagents.AsyncCancelled, now
		tasks[id], changed = t, true
	}
	if !changed {
		return nil
	}
	raw, err := json.Marshal(tasks)
	if err != nil {
		return err
	}
	return saver.Put(ctx, &checkpoint.Checkpoint{
		ThreadID:  thread,
		ID:        checkpointID(),
		ParentID:  head.ID,
		Step:      head.Step,
		CreatedAt: time.Now().UTC(),
		Delta:     checkpoint.Delta{Keep: len(head.Messages), Values: map[string]json.RawMessage{subagents.AsyncTasksValue: raw}},
		// Still what the last run left: its status, and the decisions
		// an interrupted one waits for.
		Meta: head.Meta,
	})
}

// checkpointID returns an id that sorts after the earlier ones, as the
// agent's do.
func checkpointID() string {
	var b [4]byte
	rand.Read(b[:]) //nolint:errcheck // never fails
	return fmt.Sprintf("%016x%x", time.Now().UnixNano(), b)
}
