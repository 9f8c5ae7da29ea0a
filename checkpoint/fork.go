package checkpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Fork makes a thread continue from one of its earlier checkpoints: it
// puts a new checkpoint on checkpointID, with that checkpoint's state
// (messages, files, values, run information), as the thread's head. What
// came after checkpointID stays in History, a branch of its own, and can
// be forked back to. An empty checkpointID forks at the thread's start:
// an empty state. It returns the new checkpoint's ID. It holds the thread
// while it works: a thread that is running is ErrBusy; a fork that fails
// leaves the thread's status as it was.
func Fork(ctx context.Context, s Saver, threadID, checkpointID string) (string, error) {
	return Hold(ctx, s, threadID, func(ctx context.Context, _ Status) (Status, string, error) {
		return ForkHeld(ctx, s, threadID, checkpointID)
	})
}

// Hold runs fn while it holds the thread (Acquire), giving it the thread's
// status before, and releases the thread with the status fn returns ("":
// the status before, as when nothing changed).
func Hold(ctx context.Context, s Saver, threadID string, fn func(ctx context.Context, before Status) (Status, string, error)) (string, error) {
	before := StatusIdle
	if th, err := s.Thread(ctx, threadID); err == nil {
		before = th.Status
	}
	lease, err := s.Acquire(ctx, threadID, nil)
	if err != nil {
		return "", err
	}
	status, out, err := fn(ctx, before)
	if status == "" {
		status = before
	}
	if rerr := lease.Release(context.WithoutCancel(ctx), status); err == nil && rerr != nil {
		err = rerr
	}
	return out, err
}

// ForkHeld is Fork for a caller that holds the thread already (see Hold):
// it returns the status the thread has after the fork, interrupted when
// the checkpoint waited for decisions.
func ForkHeld(ctx context.Context, s Saver, threadID, checkpointID string) (Status, string, error) {
	status := StatusIdle
	cp := &Checkpoint{ThreadID: threadID, ID: NewID(), ParentID: checkpointID, CreatedAt: time.Now().UTC()}
	if checkpointID != "" {
		snap, err := s.Load(ctx, threadID, checkpointID)
		if err != nil {
			return "", "", err
		}
		cp.Step, cp.Meta, cp.Keep = snap.Step, snap.Meta, len(snap.Messages)
		var m struct {
			Status Status `json:"status"`
		}
		if json.Unmarshal(snap.Meta, &m) == nil && m.Status == StatusInterrupted {
			status = StatusInterrupted
		}
	}
	if err := s.Put(ctx, cp); err != nil {
		return "", "", fmt.Errorf("checkpoint: forking thread %s: %w", threadID, err)
	}
	return status, cp.ID, nil
}
