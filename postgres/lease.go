package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/deepagents-go/deepagents/checkpoint"
)

// Acquire implements [checkpoint.Saver].
//
// The hold is a session-level advisory lock (pg_try_advisory_lock on a
// 64-bit hash of the schema and the thread ID) taken on a dedicated
// connection that the lease keeps open until Release. PostgreSQL releases
// the lock when that session ends, so when the holding process dies in any
// way (kill -9, a crash, its machine going away) the thread frees itself
// as soon as the server notices the connection closed: at once for a
// killed process, whose kernel closes the socket; within about 25 seconds
// for a vanished machine, thanks to TCP keepalives set on the session. A
// second Acquire, from any process on any machine, fails with
// checkpoint.ErrBusy while the lock is held. The thread row records
// status busy and the holder (for the error message); a busy thread whose
// lock is gone reads as status error.
//
// Each held lease costs one server connection, outside the pool. The
// locks need session semantics: a transaction-pooling proxy (PgBouncer in
// transaction mode) in front of the server would break them.
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
		return nil, errors.New("postgres: acquire: database is closed")
	}
	conn, err := pgx.ConnectConfig(ctx, db.lockConf)
	if err != nil {
		return nil, wrap("acquire", err)
	}
	fail := func(err error) (checkpoint.Lease, error) {
		_ = conn.Close(context.Background())
		return nil, err
	}
	key := db.lockKey(threadID)
	var locked bool
	var ignore [3]string
	if err := conn.QueryRow(ctx, db.sql.lockThread, key).Scan(&locked, &ignore[0], &ignore[1], &ignore[2]); err != nil {
		return fail(wrap("acquire", err))
	}
	if !locked {
		var owner *string
		_ = conn.QueryRow(ctx, db.sql.leaseOwner, threadID).Scan(&owner)
		if owner != nil {
			return fail(fmt.Errorf("%w: thread %q is held by %s", checkpoint.ErrBusy, threadID, *owner))
		}
		return fail(fmt.Errorf("%w: thread %q", checkpoint.ErrBusy, threadID))
	}
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	l := &lease{db: db, conn: conn, key: key, threadID: threadID, token: hex.EncodeToString(tok[:]),
		stop: make(chan struct{}), done: make(chan struct{})}
	var meta any
	if metadata != nil {
		meta = string(metadata)
	}
	// Not cancelled midway: a cancelled statement may still commit, and
	// the connection closed at once leaves the thread marked busy while
	// the server lets go of its lock a moment later, so that another run
	// finds it busy meanwhile. Once marked, the hold is returned, and a
	// cancelled run releases it as any other.
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), acquireTimeout)
	_, err = conn.Exec(uctx, db.sql.acquireUpsert, threadID, meta, time.Now().UnixNano(), key, l.token, db.self.String())
	cancel()
	if err != nil {
		return fail(wrap("acquire", err))
	}
	db.leases.Add(l)
	go l.monitor()
	return l, nil
}

// acquireTimeout bounds the statement that marks a thread held.
const acquireTimeout = 10 * time.Second

type lease struct {
	db       *DB
	conn     *pgx.Conn // holds the advisory lock; used by monitor, then by Release
	key      int64
	threadID string
	token    string
	stop     chan struct{}
	done     chan struct{}

	mu       sync.Mutex
	released bool
}

// ThreadID returns the thread held: a database's Close logs it when the
// release fails.
func (l *lease) ThreadID() string { return l.threadID }

// monitor pings the lock's connection until Release, which keeps the
// session from idling out and notices if it broke (the lock is then lost).
func (l *lease) monitor() {
	defer close(l.done)
	t := time.NewTicker(l.db.opts.LeaseCheck)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := l.conn.Ping(ctx)
		cancel()
		if err != nil {
			l.db.log.Warn("postgres: lease lost: its connection broke, another run may take the thread", "thread", l.threadID, "err", err)
			return
		}
	}
}

// Release implements [checkpoint.Lease]: it records the status, unlocks
// and closes the lease's connection. It changes nothing if the thread was
// deleted meanwhile, and fails (wrapping checkpoint.ErrBusy) if the lease
// was lost with its connection. Releasing twice is harmless.
func (l *lease) Release(ctx context.Context, status checkpoint.Status) error {
	if err := checkpoint.ValidateRelease(status); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return nil
	}
	l.released = true
	close(l.stop)
	<-l.done
	defer func() {
		_ = l.conn.Close(context.Background())
		l.db.leases.Remove(l)
	}()
	tag, err := l.conn.Exec(ctx, l.db.sql.release, l.threadID, string(status), time.Now().UnixNano(), l.token)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("postgres: release: %w: the lease on thread %q was lost with its connection: %v", checkpoint.ErrBusy, l.threadID, err)
	}
	var lost error
	if tag.RowsAffected() == 0 {
		var token *string
		err := l.conn.QueryRow(ctx, l.db.sql.releaseToken, l.threadID).Scan(&token)
		if err == nil && token != nil {
			lost = fmt.Errorf("postgres: release: %w: thread %q was taken over by another run", checkpoint.ErrBusy, l.threadID)
		}
	}
	if _, err := l.conn.Exec(ctx, l.db.sql.unlock, l.key); err != nil {
		return wrap("release", err) // closing the connection unlocks anyway
	}
	return lost
}
