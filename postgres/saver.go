package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/sqlcore"
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
	now := time.Now()
	r, err := sqlcore.EncodeCheckpoint(cp, now)
	if err != nil {
		return err
	}
	msgs := r.Messages
	if msgs == nil {
		msgs = [][]byte{}
	}
	n := len(r.Files)
	paths := make([]string, 0, n)
	contents := make([][]byte, 0, n)
	fcreated := make([]*int64, 0, n)
	fmodified := make([]*int64, 0, n)
	fappended := make([]bool, 0, n)
	for i := range r.Files {
		f := &r.Files[i]
		paths, contents, fappended = append(paths, f.Path), append(contents, f.Content), append(fappended, f.Appended)
		fcreated, fmodified = append(fcreated, nullable(&f.Created)), append(fmodified, nullable(&f.Modified))
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
		cp.ThreadID, cp.ID, parent, int64(cp.Step), r.Created, cp.Keep, cp.Keep+len(cp.Messages),
		[]byte(nil), nilIfNil(cp.Meta), // todos: the legacy column, no longer written (see checkpoint.LegacyTodosValue)
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

// nullable is n as pgx takes it in an array: nil for NULL.
func nullable(n *sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}

// nilIfNil converts a RawMessage to []byte keeping nil as nil (SQL NULL).
func nilIfNil(b json.RawMessage) []byte {
	if b == nil {
		return nil
	}
	return []byte(b)
}

// Load implements [checkpoint.Saver]. It reads in one repeatable-read,
// read-only transaction, sending its reads of the ancestry as one batch.
func (s *Saver) Load(ctx context.Context, threadID, checkpointID string) (*checkpoint.Snapshot, error) {
	return s.db.core.Load(ctx, threadID, checkpointID)
}

// History implements [checkpoint.Saver].
func (s *Saver) History(ctx context.Context, threadID string, opts checkpoint.ListOptions) ([]checkpoint.Info, error) {
	return s.db.core.History(ctx, threadID, opts)
}

// Threads implements [checkpoint.Saver]. A busy thread whose run no longer
// holds its advisory lock (the process died) is reported with status error.
func (s *Saver) Threads(ctx context.Context, opts checkpoint.ListOptions) ([]checkpoint.Thread, error) {
	return s.db.core.Threads(ctx, opts)
}

// Thread implements [checkpoint.Saver].
func (s *Saver) Thread(ctx context.Context, threadID string) (*checkpoint.Thread, error) {
	return s.db.core.Thread(ctx, threadID)
}

// DeleteThread implements [checkpoint.Saver]. A lease on the deleted
// thread stays valid (and keeps other runs out until released); its
// Release then changes nothing.
func (s *Saver) DeleteThread(ctx context.Context, threadID string) error {
	return s.db.core.DeleteThread(ctx, threadID)
}

// DB returns the database the Saver belongs to.
func (s *Saver) DB() *DB { return s.db }
