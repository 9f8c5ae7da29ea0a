package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/internal/dbtime"
	"github.com/deepagents-go/deepagents/internal/procinfo"
)

// Acquire implements [checkpoint.Saver].
//
// The hold is a lease row on the thread: a random token, the holder's
// identity (machine, PID and process start time, see internal/procinfo) and
// an expiry that a heartbeat goroutine pushes forward every LeaseTTL/3. A
// second Acquire fails with checkpoint.ErrBusy unless the holder is gone:
//
//   - a holder on this machine (same host, boot and PID namespace) is gone
//     when its PID no longer runs, is a zombie, or belongs to a process
//     started at another time; this is checked directly, so after kill -9
//     the next Acquire succeeds at once, while a live holder keeps the
//     thread however long it runs;
//   - a holder on another machine is gone when its lease expired, at most
//     LeaseTTL after it stopped renewing (clocks must roughly agree).
//
// Metadata is recorded only when the thread is created.
func (s *Saver) Acquire(ctx context.Context, threadID string, metadata json.RawMessage) (checkpoint.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkpoint.ValidateID("thread id", threadID); err != nil {
		return nil, err
	}
	if err := checkpoint.ValidateMetadata(metadata); err != nil {
		return nil, err
	}
	db := s.db
	if db.leases.Closed() {
		return nil, errors.New("sqlite: acquire: database is closed")
	}
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	l := &lease{db: db, threadID: threadID, token: hex.EncodeToString(tok[:]), stop: make(chan struct{}), done: make(chan struct{})}

	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, wrap("acquire", err)
	}
	defer tx.Rollback()
	var (
		token, host, start sql.NullString
		pid, expires       sql.NullInt64
	)
	err = tx.QueryRowContext(ctx, `SELECT lease_token, lease_host, lease_pid, lease_start, lease_expires FROM threads WHERE thread_id = ?`,
		threadID).Scan(&token, &host, &pid, &start, &expires)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, wrap("acquire", err)
	}
	now := time.Now()
	if token.Valid {
		holder := procinfo.Owner{Host: host.String, PID: int(pid.Int64), Start: start.String}
		switch {
		case holder.Host == db.self.Host:
			if !procinfo.Dead(db.self, holder) {
				return nil, fmt.Errorf("%w: thread %q is held by %v", checkpoint.ErrBusy, threadID, holder)
			}
			db.log.Info("sqlite: taking over the thread of a dead process", "thread", threadID, "holder", holder.String())
		case expires.Valid && expires.Int64 > now.UnixNano():
			return nil, fmt.Errorf("%w: thread %q is held by %v (lease until %v)", checkpoint.ErrBusy, threadID, holder,
				dbtime.Decode(expires.Int64).Format(time.RFC3339))
		default:
			db.log.Info("sqlite: taking over the thread of an expired lease", "thread", threadID, "holder", holder.String())
		}
	}
	ts := now.UnixNano()
	_, err = tx.ExecContext(ctx, `INSERT INTO threads
		(thread_id, metadata, status, created_at, updated_at, lease_token, lease_host, lease_pid, lease_start, lease_expires)
		VALUES (?, ?, 'busy', ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (thread_id) DO UPDATE SET status = 'busy', updated_at = excluded.updated_at,
			lease_token = excluded.lease_token, lease_host = excluded.lease_host, lease_pid = excluded.lease_pid,
			lease_start = excluded.lease_start, lease_expires = excluded.lease_expires`,
		threadID, nullBytes(metadata), ts, ts, l.token, db.self.Host, db.self.PID, db.self.Start, ts+int64(db.opts.LeaseTTL))
	if err != nil {
		return nil, wrap("acquire", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, wrap("acquire", err)
	}
	db.leases.Add(l)
	go l.heartbeat(l.stop, l.done)
	return l, nil
}

type lease struct {
	db       *DB
	threadID string
	token    string
	stop     chan struct{} // closed to end the heartbeat
	done     chan struct{} // closed when the heartbeat ended

	mu       sync.Mutex
	released bool
}

// ThreadID returns the thread held: a database's Close logs it when the
// release fails.
func (l *lease) ThreadID() string { return l.threadID }

// heartbeat pushes the lease's expiry forward until Release.
func (l *lease) heartbeat(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	ttl := l.db.opts.LeaseTTL
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), ttl/3)
		res, err := l.db.w.ExecContext(ctx, `UPDATE threads SET lease_expires = ? WHERE thread_id = ? AND lease_token = ?`,
			time.Now().Add(ttl).UnixNano(), l.threadID, l.token)
		cancel()
		if err != nil {
			l.db.log.Warn("sqlite: lease heartbeat failed", "thread", l.threadID, "err", err)
			continue
		}
		if n, _ := res.RowsAffected(); n == 0 {
			l.db.log.Warn("sqlite: lease lost (the thread was deleted or taken over)", "thread", l.threadID)
			return
		}
	}
}

// Release implements [checkpoint.Lease]. It changes nothing if the thread
// was deleted meanwhile, and fails with an error wrapping
// checkpoint.ErrBusy if another run took the thread over. Releasing twice
// is harmless.
func (l *lease) Release(ctx context.Context, status checkpoint.Status) error {
	if err := checkpoint.ValidateRelease(status); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return nil
	}
	// Stop the heartbeat first so that it cannot renew a released lease (or
	// report it lost); restart it if the release fails.
	close(l.stop)
	<-l.done
	lost, err := l.release(ctx, status)
	if err != nil {
		l.stop, l.done = make(chan struct{}), make(chan struct{})
		go l.heartbeat(l.stop, l.done)
		return err
	}
	l.released = true
	l.db.leases.Remove(l)
	return lost
}

// release ends the hold in the database. lost reports a takeover.
func (l *lease) release(ctx context.Context, status checkpoint.Status) (lost, err error) {
	tx, err := l.db.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, wrap("release", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE threads SET status = ?, updated_at = ?,
		lease_token = NULL, lease_host = NULL, lease_pid = NULL, lease_start = NULL, lease_expires = NULL
		WHERE thread_id = ? AND lease_token = ?`, string(status), time.Now().UnixNano(), l.threadID, l.token)
	if err != nil {
		return nil, wrap("release", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var token sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT lease_token FROM threads WHERE thread_id = ?`, l.threadID).Scan(&token)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, wrap("release", err)
		}
		if token.Valid {
			lost = fmt.Errorf("sqlite: release: %w: thread %q was taken over by another run", checkpoint.ErrBusy, l.threadID)
		}
	}
	return lost, wrap("release", tx.Commit())
}
