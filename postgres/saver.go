package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/internal/cpcodec"
	"github.com/deepagents-go/deepagents/internal/dbtime"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/thread"
)

// Saver is the [checkpoint.Saver] of a [DB]. The layout is the sqlite
// package's: a row per checkpoint, per appended message and per changed
// file or value, so a run of N steps stores O(N) bytes; Load walks the
// ancestry with a recursive query.
type Saver struct{ db *DB }

var _ checkpoint.Saver = (*Saver)(nil)

// Put implements [checkpoint.Saver]. The checkpoint and all its rows are
// written by a single statement, one round trip; Put returns after the
// commit, which the server makes durable unless it runs with
// synchronous_commit=off. A zero cp.CreatedAt is set to the current time.
func (s *Saver) Put(ctx context.Context, cp *checkpoint.Checkpoint) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx, done := s.db.bound(ctx)
	defer done(&err)
	if err := cp.Validate(); err != nil {
		return err
	}
	now := time.Now()
	if cp.CreatedAt.IsZero() {
		cp.CreatedAt = now
	}
	created, err := dbtime.Encode(cp.CreatedAt)
	if err != nil {
		return fmt.Errorf("%w: created_at: %v", checkpoint.ErrInvalid, err)
	}
	msgs, err := cpcodec.EncodeMessages(cp.Messages)
	if err != nil {
		return err
	}
	if msgs == nil {
		msgs = [][]byte{}
	}
	n := len(cp.Files) + len(cp.Appends)
	paths := make([]string, 0, n)
	contents := make([][]byte, 0, n)
	fcreated := make([]*int64, 0, n)
	fmodified := make([]*int64, 0, n)
	fappended := make([]bool, 0, n)
	addFile := func(p string, f *thread.FileData, appended bool) error {
		paths, fappended = append(paths, p), append(fappended, appended)
		if f == nil {
			contents, fcreated, fmodified = append(contents, nil), append(fcreated, nil), append(fmodified, nil)
			return nil
		}
		c, err1 := nullableNanos(f.CreatedAt)
		m, err2 := nullableNanos(f.ModifiedAt)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("%w: file %q: %v", checkpoint.ErrInvalid, p, err)
		}
		contents = append(contents, append(make([]byte, 0, len(f.Content)), f.Content...))
		fcreated, fmodified = append(fcreated, c), append(fmodified, m)
		return nil
	}
	for p, f := range cp.Files {
		if err := addFile(p, f, false); err != nil {
			return err
		}
	}
	for p, f := range cp.Appends {
		if err := addFile(p, &f, true); err != nil {
			return err
		}
	}
	keys := make([]string, 0, len(cp.Values))
	vals := make([][]byte, 0, len(cp.Values))
	for k, v := range cp.Values {
		keys, vals = append(keys, k), append(vals, nilIfNil(v))
	}
	var parent *string
	if cp.ParentID != "" {
		parent = &cp.ParentID
	}
	var seq int64
	err = s.db.pool.QueryRow(ctx, s.db.sql.put,
		cp.ThreadID, cp.ID, parent, int64(cp.Step), created, cp.Keep, cp.Keep+len(cp.Messages),
		nilIfNil(cp.Todos), nilIfNil(cp.Meta),
		msgs, paths, contents, fcreated, fmodified, keys, vals, now.UnixNano(), fappended).Scan(&seq)
	if err == nil {
		return nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return wrap("put", err)
	}
	// Refused: find out why.
	var parentCount *int
	var dup bool
	if err := s.db.pool.QueryRow(ctx, s.db.sql.putWhy, cp.ThreadID, cp.ID, parent).Scan(&parentCount, &dup); err != nil {
		return wrap("put", err)
	}
	switch {
	case dup:
		return fmt.Errorf("%w: thread %q already has checkpoint %q", checkpoint.ErrConflict, cp.ThreadID, cp.ID)
	case parent != nil && parentCount == nil:
		return fmt.Errorf("%w: thread %q has no checkpoint %q", checkpoint.ErrConflict, cp.ThreadID, cp.ParentID)
	case parentCount != nil && cp.Keep > *parentCount:
		return fmt.Errorf("%w: keep %d but parent %q has %d messages", checkpoint.ErrInvalid, cp.Keep, cp.ParentID, *parentCount)
	}
	return fmt.Errorf("postgres: put: checkpoint %q was not written", cp.ID)
}

func nullableNanos(t time.Time) (*int64, error) {
	if t.IsZero() {
		return nil, nil
	}
	n, err := dbtime.Encode(t)
	return &n, err
}

// nilIfNil converts a RawMessage to []byte keeping nil as nil (SQL NULL).
func nilIfNil(b json.RawMessage) []byte {
	if b == nil {
		return nil
	}
	return []byte(b)
}

// Load implements [checkpoint.Saver]. It reads in one repeatable-read,
// read-only transaction, sending its queries as one batch.
func (s *Saver) Load(ctx context.Context, threadID, checkpointID string) (_ *checkpoint.Snapshot, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx, done := s.db.bound(ctx)
	defer done(&err)
	tx, err := s.db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, wrap("load", err)
	}
	defer tx.Rollback(context.Background())
	snap, err := s.load(ctx, tx, threadID, checkpointID)
	if err != nil {
		return nil, wrap("load", err)
	}
	return snap, nil
}

func (s *Saver) load(ctx context.Context, tx pgx.Tx, threadID, checkpointID string) (*checkpoint.Snapshot, error) {
	q := &s.db.sql
	if checkpointID == "" {
		var head *string
		err := tx.QueryRow(ctx, q.head, threadID).Scan(&head)
		if errors.Is(err, pgx.ErrNoRows) {
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
		seq, created int64
		step         int64
		count        int
		parent       *string
		meta         []byte
	)
	err := tx.QueryRow(ctx, q.target, threadID, checkpointID).Scan(&seq, &parent, &step, &created, &meta, &count)
	if errors.Is(err, pgx.ErrNoRows) {
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

	b := &pgx.Batch{}
	b.Queue(q.chainInfo, seq)
	b.Queue(q.msgs, seq)
	b.Queue(q.files, seq)
	b.Queue(q.values, seq)
	br := tx.SendBatch(ctx, b)
	defer br.Close()

	var rootOK bool
	var todos []byte
	if err := br.QueryRow().Scan(&rootOK, &todos); err != nil {
		return nil, err
	}
	if !rootOK {
		return nil, cpcodec.Corrupt(where, errors.New("its ancestry is broken (a parent checkpoint is missing)"))
	}
	if snap.Todos, err = cpcodec.CheckJSON(todos, where+" todos"); err != nil {
		return nil, err
	}

	snap.Messages = make([]llm.Message, count)
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	next := 0
	for rows.Next() {
		var pos int32
		var data []byte
		if err := rows.Scan(&pos, &data); err != nil {
			rows.Close()
			return nil, err
		}
		if int(pos) != next || next >= count {
			rows.Close()
			return nil, cpcodec.Corrupt(where, fmt.Errorf("message %d is missing or duplicated", next))
		}
		if err := cpcodec.DecodeMessage(data, &snap.Messages[pos], fmt.Sprintf("%s message %d", where, pos)); err != nil {
			rows.Close()
			return nil, err
		}
		next++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if next != count {
		return nil, cpcodec.Corrupt(where, fmt.Errorf("%d of %d messages found", next, count))
	}

	rows, err = br.Query()
	if err != nil {
		return nil, err
	}
	snap.Files, err = cpcodec.AssembleFiles(func(yield func(cpcodec.FileRow) bool) error {
		defer rows.Close()
		for rows.Next() {
			var r cpcodec.FileRow
			var content []byte
			var c, m *int64
			if err := rows.Scan(&r.Path, &r.Deleted, &content, &c, &m, &r.Appended); err != nil {
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
		rows.Close()
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}

	snap.Values = map[string]json.RawMessage{}
	rows, err = br.Query()
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var key string
		var data []byte
		if err := rows.Scan(&key, &data); err != nil {
			rows.Close()
			return nil, err
		}
		if data == nil {
			continue // deleted
		}
		v, err := cpcodec.CheckJSON(data, fmt.Sprintf("%s value %q", where, key))
		if err != nil {
			rows.Close()
			return nil, err
		}
		snap.Values[key] = v
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return snap, br.Close()
}

// History implements [checkpoint.Saver].
func (s *Saver) History(ctx context.Context, threadID string, opts checkpoint.ListOptions) (_ []checkpoint.Info, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx, done := s.db.bound(ctx)
	defer done(&err)
	var limit *int
	if opts.Limit > 0 {
		limit = &opts.Limit
	}
	b := &pgx.Batch{}
	b.Queue(s.db.sql.threadExists, threadID)
	b.Queue(s.db.sql.history, threadID, limit, max(opts.Offset, 0))
	br := s.db.pool.SendBatch(ctx, b)
	defer br.Close()
	var exists bool
	if err := br.QueryRow().Scan(&exists); err != nil {
		return nil, wrap("history", err)
	}
	if !exists {
		return nil, fmt.Errorf("%w: thread %q", checkpoint.ErrNotFound, threadID)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, wrap("history", err)
	}
	defer rows.Close()
	var out []checkpoint.Info
	for rows.Next() {
		in := checkpoint.Info{ThreadID: threadID}
		var parent *string
		var step, created int64
		var meta []byte
		if err := rows.Scan(&in.ID, &parent, &step, &created, &meta); err != nil {
			return nil, wrap("history", err)
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
	return out, wrap("history", rows.Err())
}

func scanThread(row pgx.Row) (checkpoint.Thread, error) {
	var th checkpoint.Thread
	var meta *string
	var status string
	var created, updated int64
	var head *string
	if err := row.Scan(&th.ID, &meta, &status, &created, &updated, &head); err != nil {
		return th, err
	}
	if meta != nil {
		th.Metadata = json.RawMessage(*meta)
	}
	th.Status = checkpoint.Status(status)
	th.CreatedAt, th.UpdatedAt = dbtime.Decode(created), dbtime.Decode(updated)
	if head != nil {
		th.Head = *head
	}
	return th, nil
}

// Threads implements [checkpoint.Saver]. A busy thread whose run no longer
// holds its advisory lock (the process died) is reported with status error.
func (s *Saver) Threads(ctx context.Context, opts checkpoint.ListOptions) (_ []checkpoint.Thread, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx, done := s.db.bound(ctx)
	defer done(&err)
	var limit *int
	if opts.Limit > 0 {
		limit = &opts.Limit
	}
	var rows pgx.Rows
	if opts.Status != "" {
		rows, err = s.db.pool.Query(ctx, s.db.sql.threadsByStatus, limit, max(opts.Offset, 0), opts.TopLevel, string(opts.Status))
	} else {
		rows, err = s.db.pool.Query(ctx, s.db.sql.threads, limit, max(opts.Offset, 0), opts.TopLevel)
	}
	if err != nil {
		return nil, wrap("threads", err)
	}
	defer rows.Close()
	var out []checkpoint.Thread
	for rows.Next() {
		th, err := scanThread(rows)
		if err != nil {
			return nil, wrap("threads", err)
		}
		out = append(out, th)
	}
	return out, wrap("threads", rows.Err())
}

// Thread implements [checkpoint.Saver].
func (s *Saver) Thread(ctx context.Context, threadID string) (_ *checkpoint.Thread, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx, done := s.db.bound(ctx)
	defer done(&err)
	th, err := scanThread(s.db.pool.QueryRow(ctx, s.db.sql.thread, threadID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: thread %q", checkpoint.ErrNotFound, threadID)
	}
	if err != nil {
		return nil, wrap("thread", err)
	}
	return &th, nil
}

// DeleteThread implements [checkpoint.Saver]. A lease on the deleted
// thread stays valid (and keeps other runs out until released); its
// Release then changes nothing.
func (s *Saver) DeleteThread(ctx context.Context, threadID string) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx, done := s.db.bound(ctx)
	defer done(&err)
	_, err = s.db.pool.Exec(ctx, s.db.sql.deleteThread, threadID)
	return wrap("delete thread", err)
}

// DB returns the database the Saver belongs to.
func (s *Saver) DB() *DB { return s.db }
