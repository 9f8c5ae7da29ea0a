package sqlite

import (
	"context"
	"database/sql"
	"log/slog"
	"sync/atomic"
)

// A commit appends the pages it changed to the write-ahead log and returns:
// that is what makes a Put survive the process being killed. Copying them
// back into the database file (a WAL checkpoint) is another matter, and
// SQLite does it by default inside the commit that takes the log past 1,000
// pages, with an fsync of the log and one of the database: a few
// milliseconds every hundred or so steps, which in a long run was half the
// time spent in Put. Here a goroutine of the DB does it instead, on a
// connection of its own, while the run goes on (PASSIVE: it never holds up
// a writer). The writer keeps SQLite's own checkpoint as a safety net, at
// ten times the usual size, for when the goroutine falls behind or cannot
// finish (PASSIVE copies only what no reader still needs).
//
// Durability is unchanged: a Put returns after its commit, as before, and
// the log is synced before any of its pages overwrite the database file
// (with SyncFull, every commit is synced as well).

// Variables so that tests can lower them.
var (
	// walKickPages is the estimated number of log pages after which the
	// goroutine checkpoints: SQLite's default for its own checkpoints.
	walKickPages int64 = 1000
	// walSafetyPages is the writer's own checkpoint threshold.
	walSafetyPages = 10 * walKickPages
)

// walCheckpointer checkpoints the log in the background.
type walCheckpointer struct {
	db    *sql.DB // a connection of its own
	log   *slog.Logger
	pages atomic.Int64 // estimated pages logged since the last kick
	kick  chan struct{}
	stop  chan struct{}
	done  chan struct{}
	runs  atomic.Int64 // checkpoints run: for tests
}

func startWALCheckpointer(db *sql.DB, log *slog.Logger) *walCheckpointer {
	c := &walCheckpointer{db: db, log: log, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

// wrote records that a commit logged about pages pages, and wakes the
// goroutine when enough have been.
func (c *walCheckpointer) wrote(pages int) {
	if c.pages.Add(int64(pages)) < walKickPages {
		return
	}
	c.pages.Store(0)
	select {
	case c.kick <- struct{}{}:
	default: // already woken
	}
}

func (c *walCheckpointer) loop() {
	defer close(c.done)
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		var busy, logged, copied int64
		// A context that is never cancelled: the driver watches a
		// cancellable one with a goroutine per statement.
		err := c.db.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logged, &copied)
		c.runs.Add(1)
		if err != nil {
			c.log.Debug("sqlite: background WAL checkpoint", "err", err)
		}
	}
}

// close stops the goroutine and closes its connection.
func (c *walCheckpointer) close() error {
	close(c.stop)
	<-c.done
	return c.db.Close()
}

// logPages estimates the log pages a commit writes: a page for each b-tree
// it touches (the checkpoint, its two indexes, the messages, the thread and
// its index, the database header) and the pages its data fills.
func logPages(dataBytes int) int { return 7 + dataBytes/3500 }
