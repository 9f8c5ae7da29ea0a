package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/sqlcore"
)

// putConn is Saver.Put's side of the single writer connection: its
// statements, prepared once on the driver's connection and run there
// directly. Going through database/sql cost a goroutine per transaction
// (to roll it back on cancellation) and the driver one per statement run
// with a cancellable context (to interrupt it), besides its own locking:
// together more than a quarter of a Put.
//
// Put checks its context before it starts and then runs to the end: a
// commit is short, and a checkpoint that was begun is better finished (a
// cancelled run saves its last step with a context of its own anyway). A
// busy database (another process writing) is waited for at most
// Options.BusyTimeout.
//
// It is used only inside sql.Conn.Raw on the writer connection, which holds
// that connection exclusively, so it needs no lock of its own.
type putConn struct {
	conn driver.Conn // the connection the statements belong to
	stmts
	args []driver.NamedValue // reused for each statement's arguments
}

type stmts struct {
	begin, commit, rollback, walCheckpoint                  driver.Stmt
	parent, checkpoint, child, message, file, value, thread driver.Stmt
}

// putSQL is the text of each statement, in the order of stmts' fields.
var putSQL = [...]string{
	`BEGIN IMMEDIATE`,
	`COMMIT`,
	`ROLLBACK`,
	walCheckpointSQL,
	`SELECT seq, msg_count FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?`,
	// A root.
	`INSERT INTO checkpoints
		(thread_id, checkpoint_id, parent_seq, parent_id, step, created_at, keep, msg_count, todos, meta)
		VALUES (?1, ?2, NULL, NULL, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (thread_id, checkpoint_id) DO NOTHING`,
	// A child: inserted only if its parent exists in the thread and has
	// at least keep messages (whyNotInserted tells which failed).
	`INSERT INTO checkpoints
		(thread_id, checkpoint_id, parent_seq, parent_id, step, created_at, keep, msg_count, todos, meta)
		SELECT ?1, ?2, p.seq, ?3, ?4, ?5, ?6, ?7, ?8, ?9 FROM checkpoints p
		WHERE p.thread_id = ?1 AND p.checkpoint_id = ?3 AND p.msg_count >= ?6
		ON CONFLICT (thread_id, checkpoint_id) DO NOTHING`,
	`INSERT INTO messages (cp_seq, pos, data) VALUES (?, ?, ?)`,
	// x'' keeps empty content apart from NULL (deleted): the driver binds
	// an empty slice as NULL.
	`INSERT INTO files (cp_seq, path, content, created_at, modified_at, appended)
		VALUES (?, ?, CASE WHEN ? THEN NULL ELSE coalesce(?, x'') END, ?, ?, ?)`,
	`INSERT INTO state_values (cp_seq, key, data) VALUES (?, ?, ?)`,
	`INSERT INTO threads (thread_id, status, created_at, updated_at, head)
		VALUES (?, 'idle', ?, ?, ?)
		ON CONFLICT (thread_id) DO UPDATE SET updated_at = excluded.updated_at, head = excluded.head`,
}

func (s *stmts) all() []*driver.Stmt {
	return []*driver.Stmt{&s.begin, &s.commit, &s.rollback, &s.walCheckpoint, &s.parent, &s.checkpoint, &s.child, &s.message, &s.file, &s.value, &s.thread}
}

// prepare makes sure the statements belong to dc, preparing them on first
// use and again when the writer connection was replaced (the old ones went
// with their connection).
func (p *putConn) prepare(dc any) error {
	conn, ok := dc.(driver.Conn)
	if !ok {
		return fmt.Errorf("driver connection %T", dc)
	}
	if p.conn == conn {
		return nil
	}
	p.conn, p.stmts = nil, stmts{}
	pc, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return fmt.Errorf("driver connection %T cannot prepare with a context", dc)
	}
	var st stmts
	for i, ptr := range st.all() {
		s, err := pc.PrepareContext(context.Background(), putSQL[i])
		if err != nil {
			for _, done := range st.all()[:i] {
				_ = (*done).Close()
			}
			return err
		}
		*ptr = s
	}
	p.conn, p.stmts = conn, st
	return nil
}

// close finalizes the statements if they belong to dc.
func (p *putConn) close(dc any) {
	if conn, ok := dc.(driver.Conn); !ok || conn != p.conn {
		return
	}
	for _, s := range p.all() {
		_ = (*s).Close()
	}
	p.conn, p.stmts = nil, stmts{}
}

// exec runs st with args.
func (p *putConn) exec(st driver.Stmt, args ...any) (driver.Result, error) {
	p.args = p.args[:0]
	for i, a := range args {
		p.args = append(p.args, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	return st.(driver.StmtExecContext).ExecContext(context.Background(), p.args)
}

// queryRow runs st with args and scans its first row into dest; it reports
// false when there is none.
func (p *putConn) queryRow(st driver.Stmt, dest []driver.Value, args ...any) (bool, error) {
	p.args = p.args[:0]
	for i, a := range args {
		p.args = append(p.args, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	rows, err := st.(driver.StmtQueryContext).QueryContext(context.Background(), p.args)
	if err != nil {
		return false, err
	}
	err = rows.Next(dest)
	cerr := rows.Close()
	switch {
	case err == io.EOF:
		return false, cerr
	case err != nil:
		return false, err
	}
	return true, cerr
}

// scanRow runs st and scans its first row's integers into dest.
func (p *putConn) scanRow(st driver.Stmt, dest ...any) error {
	row := make([]driver.Value, len(dest))
	found, err := p.queryRow(st, row)
	if err == nil && !found {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return err
	}
	for i, d := range dest {
		n, _ := row[i].(int64)
		*d.(*int64) = n
	}
	return nil
}

// insert writes one checkpoint's rows (not its thread's row).
func (p *putConn) insert(r *sqlcore.CheckpointRows) error {
	cp := r.CP
	insert := p.checkpoint
	if cp.ParentID != "" {
		insert = p.child // checks the parent too
	}
	res, err := p.exec(insert, cp.ThreadID, cp.ID, cp.ParentID, int64(cp.Step), r.Created,
		int64(cp.Keep), int64(cp.Keep+len(cp.Messages)), nil, nullBytes(cp.Meta)) // todos: the legacy column, no longer written (see checkpoint.LegacyTodosValue)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return p.whyNotInserted(cp)
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return err
	}
	for i, m := range r.Messages {
		if _, err := p.exec(p.message, seq, int64(cp.Keep+i), m); err != nil {
			return err
		}
	}
	for i := range r.Files {
		f := &r.Files[i]
		if _, err := p.exec(p.file, seq, f.Path, f.Deleted, f.Content, nullInt(f.Created), nullInt(f.Modified), f.Appended); err != nil {
			return err
		}
	}
	for k, v := range cp.Values {
		if _, err := p.exec(p.value, seq, k, nullBytes(v)); err != nil {
			return err
		}
	}
	return nil
}

// nullInt is n as the driver takes it: an int64, or nil for NULL.
func nullInt(n sql.NullInt64) any {
	if !n.Valid {
		return nil
	}
	return n.Int64
}

// inTx runs f between BEGIN IMMEDIATE and COMMIT, rolling back when f or
// the commit fails. When even the rollback fails, the connection's state is
// unknown: the error then says the connection is bad, so that database/sql
// replaces it.
func (p *putConn) inTx(f func() error) error {
	if _, err := p.exec(p.begin); err != nil {
		return err
	}
	err := f()
	if err == nil {
		if _, err = p.exec(p.commit); err == nil {
			return nil
		}
	}
	if _, rerr := p.exec(p.rollback); rerr != nil {
		// database/sql closes the connection; SQLite keeps a connection
		// whose statements are not finalized open (and its write lock
		// with it), so they go first.
		p.close(p.conn)
		return errors.Join(err, fmt.Errorf("%w: rollback: %v", driver.ErrBadConn, rerr))
	}
	return err
}

// whyNotInserted explains a checkpoint row that was not inserted: its
// parent is missing from the thread, has fewer than Keep messages, or the
// thread has the checkpoint already.
func (p *putConn) whyNotInserted(cp *checkpoint.Checkpoint) error {
	if cp.ParentID != "" {
		row := []driver.Value{nil, nil}
		found, err := p.queryRow(p.parent, row, cp.ThreadID, cp.ParentID)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("%w: thread %q has no checkpoint %q", checkpoint.ErrConflict, cp.ThreadID, cp.ParentID)
		}
		if count, _ := row[1].(int64); int64(cp.Keep) > count {
			return fmt.Errorf("%w: keep %d but parent %q has %d messages", checkpoint.ErrInvalid, cp.Keep, cp.ParentID, count)
		}
	}
	return fmt.Errorf("%w: thread %q already has checkpoint %q", checkpoint.ErrConflict, cp.ThreadID, cp.ID)
}
