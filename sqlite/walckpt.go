package sqlite

import (
	"context"
	"database/sql"
	"log/slog"
	"sync"
	"sync/atomic"
)

// A commit appends the pages it changed to the write-ahead log and returns:
// that is what makes a Put survive the process being killed. Copying them
// back into the database file (a WAL checkpoint) is another matter, and
// SQLite does it by default inside the commit that takes the log past 1,000
// pages, with an fsync of the log and one of the database: a few
// milliseconds every hundred or so steps, which in a long run was half the
// time spent in Put. Here a goroutine of the DB does it instead, on a
// connection of its own, while the run goes on: PASSIVE checkpoints, which
// never hold up a writer.
//
// The log starts over from its beginning only when a write finds it all
// copied back, which a checkpoint running beside a busy writer seldom
// achieves: alone, the goroutine would let the log grow for good. So once
// the log holds walSafetyPages, the next Put copies back, before its own
// transaction, whatever the goroutine has not (waiting for a checkpoint of
// the goroutine that is under way, never running beside one), and its
// commit then starts the log over: a Put pays a checkpoint once every few
// thousand pages instead of every thousand, and most of the copying is
// done. SQLite's own checkpoint stays on, at four times that size, in case
// neither runs (writes other than Puts do not count pages).
//
// Durability is unchanged: a Put returns after its commit, as before, and
// the log is synced before any of its pages overwrite the database file
// (with SyncFull, every commit is synced as well).

// Variables so that tests can lower them.
var (
	// walKickPages is the estimated number of log pages after which the
	// goroutine checkpoints: SQLite's default for its own checkpoints.
	walKickPages int64 = 1000
	// walSafetyPages is the log size at which a Put restarts the log.
	walSafetyPages = 4 * walKickPages
)

// walAutoPages is SQLite's own checkpoint threshold on the writer.
func walAutoPages() int64 { return 4 * walSafetyPages }

// walCheckpointer checkpoints the log in the background.
type walCheckpointer struct {
	db    *sql.DB // a connection of its own
	log   *slog.Logger
	pages atomic.Int64 // estimated pages logged since the last kick
	// sinceRestart is the estimated pages logged since a Put last
	// restarted the log: the restart does not wait for the goroutine to
	// notice the log's size, which a busy machine may delay.
	sinceRestart atomic.Int64
	// mu is held by whoever runs a checkpoint, the goroutine or a Put.
	mu      sync.Mutex
	restart atomic.Bool // the log reached walSafetyPages: the next Put restarts it
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	runs    atomic.Int64 // checkpoints run: for tests
}

func startWALCheckpointer(db *sql.DB, log *slog.Logger) *walCheckpointer {
	c := &walCheckpointer{db: db, log: log, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

// wrote records that a commit logged about pages pages, and wakes the
// goroutine when enough have been.
func (c *walCheckpointer) wrote(pages int) {
	if c.sinceRestart.Add(int64(pages)) >= walSafetyPages {
		c.restart.Store(true)
	}
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
		c.mu.Lock()
		// A context that is never cancelled: the driver watches a
		// cancellable one with a goroutine per statement.
		logged, err := walCheckpoint(func(dest ...any) error {
			return c.db.QueryRowContext(context.Background(), walCheckpointSQL).Scan(dest...)
		})
		c.runs.Add(1)
		c.mu.Unlock()
		if err != nil {
			c.log.Debug("sqlite: background WAL checkpoint", "err", err)
		}
		if logged >= walSafetyPages {
			c.restart.Store(true)
		}
	}
}

// beforeWrite runs on the writer connection before a Put's transaction:
// when the log is due to start over, it copies back what is left, so that
// the transaction's commit starts the log over. ckpt runs the checkpoint
// statement there.
func (c *walCheckpointer) beforeWrite(ckpt func(dest ...any) error) {
	if !c.restart.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.restart.Swap(false) {
		return
	}
	if _, err := walCheckpoint(ckpt); err != nil {
		c.log.Debug("sqlite: WAL checkpoint before a Put", "err", err)
	}
	c.sinceRestart.Store(0)
	c.runs.Add(1)
}

const walCheckpointSQL = `PRAGMA wal_checkpoint(PASSIVE)`

// walCheckpoint runs walCheckpointSQL through scan and returns how many
// pages the log held.
func walCheckpoint(scan func(dest ...any) error) (logged int64, err error) {
	var busy, copied int64
	err = scan(&busy, &logged, &copied)
	return logged, err
}

// close stops the goroutine and closes its connection.
func (c *walCheckpointer) close() error {
	close(c.stop)
	<-c.done
	return c.db.Close()
}

// logPages estimates the log pages a commit writes: a page for each b-tree
// it touches (the checkpoint and its two indexes, the messages and their
// index, a file and its index, the thread and its index, the database
// header) and the pages its data fills.
func logPages(dataBytes int) int { return 10 + dataBytes/3500 }
