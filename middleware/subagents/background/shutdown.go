package background

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
)

// Shutdown cancels the local tasks still running and waits for them to
// end (Close), then records them as cancelled in saver, each on the
// thread that started it, so that a later run of the thread lists them as
// such rather than as lost. It returns the tasks it cancelled, by id, with
// their subagents' names (Running): a program about to end says which work
// it stopped. A nil saver records nothing; a thread it cannot record on
// does not stop the others, and its error is returned.
func (s *Middleware) Shutdown(ctx context.Context, saver checkpoint.Saver) (map[string]string, error) {
	running := s.Running()
	if len(running) == 0 {
		return nil, nil
	}
	byThread := s.local.runningByThread()
	s.Close()
	if saver == nil {
		return running, nil
	}
	var errs []error
	for _, thread := range slices.Sorted(maps.Keys(byThread)) {
		if thread == "" {
			continue // a run without a thread keeps no records
		}
		if err := recordCancelled(ctx, saver, thread, byThread[thread]); err != nil {
			errs = append(errs, fmt.Errorf("thread %s: %w", thread, err))
		}
	}
	return running, errors.Join(errs...)
}

// recordCancelled marks the tasks cancelled in the thread's records, as a
// checkpoint after the thread's head that changes nothing else.
func recordCancelled(ctx context.Context, saver checkpoint.Saver, thread string, cancelled []string) error {
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
	tasks, err := Tasks(head.Values)
	if err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Second)
	changed := false
	for _, id := range cancelled {
		t, ok := tasks[id]
		if !ok || t.Remote || t.Status != Running {
			continue // not recorded (its start's step was not saved), or known to have ended
		}
		t.Status, t.LastUpdatedAt = Cancelled, now
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
		Delta:     checkpoint.Delta{Keep: len(head.Messages), Values: map[string]json.RawMessage{TasksValue: raw}},
		// Still what the last run left: its status, and the decisions an
		// interrupted one waits for.
		Meta: head.Meta,
	})
}
