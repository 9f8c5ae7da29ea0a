package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
)

// Fork makes a thread continue from one of its earlier checkpoints: it
// saves a new checkpoint on checkpointID, with that checkpoint's state
// (conversation, files, values, pending approvals), as the thread's head.
// What came after checkpointID stays in the thread's history, a branch of
// its own, and can be forked back to. An empty checkpointID forks at the
// thread's start: an empty conversation. It returns the new checkpoint's
// ID. The thread must not be running (checkpoint.ErrBusy).
func (a *Agent) Fork(ctx context.Context, threadID, checkpointID string) (string, error) {
	if a.saver == nil {
		return "", errors.New("agent: Fork needs a Checkpointer")
	}
	lease, err := a.saver.Acquire(ctx, threadID, nil)
	if err != nil {
		return "", fmt.Errorf("agent: thread %s: %w", threadID, err)
	}
	status := checkpoint.StatusIdle
	defer func() { lease.Release(context.WithoutCancel(ctx), status) }() //nolint:errcheck // the fork's outcome is reported
	cp := &checkpoint.Checkpoint{ThreadID: threadID, ID: checkpoint.NewID(), ParentID: checkpointID, CreatedAt: time.Now().UTC()}
	if checkpointID != "" {
		snap, err := a.saver.Load(ctx, threadID, checkpointID)
		if err != nil {
			return "", fmt.Errorf("agent: thread %s: %w", threadID, err)
		}
		cp.Step, cp.Meta, cp.Keep = snap.Step, snap.Meta, len(snap.Messages)
		var m runMeta
		if len(snap.Meta) > 0 && json.Unmarshal(snap.Meta, &m) == nil && m.Status == StatusInterrupted {
			status = checkpoint.StatusInterrupted
		}
	}
	if err := a.saver.Put(ctx, cp); err != nil {
		return "", fmt.Errorf("agent: thread %s: %w", threadID, err)
	}
	return cp.ID, nil
}
