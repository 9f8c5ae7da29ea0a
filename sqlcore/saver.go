package sqlcore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/internal/dbtime"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/sqlcore/internal/cpcodec"
)

// Load implements [checkpoint.Saver.Load]: it reads in one read-only
// transaction, the reads of the ancestry as one batch.
func (c *Core) Load(ctx context.Context, threadID, checkpointID string) (_ *checkpoint.Snapshot, err error) {
	ctx, done, err := c.start(ctx)
	if err != nil {
		return nil, err
	}
	defer done(&err)
	tx, err := c.conn.BeginRead(ctx)
	if err != nil {
		return nil, c.d.Wrap("load", err)
	}
	defer tx.Rollback()
	snap, err := c.load(ctx, tx, threadID, checkpointID)
	if err != nil {
		return nil, c.d.Wrap("load", err)
	}
	return snap, nil
}

func (c *Core) load(ctx context.Context, tx Tx, threadID, checkpointID string) (*checkpoint.Snapshot, error) {
	if checkpointID == "" {
		var head *string
		err := tx.QueryRow(ctx, c.q.head, threadID).Scan(&head)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("%w: thread %q", checkpoint.ErrNotFound, threadID)
		}
		if err != nil {
			return nil, err
		}
		if head == nil || *head == "" {
			return nil, fmt.Errorf("%w: thread %q has no checkpoints", checkpoint.ErrNotFound, threadID)
		}
		checkpointID = *head
	}
	var (
		seq, step, created, count int64
		parent                    *string
		meta                      []byte
	)
	err := tx.QueryRow(ctx, c.q.target, threadID, checkpointID).Scan(&seq, &parent, &step, &created, &meta, &count)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: thread %q has no checkpoint %q", checkpoint.ErrNotFound, threadID, checkpointID)
	}
	if err != nil {
		return nil, err
	}
	where := fmt.Sprintf("thread %q checkpoint %q", threadID, checkpointID)
	snap := &checkpoint.Snapshot{Info: checkpoint.Info{ThreadID: threadID, ID: checkpointID, Step: int(step), CreatedAt: dbtime.Decode(created)}}
	if parent != nil {
		snap.ParentID = *parent
	}
	if snap.Meta, err = cpcodec.CheckJSON(meta, where+" meta"); err != nil {
		return nil, err
	}
	if count < 0 || count > 1<<28 {
		return nil, cpcodec.Corrupt(where, fmt.Errorf("message count %d", count))
	}

	args := []any{seq}
	b := tx.Batch(ctx, Query{c.d.ChainInfo, args}, Query{c.d.Messages, args}, Query{c.d.Files, args}, Query{c.d.Values, args})
	defer b.Close()

	// The chain must end at a root. A plan that older versions wrote in a
	// column of its own comes from its newest writer (legacyDepth
	// checkpoints above the target), and becomes the value it is now.
	var (
		rootOK      bool
		legacy      []byte
		legacyDepth *int64
	)
	if err := b.QueryRow().Scan(&rootOK, &legacy, &legacyDepth); err != nil {
		return nil, err
	}
	if !rootOK {
		return nil, cpcodec.Corrupt(where, errors.New("its ancestry is broken (a parent checkpoint is missing)"))
	}
	legacyValue, err := cpcodec.CheckJSON(legacy, where+" todos")
	if err != nil {
		return nil, err
	}

	// Messages: exactly one row per position 0..count-1.
	snap.Messages = make([]llm.Message, count)
	rows, err := b.Query()
	if err != nil {
		return nil, err
	}
	var (
		next, pos int64
		data      sql.RawBytes // the driver's memory where it can, valid until the next row
		dest      = []any{&pos, &data}
	)
	err = each(rows, func() error {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		if pos != next || next >= count {
			return cpcodec.Corrupt(where, fmt.Errorf("message %d is missing or duplicated", next))
		}
		next++
		return cpcodec.DecodeMessage(data, &snap.Messages[pos], fmt.Sprintf("%s message %d", where, pos))
	})
	if err != nil {
		return nil, err
	}
	if next != count {
		return nil, cpcodec.Corrupt(where, fmt.Errorf("%d of %d messages found", next, count))
	}

	rows, err = b.Query()
	if err != nil {
		return nil, err
	}
	snap.Files, err = cpcodec.AssembleFiles(func(yield func(cpcodec.FileRow) bool) error {
		defer rows.Close()
		var (
			r       cpcodec.FileRow
			content []byte
			c, m    *int64
			dest    = []any{&r.Path, &r.Deleted, &content, &c, &m, &r.Appended}
		)
		for rows.Next() {
			r = cpcodec.FileRow{}
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			r.Data.Content = string(content)
			if c != nil {
				r.Data.CreatedAt = dbtime.Decode(*c)
			}
			if m != nil {
				r.Data.ModifiedAt = dbtime.Decode(*m)
			}
			if !yield(r) {
				break
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}

	snap.Values = map[string]json.RawMessage{}
	rows, err = b.Query()
	if err != nil {
		return nil, err
	}
	var (
		key      string
		depth    int64
		value    []byte
		valueRow = []any{&key, &value, &depth}
		// legacyShadowed: a value of the legacy plan's key is newer
		// than the plan's column (or as new: a checkpoint has only one).
		legacyShadowed bool
	)
	err = each(rows, func() error {
		if err := rows.Scan(valueRow...); err != nil {
			return err
		}
		if key == checkpoint.LegacyTodosValue && legacyDepth != nil && depth <= *legacyDepth {
			legacyShadowed = true
		}
		if value == nil {
			return nil // deleted
		}
		v, err := cpcodec.CheckJSON(value, fmt.Sprintf("%s value %q", where, key))
		if err != nil {
			return err
		}
		snap.Values[key] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	if legacyValue != nil && !legacyShadowed && string(legacyValue) != "null" {
		snap.Values[checkpoint.LegacyTodosValue] = legacyValue
	}
	return snap, b.Close()
}

// listLimit is the row limit of a list: opts.Limit, or none (the
// dialect's value for no limit).
func (c *Core) listLimit(opts checkpoint.ListOptions) any {
	if opts.Limit > 0 {
		return opts.Limit
	}
	return c.d.NoLimit
}

// History implements [checkpoint.Saver.History].
func (c *Core) History(ctx context.Context, threadID string, opts checkpoint.ListOptions) (_ []checkpoint.Info, err error) {
	ctx, done, err := c.start(ctx)
	if err != nil {
		return nil, err
	}
	defer done(&err)
	limit := c.listLimit(opts)
	b := c.conn.Reader.Batch(ctx, Query{c.q.threadExists, []any{threadID}},
		Query{c.q.history, []any{threadID, limit, max(opts.Offset, 0)}})
	defer b.Close()
	var exists bool
	if err := b.QueryRow().Scan(&exists); err != nil {
		return nil, c.d.Wrap("history", err)
	}
	if !exists {
		return nil, fmt.Errorf("%w: thread %q", checkpoint.ErrNotFound, threadID)
	}
	rows, err := b.Query()
	if err != nil {
		return nil, c.d.Wrap("history", err)
	}
	defer rows.Close()
	var (
		out           []checkpoint.Info
		in            checkpoint.Info
		parent        *string
		step, created int64
		meta          []byte
		dest          = []any{&in.ID, &parent, &step, &created, &meta}
	)
	for rows.Next() {
		in = checkpoint.Info{ThreadID: threadID}
		if err := rows.Scan(dest...); err != nil {
			return nil, c.d.Wrap("history", err)
		}
		if parent != nil {
			in.ParentID = *parent
		}
		in.Step, in.CreatedAt = int(step), dbtime.Decode(created)
		if in.Meta, err = cpcodec.CheckJSON(meta, fmt.Sprintf("thread %q checkpoint %q meta", threadID, in.ID)); err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, c.d.Wrap("history", rows.Err())
}

func scanThread(row Row) (checkpoint.Thread, error) {
	var th checkpoint.Thread
	var meta []byte
	var status string
	var created, updated int64
	var head *string
	if err := row.Scan(&th.ID, &meta, &status, &created, &updated, &head); err != nil {
		return th, err
	}
	var err error
	if th.Metadata, err = cpcodec.CheckJSON(meta, fmt.Sprintf("thread %q metadata", th.ID)); err != nil {
		return th, err
	}
	th.Status = checkpoint.Status(status)
	th.CreatedAt, th.UpdatedAt = dbtime.Decode(created), dbtime.Decode(updated)
	if head != nil {
		th.Head = *head
	}
	return th, nil
}

// Threads implements [checkpoint.Saver.Threads].
func (c *Core) Threads(ctx context.Context, opts checkpoint.ListOptions) (_ []checkpoint.Thread, err error) {
	ctx, done, err := c.start(ctx)
	if err != nil {
		return nil, err
	}
	defer done(&err)
	limit := c.listLimit(opts)
	q, args := c.d.ListThreads(opts, limit, max(opts.Offset, 0))
	rows, err := c.conn.Reader.Query(ctx, q, args...)
	if err != nil {
		return nil, c.d.Wrap("threads", err)
	}
	defer rows.Close()
	var out []checkpoint.Thread
	for rows.Next() {
		th, err := scanThread(rows)
		if err != nil {
			return nil, c.d.Wrap("threads", err)
		}
		out = append(out, th)
	}
	return out, c.d.Wrap("threads", rows.Err())
}

// Thread implements [checkpoint.Saver.Thread].
func (c *Core) Thread(ctx context.Context, threadID string) (_ *checkpoint.Thread, err error) {
	ctx, done, err := c.start(ctx)
	if err != nil {
		return nil, err
	}
	defer done(&err)
	q, args := c.d.GetThread(threadID)
	th, err := scanThread(c.conn.Reader.QueryRow(ctx, q, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: thread %q", checkpoint.ErrNotFound, threadID)
	}
	if err != nil {
		return nil, c.d.Wrap("thread", err)
	}
	return &th, nil
}

// DeleteThread implements [checkpoint.Saver.DeleteThread].
func (c *Core) DeleteThread(ctx context.Context, threadID string) (err error) {
	ctx, done, err := c.start(ctx)
	if err != nil {
		return err
	}
	defer done(&err)
	if len(c.d.DeleteThread) == 1 {
		_, err = c.conn.Writer.Exec(ctx, c.d.DeleteThread[0], threadID)
		return c.d.Wrap("delete thread", err)
	}
	tx, err := c.conn.BeginWrite(ctx)
	if err != nil {
		return c.d.Wrap("delete thread", err)
	}
	defer tx.Rollback()
	for _, q := range c.d.DeleteThread {
		if _, err := tx.Exec(ctx, q, threadID); err != nil {
			return c.d.Wrap("delete thread", err)
		}
	}
	return c.d.Wrap("delete thread", tx.Commit())
}
