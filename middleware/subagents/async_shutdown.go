package subagents

import (
	"context"
	"encoding/json"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
)

// Shutdown cancels the local tasks still running and waits for them to
// end (Close), then records the ones of thread as cancelled in saver, so
// that a later run of the thread lists them as such rather than as lost.
// It returns the tasks it cancelled, by id, with their subagents' names
// (Running). A program about to end calls it, and says which work it
// stopped; a nil saver or an empty thread records nothing.
func (s *AsyncMiddleware) Shutdown(ctx context.Context, saver checkpoint.Saver, thread string) (map[string]string, error) {
	running := s.Running()
	if len(running) == 0 {
		return nil, nil
	}
	s.Close()
	if saver == nil || thread == "" {
		return running, nil
	}
	return running, recordCancelled(ctx, saver, thread, running)
}

// recordCancelled marks the tasks cancelled in the thread's records, as a
// checkpoint after the thread's head that changes nothing else.
func recordCancelled(ctx context.Context, saver checkpoint.Saver, thread string, cancelled map[string]string) error {
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
	tasks, err := AsyncTasks(head.Values)
	if err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Second)
	changed := false
	for id := range cancelled {
		t, ok := tasks[id]
		if !ok || t.Remote || t.Status != AsyncRunning {
			continue // not recorded (its start's step was not saved), or known to have ended
		}
		t.Status, t.LastUpdatedAt = AsyncCancelled, now
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
		ID:        checkpoint.NewID(),
		ParentID:  head.ID,
		Step:      head.Step,
		CreatedAt: time.Now().UTC(),
		Delta:     checkpoint.Delta{Keep: len(head.Messages), Values: map[string]json.RawMessage{AsyncTasksValue: raw}},
		// Still what the last run left: its status, and the decisions an
		// interrupted one waits for.
		Meta: head.Meta,
	})
}
