package sqlite

import (
	"context"
	"errors"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/sqlcore"
)

// Saver is the [checkpoint.Saver] of a [DB].
//
// Each Put writes one checkpoints row, one row per appended message and one
// per changed file or value, so a run of N steps stores O(N) bytes. Load
// walks the checkpoint's ancestry with a recursive query and reads, for each
// message position, the row of the newest ancestor that wrote it and that no
// later ancestor cut off (see Delta.Keep); for each file and value, the
// newest ancestor's row.
type Saver struct{ db *DB }

var _ checkpoint.Saver = (*Saver)(nil)

// Put implements [checkpoint.Saver]. It returns after the transaction has
// committed: with the default options the checkpoint then survives the
// process being killed; with Options.SyncFull, a power loss too. A zero
// cp.CreatedAt is set to the current time. ctx is checked before the Put
// starts; once begun, a Put runs to its end (waiting at most
// Options.BusyTimeout for another process's write).
func (s *Saver) Put(ctx context.Context, cp *checkpoint.Checkpoint) error {
	return s.PutBatch(ctx, []*checkpoint.Checkpoint{cp})
}

var _ checkpoint.BatchPutter = (*Saver)(nil)

// PutBatch implements [checkpoint.BatchPutter]: the checkpoints are
// written in order in one transaction, so that a run whose steps come
// faster than commits pays one commit for several. It returns, like Put,
// after the commit; nothing of the batch is saved when it fails.
func (s *Saver) PutBatch(ctx context.Context, cps []*checkpoint.Checkpoint) error {
	if err := ctx.Err(); err != nil || len(cps) == 0 {
		return err
	}
	now := time.Now()
	rows := make([]sqlcore.CheckpointRows, len(cps))
	n := 0
	for i, cp := range cps {
		var err error
		if rows[i], err = sqlcore.EncodeCheckpoint(cp, now); err != nil {
			return err
		}
		n += rowsSize(&rows[i])
	}
	ts := now.UnixNano()
	conn, err := s.db.w.Conn(ctx)
	if err != nil {
		return wrap("put", err)
	}
	defer conn.Close()
	p := &s.db.put
	err = conn.Raw(func(dc any) error {
		if err := p.prepare(dc); err != nil {
			return err
		}
		s.db.ckpt.beforeWrite(func(dest ...any) error { return p.scanRow(p.walCheckpoint, dest...) })
		return p.inTx(func() error {
			for i := range rows {
				if err := p.insert(&rows[i]); err != nil {
					return err
				}
			}
			// The thread rows, at each thread's last checkpoint: upserts in
			// order, skipped where the next checkpoint is of the same thread.
			for i, cp := range cps {
				if i+1 < len(cps) && cps[i+1].ThreadID == cp.ThreadID {
					continue
				}
				if _, err := p.exec(p.thread, cp.ThreadID, ts, ts, cp.ID); err != nil {
					return err
				}
			}
			return nil
		})
	})
	if err == nil {
		s.db.ckpt.wrote(logPages(n))
		return nil
	}
	if errors.Is(err, checkpoint.ErrConflict) || errors.Is(err, checkpoint.ErrInvalid) {
		return err
	}
	return wrap("put", err)
}

// rowsSize is about how many bytes r adds to the log.
func rowsSize(r *sqlcore.CheckpointRows) int {
	n := 0
	for _, m := range r.Messages {
		n += len(m)
	}
	for _, f := range r.Files {
		n += len(f.Content)
	}
	return n
}

// nullBytes maps nil to SQL NULL and anything else to a BLOB (never NULL,
// even when empty).
func nullBytes(b []byte) any {
	if b == nil {
		return nil
	}
	if len(b) == 0 {
		return []byte{}
	}
	return []byte(b)
}

// Load implements [checkpoint.Saver]. It reads in one read transaction,
// which sees one snapshot while writes go on.
func (s *Saver) Load(ctx context.Context, threadID, checkpointID string) (*checkpoint.Snapshot, error) {
	return s.db.core.Load(ctx, threadID, checkpointID)
}

// History implements [checkpoint.Saver].
func (s *Saver) History(ctx context.Context, threadID string, opts checkpoint.ListOptions) ([]checkpoint.Info, error) {
	return s.db.core.History(ctx, threadID, opts)
}

// Threads implements [checkpoint.Saver]. A busy thread whose lease expired
// (its run died or hangs) is reported with status error.
func (s *Saver) Threads(ctx context.Context, opts checkpoint.ListOptions) ([]checkpoint.Thread, error) {
	return s.db.core.Threads(ctx, opts)
}

// Thread implements [checkpoint.Saver].
func (s *Saver) Thread(ctx context.Context, threadID string) (*checkpoint.Thread, error) {
	return s.db.core.Thread(ctx, threadID)
}

// DeleteThread implements [checkpoint.Saver]. A lease on the deleted thread
// stays valid; its Release then changes nothing.
func (s *Saver) DeleteThread(ctx context.Context, threadID string) error {
	return s.db.core.DeleteThread(ctx, threadID)
}

// DB returns the database the Saver belongs to.
func (s *Saver) DB() *DB { return s.db }
