package rewind

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/deepagents-go/deepagents/checkpoint"
)

// log reports what no run can carry.
func (t *Tracker) log(err error) { slog.Default().Warn("rewind", "dir", t.dir, "err", err) }

// Options say what Rewind puts back; neither Files nor Conversation means
// both.
type Options struct {
	Files, Conversation bool
	// Force and DryRun are the Restore's (see RestoreOptions).
	Force, DryRun bool
}

// Result is what Rewind did.
type Result struct {
	// Turn is the turn rewound to: its prompt (to send again, edited or
	// not) and when it was sent.
	Turn *Point
	// Files is the Restore's plan; nil when files were not rewound.
	Files *Plan
	// CheckpointID is the conversation's new head (checkpoint.Fork); "" when
	// the conversation was not rewound.
	CheckpointID string
}

// Turns returns the thread's turns, oldest first, which Rewind counts
// from 1: the points of its prompts (KindTurn), and those of the state
// each rewind found (KindEnd: the end of the turn before it, which a
// rewind can go back to).
func (t *Tracker) Turns(ctx context.Context, threadID string) ([]*Point, error) {
	points, err := t.Points(ctx, threadID)
	if err != nil {
		return nil, err
	}
	var turns []*Point
	for _, p := range points {
		if p.Kind == KindTurn || p.Kind == KindEnd {
			turns = append(turns, p)
		}
	}
	return turns, nil
}

// Rewind puts a thread back as it was at its turn-th turn (from 1; see
// Turns): before that prompt, or as an earlier rewind found it. The folder
// (Restore), and the conversation, forked at the checkpoint the turn
// recorded (checkpoint.Fork), the later turns kept on a branch of their
// own. What Rewind changes is itself a turn, the last: a rewind back to it
// undoes this one. saver holds the thread (the agent's Checkpointer).
func (t *Tracker) Rewind(ctx context.Context, saver checkpoint.Saver, threadID string, turn int, opts Options) (*Result, error) {
	if !opts.Files && !opts.Conversation {
		opts.Files, opts.Conversation = true, true
	}
	turns, err := t.Turns(ctx, threadID)
	if err != nil {
		return nil, err
	}
	if turn < 1 || turn > len(turns) {
		return nil, fmt.Errorf("rewind: thread %s has no turn %d (it has %d)", threadID, turn, len(turns))
	}
	res := &Result{Turn: turns[turn-1]}
	ropts := RestoreOptions{Force: opts.Force, DryRun: opts.DryRun}
	if opts.DryRun {
		if opts.Files {
			res.Files, err = t.Restore(ctx, threadID, res.Turn.Seq, ropts)
		}
		return res, err
	}
	// One hold of the thread for both: no run starts between them (a
	// thread that is running is refused, checkpoint.ErrBusy, before
	// anything changes), and no run changes the folder while it is put
	// back. The conversation first; a restore that fails after it leaves
	// the fork in place, and Result says so.
	_, err = checkpoint.Hold(ctx, saver, threadID, func(ctx context.Context, status checkpoint.Status) (checkpoint.Status, string, error) {
		// The conversation as it is, for the point of the folder as the
		// restore finds it.
		if th, err := saver.Thread(ctx, threadID); err == nil {
			ropts.Head = th.Head
		}
		if opts.Conversation {
			var err error
			if status, res.CheckpointID, err = checkpoint.ForkHeld(ctx, saver, threadID, res.Turn.CheckpointID); err != nil {
				return "", "", err
			}
		}
		if opts.Files {
			var err error
			if res.Files, err = t.Restore(ctx, threadID, res.Turn.Seq, ropts); err != nil {
				return status, "", err
			}
		}
		return status, "", nil
	})
	if err != nil {
		return res, fmt.Errorf("rewind: %w", err)
	}
	return res, nil
}

// RestoreAt puts the folder back as it was at a checkpoint of the thread's
// conversation: at the first point recorded with it, or with the nearest
// of its ancestors that has one (what a run from an earlier checkpoint, or
// a state update on one, over the LangGraph API starts from). A
// checkpoint older than every point changes nothing (nil, nil).
func (t *Tracker) RestoreAt(ctx context.Context, saver checkpoint.Saver, threadID, checkpointID string, opts RestoreOptions) (*Plan, error) {
	points, err := t.Points(ctx, threadID)
	if err != nil || len(points) == 0 {
		return nil, err
	}
	// checkpoint -> the first point with it; "" is the thread's start,
	// the first prompt's turn.
	first := make(map[string]int)
	for _, p := range points {
		if _, ok := first[p.CheckpointID]; !ok && (p.CheckpointID != "" || p.Kind == KindTurn) {
			first[p.CheckpointID] = p.Seq
		}
	}
	infos, err := saver.History(ctx, threadID, checkpoint.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("rewind: %w", err)
	}
	parent := make(map[string]string, len(infos))
	for _, in := range infos {
		parent[in.ID] = in.ParentID
	}
	if th, err := saver.Thread(ctx, threadID); err == nil && opts.Head == "" {
		opts.Head = th.Head
	}
	for id, hops := checkpointID, 0; hops <= len(infos); id, hops = parent[id], hops+1 {
		if seq, ok := first[id]; ok {
			return t.Restore(ctx, threadID, seq, opts)
		}
		if id == "" {
			break
		}
	}
	return nil, nil
}
