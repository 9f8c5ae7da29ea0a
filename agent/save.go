package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
)

// This file checkpoints a run: what its State's journal took, written now,
// in the background or at the end, as the run's Durability says.

// saveStep checkpoints a step as the run's Durability says: now, in the
// background, or (DurabilityExit) not before the run ends.
func (r *run) saveStep(ctx context.Context) error {
	switch {
	case r.a.saver == nil || r.durability == DurabilitySync:
		return r.save(ctx, nil)
	case r.durability == DurabilityExit:
		return nil
	}
	if r.writer == nil {
		r.writer = newCPWriter(r.a.saver, r.rt.threadID, r.committedAsync)
	}
	return r.writer.put(r.next(nil))
}

// committedAsync is called by the writer after each commit.
func (r *run) committedAsync(cp *checkpoint.Checkpoint) {
	r.committed = cp.ID
	r.rt.emitCheckpoint(cp)
}

// flush waits for the checkpoints the writer holds. When one failed, the
// run's last checkpoint is the last one committed.
func (r *run) flush() error {
	if r.writer == nil {
		return nil
	}
	err := r.writer.flush()
	if err != nil {
		r.checkpoint = r.committed
		r.rt.setCheckpoint(r.committed)
	}
	return err
}

func (r *run) closeWriter() {
	if r.writer != nil {
		r.writer.close() //nolint:errcheck // flush reported it
	}
}

// save writes a checkpoint of what changed since the last one, after the
// steps the writer holds, and returns once it is committed. Without a
// Checkpointer it only resets the change tracking.
func (r *run) save(ctx context.Context, meta json.RawMessage) error {
	if err := r.flush(); err != nil {
		return err
	}
	parent := r.checkpoint
	cp := r.next(meta)
	if cp == nil {
		return nil
	}
	if err := r.a.saver.Put(ctx, cp); err != nil {
		r.checkpoint = parent
		r.rt.setCheckpoint(parent)
		return saveError(r.rt.threadID, err)
	}
	r.committed = cp.ID
	r.rt.emitCheckpoint(cp)
	return nil
}

// next takes what changed since the last checkpoint (resetting the change
// tracking) and, with a Checkpointer, makes it the run's next checkpoint.
// Its message list is its own; the messages' parts and calls are shared
// with the run, which never changes them in place (hooks that rewrite the
// conversation replace messages).
func (r *run) next(meta json.RawMessage) *checkpoint.Checkpoint {
	rt := r.rt
	rt.mu.Lock()
	c := rt.state.TakeChanges()
	step := rt.step
	rt.mu.Unlock()
	d := checkpoint.Delta{Keep: c.Keep, Messages: c.Messages, Values: c.Values, Files: c.Files, Appends: c.Appends}
	if r.a.saver == nil {
		return nil
	}
	cp := &checkpoint.Checkpoint{
		ThreadID:  rt.threadID,
		ID:        checkpoint.NewID(),
		ParentID:  r.checkpoint,
		Step:      step,
		CreatedAt: time.Now().UTC(),
		Delta:     d,
		Meta:      meta,
	}
	r.checkpoint = cp.ID
	rt.setCheckpoint(cp.ID)
	return cp
}

// detached is ctx without its cancellation, bounded by a timeout: for the
// saves and releases that end a run however it ended.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
}

// saveError is the error of a checkpoint that could not be saved.
func saveError(threadID string, err error) error {
	return fmt.Errorf("agent: saving checkpoint of thread %s: %w", threadID, err)
}

// dirty reports whether anything changed since the last checkpoint.
func (r *run) dirty() bool {
	rt := r.rt
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.state.Dirty()
}
