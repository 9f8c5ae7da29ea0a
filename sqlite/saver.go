package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/internal/cpcodec"
	"github.com/deepagents-go/deepagents/internal/dbtime"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/thread"
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
	rows := make([]checkpointRows, len(cps))
	n := 0
	for i, cp := range cps {
		if err := cp.Validate(); err != nil {
			return err
		}
		if cp.CreatedAt.IsZero() {
			cp.CreatedAt = now
		}
		var err error
		if rows[i], err = encodeCheckpoint(cp); err != nil {
			return err
		}
		n += rows[i].size()
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

// checkpointRows is a checkpoint encoded into the values of its rows,
// outside the write transaction.
type checkpointRows struct {
	cp      *checkpoint.Checkpoint
	created int64
	msgs    [][]byte
	files   []fileRow
}

type fileRow struct {
	path              string
	deleted, appended bool
	content           []byte
	created, modified any
}

func encodeCheckpoint(cp *checkpoint.Checkpoint) (checkpointRows, error) {
	r := checkpointRows{cp: cp}
	var err error
	if r.created, err = dbtime.Encode(cp.CreatedAt); err != nil {
		return r, fmt.Errorf("%w: created_at: %v", checkpoint.ErrInvalid, err)
	}
	if r.msgs, err = cpcodec.EncodeMessages(cp.Messages); err != nil {
		return r, err
	}
	r.files = make([]fileRow, 0, len(cp.Files)+len(cp.Appends))
	addFile := func(p string, f *thread.FileData, appended bool) error {
		fr := fileRow{path: p, deleted: f == nil, appended: appended}
		if f != nil {
			fr.content = []byte(f.Content)
			var err error
			if fr.created, err = dbtime.EncodeNullable(f.CreatedAt); err == nil {
				fr.modified, err = dbtime.EncodeNullable(f.ModifiedAt)
			}
			if err != nil {
				return fmt.Errorf("%w: file %q: %v", checkpoint.ErrInvalid, p, err)
			}
		}
		r.files = append(r.files, fr)
		return nil
	}
	for p, f := range cp.Files {
		if err := addFile(p, f, false); err != nil {
			return r, err
		}
	}
	for p, f := range cp.Appends {
		if err := addFile(p, &f, true); err != nil {
			return r, err
		}
	}
	return r, nil
}

// size is about how many bytes the rows add to the log.
func (r *checkpointRows) size() int {
	n := 0
	for _, m := range r.msgs {
		n += len(m)
	}
	for _, f := range r.files {
		n += len(f.content)
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

// chainCTE walks the ancestry of checkpoint ?1 (a seq). lim is how many of
// a link's messages positions survive in the target's state: the smallest
// Keep among its descendants in the chain. Requiring c.seq < ch.seq makes
// the walk end even on corrupt data (a parent is always older).
const chainCTE = `WITH RECURSIVE chain (seq, parent_seq, keep, lim, depth) AS (
	SELECT seq, parent_seq, keep, msg_count, 0 FROM checkpoints WHERE seq = ?1
	UNION ALL
	SELECT c.seq, c.parent_seq, c.keep, min(ch.lim, ch.keep), ch.depth + 1
	FROM checkpoints c JOIN chain ch ON c.seq = ch.parent_seq AND c.seq < ch.seq
) `

// Load implements [checkpoint.Saver].
func (s *Saver) Load(ctx context.Context, threadID, checkpointID string) (*checkpoint.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tx, err := s.db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, wrap("load", err)
	}
	defer tx.Rollback()
	snap, err := load(ctx, tx, threadID, checkpointID)
	if err != nil {
		return nil, wrap("load", err)
	}
	return snap, nil
}

func load(ctx context.Context, tx *sql.Tx, threadID, checkpointID string) (*checkpoint.Snapshot, error) {
	if checkpointID == "" {
		var head sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT head FROM threads WHERE thread_id = ?`, threadID).Scan(&head)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("%w: thread %q", checkpoint.ErrNotFound, threadID)
		}
		if err != nil {
			return nil, err
		}
		if !head.Valid || head.String == "" {
			return nil, fmt.Errorf("%w: thread %q has no checkpoints", checkpoint.ErrNotFound, threadID)
		}
		checkpointID = head.String
	}
	var (
		seq, count int64
		created    int64
		parent     sql.NullString
		meta       []byte
		snap       = &checkpoint.Snapshot{Info: checkpoint.Info{ThreadID: threadID, ID: checkpointID}}
	)
	err := tx.QueryRowContext(ctx, `SELECT seq, parent_id, step, created_at, meta, msg_count FROM checkpoints
		WHERE thread_id = ? AND checkpoint_id = ?`, threadID, checkpointID).
		Scan(&seq, &parent, &snap.Step, &created, &meta, &count)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: thread %q has no checkpoint %q", checkpoint.ErrNotFound, threadID, checkpointID)
	}
	if err != nil {
		return nil, err
	}
	where := fmt.Sprintf("thread %q checkpoint %q", threadID, checkpointID)
	snap.ParentID = parent.String
	snap.CreatedAt = dbtime.Decode(created)
	if snap.Meta, err = cpcodec.CheckJSON(meta, where+" meta"); err != nil {
		return nil, err
	}

	// The chain must end at a root; todos come from its newest writer.
	var rootOK bool
	var todos []byte
	err = tx.QueryRowContext(ctx, chainCTE+`SELECT
		(SELECT parent_seq IS NULL FROM chain ORDER BY depth DESC LIMIT 1),
		(SELECT c.todos FROM chain ch JOIN checkpoints c ON c.seq = ch.seq WHERE c.todos IS NOT NULL ORDER BY ch.depth LIMIT 1)`,
		seq).Scan(&rootOK, &todos)
	if err != nil {
		return nil, err
	}
	if !rootOK {
		return nil, cpcodec.Corrupt(where, errors.New("its ancestry is broken (a parent checkpoint is missing)"))
	}
	if snap.Todos, err = cpcodec.CheckJSON(todos, where+" todos"); err != nil {
		return nil, err
	}

	// Messages: exactly one row per position 0..count-1.
	if count < 0 || count > 1<<28 {
		return nil, cpcodec.Corrupt(where, fmt.Errorf("message count %d", count))
	}
	snap.Messages = make([]llm.Message, count)
	rows, err := tx.QueryContext(ctx, chainCTE+`SELECT m.pos, m.data FROM chain ch
		JOIN messages m ON m.cp_seq = ch.seq AND m.pos >= ch.keep AND m.pos < ch.lim ORDER BY m.pos`, seq)
	if err != nil {
		return nil, err
	}
	next := int64(0)
	for rows.Next() {
		var pos int64
		var data sql.RawBytes
		if err := rows.Scan(&pos, &data); err != nil {
			rows.Close()
			return nil, err
		}
		if pos != next {
			rows.Close()
			return nil, cpcodec.Corrupt(where, fmt.Errorf("message %d is missing or duplicated", next))
		}
		if err := cpcodec.DecodeMessage(data, &snap.Messages[pos], fmt.Sprintf("%s message %d", where, pos)); err != nil {
			rows.Close()
			return nil, err
		}
		next++
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if next != count {
		return nil, cpcodec.Corrupt(where, fmt.Errorf("%d of %d messages found", next, count))
	}

	// Files: for each path, its newest rewrite or deletion in the chain and
	// the appends after it, oldest first.
	rows, err = tx.QueryContext(ctx, chainCTE+`, fr AS (
			SELECT f.path, f.content, f.created_at, f.modified_at, f.appended, ch.depth
			FROM chain ch JOIN files f ON f.cp_seq = ch.seq
		), base AS (SELECT path, min(depth) AS d FROM fr WHERE appended = 0 GROUP BY path)
		SELECT fr.path, fr.content IS NULL, fr.content, fr.created_at, fr.modified_at, fr.appended
		FROM fr LEFT JOIN base ON base.path = fr.path
		WHERE base.d IS NULL OR fr.depth <= base.d
		ORDER BY fr.path, fr.depth DESC`, seq)
	if err != nil {
		return nil, err
	}
	snap.Files, err = cpcodec.AssembleFiles(func(yield func(cpcodec.FileRow) bool) error {
		defer rows.Close()
		for rows.Next() {
			var r cpcodec.FileRow
			var content []byte
			var c, m sql.NullInt64
			if err := rows.Scan(&r.Path, &r.Deleted, &content, &c, &m, &r.Appended); err != nil {
				return err
			}
			r.Data = thread.FileData{Content: string(content),
				CreatedAt: dbtime.DecodeNullable(c.Int64, c.Valid), ModifiedAt: dbtime.DecodeNullable(m.Int64, m.Valid)}
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
	rows, err = tx.QueryContext(ctx, chainCTE+`SELECT v.key, v.data, min(ch.depth)
		FROM chain ch JOIN state_values v ON v.cp_seq = ch.seq GROUP BY v.key`, seq)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var key string
		var data []byte
		var depth int64
		if err := rows.Scan(&key, &data, &depth); err != nil {
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
	if err := rows.Close(); err != nil {
		return nil, err
	}
	return snap, rows.Err()
}

// History implements [checkpoint.Saver].
func (s *Saver) History(ctx context.Context, threadID string, opts checkpoint.ListOptions) ([]checkpoint.Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tx, err := s.db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, wrap("history", err)
	}
	defer tx.Rollback()
	var one int
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM threads WHERE thread_id = ?`, threadID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: thread %q", checkpoint.ErrNotFound, threadID)
	}
	if err != nil {
		return nil, wrap("history", err)
	}
	limit, offset := sqlPage(opts.Limit, opts.Offset)
	rows, err := tx.QueryContext(ctx, `SELECT checkpoint_id, parent_id, step, created_at, meta FROM checkpoints
		WHERE thread_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?`, threadID, limit, offset)
	if err != nil {
		return nil, wrap("history", err)
	}
	defer rows.Close()
	var out []checkpoint.Info
	for rows.Next() {
		in := checkpoint.Info{ThreadID: threadID}
		var parent sql.NullString
		var created int64
		var meta []byte
		if err := rows.Scan(&in.ID, &parent, &in.Step, &created, &meta); err != nil {
			return nil, wrap("history", err)
		}
		in.ParentID, in.CreatedAt = parent.String, dbtime.Decode(created)
		if in.Meta, err = cpcodec.CheckJSON(meta, fmt.Sprintf("thread %q checkpoint %q meta", threadID, in.ID)); err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, wrap("history", rows.Err())
}

// sqlPage turns ListOptions paging into SQLite's LIMIT and OFFSET (-1 is no
// limit).
func sqlPage(limit, offset int) (int, int) {
	if limit <= 0 {
		limit = -1
	}
	return limit, max(offset, 0)
}

// statusExpr is a thread's status as reported: a busy thread whose lease
// expired (its run died or hangs) reads as error.
const statusExpr = `CASE WHEN status = 'busy' AND (lease_expires IS NULL OR lease_expires < ?1) THEN 'error' ELSE status END`

const threadCols = `thread_id, metadata, ` + statusExpr + `, created_at, updated_at, head`

func scanThread(sc interface{ Scan(...any) error }) (checkpoint.Thread, error) {
	var th checkpoint.Thread
	var meta []byte
	var status string
	var created, updated int64
	var head sql.NullString
	if err := sc.Scan(&th.ID, &meta, &status, &created, &updated, &head); err != nil {
		return th, err
	}
	var err error
	if th.Metadata, err = cpcodec.CheckJSON(meta, fmt.Sprintf("thread %q metadata", th.ID)); err != nil {
		return th, err
	}
	th.Status = checkpoint.Status(status)
	th.CreatedAt, th.UpdatedAt = dbtime.Decode(created), dbtime.Decode(updated)
	th.Head = head.String
	return th, nil
}

// Threads implements [checkpoint.Saver].
func (s *Saver) Threads(ctx context.Context, opts checkpoint.ListOptions) ([]checkpoint.Thread, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit, offset := sqlPage(opts.Limit, opts.Offset)
	q := `SELECT ` + threadCols + ` FROM threads WHERE 1`
	args := []any{time.Now().UnixNano()}
	if opts.Status != "" {
		q += ` AND ` + statusExpr + ` = ?2`
		args = append(args, string(opts.Status))
	}
	if opts.TopLevel {
		q += ` AND instr(thread_id, '/') = 0` // not thread.IsChild
	}
	q += fmt.Sprintf(` ORDER BY updated_at DESC, thread_id LIMIT %d OFFSET %d`, limit, offset)
	rows, err := s.db.r.QueryContext(ctx, q, args...)
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
func (s *Saver) Thread(ctx context.Context, threadID string) (*checkpoint.Thread, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	th, err := scanThread(s.db.r.QueryRowContext(ctx, `SELECT `+threadCols+` FROM threads WHERE thread_id = ?2`,
		time.Now().UnixNano(), threadID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: thread %q", checkpoint.ErrNotFound, threadID)
	}
	if err != nil {
		return nil, wrap("thread", err)
	}
	return &th, nil
}

// DeleteThread implements [checkpoint.Saver]. A lease on the deleted thread
// stays valid; its Release then changes nothing.
func (s *Saver) DeleteThread(ctx context.Context, threadID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tx, err := s.db.w.BeginTx(ctx, nil)
	if err != nil {
		return wrap("delete thread", err)
	}
	defer tx.Rollback()
	for _, q := range []string{
		`DELETE FROM messages WHERE cp_seq IN (SELECT seq FROM checkpoints WHERE thread_id = ?)`,
		`DELETE FROM files WHERE cp_seq IN (SELECT seq FROM checkpoints WHERE thread_id = ?)`,
		`DELETE FROM state_values WHERE cp_seq IN (SELECT seq FROM checkpoints WHERE thread_id = ?)`,
		`DELETE FROM checkpoints WHERE thread_id = ?`,
		`DELETE FROM threads WHERE thread_id = ?`,
	} {
		if _, err := tx.ExecContext(ctx, q, threadID); err != nil {
			return wrap("delete thread", err)
		}
	}
	return wrap("delete thread", tx.Commit())
}

// DB returns the database the Saver belongs to.
func (s *Saver) DB() *DB { return s.db }
