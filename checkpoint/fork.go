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
// while it works: a thread that is running is ErrBusy.
func Fork(ctx context.Context, s Saver, threadID, checkpointID string) (string, error) {
	lease, err := s.Acquire(ctx, threadID, nil)
	if err != nil {
		return "", err
	}
	status := StatusIdle
	defer func() { lease.Release(context.WithoutCancel(ctx), status) }() //nolint:errcheck // the fork's outcome is reported
	cp := &Checkpoint{ThreadID: threadID, ID: NewID(), ParentID: checkpointID, CreatedAt: time.Now().UTC()}
	if checkpointID != "" {
		snap, err := s.Load(ctx, threadID, checkpointID)
		if err != nil {
			return "", err
		}
		cp.Step, cp.Meta, cp.Keep = snap.Step, snap.Meta, len(snap.Messages)
		// The thread waits for decisions again when the checkpoint did.
		var m struct {
			Status Status `json:"status"`
		}
		if json.Unmarshal(snap.Meta, &m) == nil && m.Status == StatusInterrupted {
			status = StatusInterrupted
		}
	}
	if err := s.Put(ctx, cp); err != nil {
		return "", fmt.Errorf("checkpoint: forking thread %s: %w", threadID, err)
	}
	return cp.ID, nil
}
