package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/internal/procinfo"
	"github.com/deepagents-go/deepagents/sqlcore"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// SchemaVersion is the newest schema this package knows. Open refuses a
// database whose schema is newer (checkpoint.ErrSchemaVersion) and upgrades
// an older one.
const SchemaVersion = 3

// Options tune a database. The zero value is a sound default.
type Options struct {
	// SyncFull makes every commit fsync the write-ahead log, so a Put that
	// returned survives a power loss or an OS crash too. Without it (the
	// default, synchronous=NORMAL) a Put that returned survives the process
	// being killed at any moment, but the last commits before a power loss
	// may roll back.
	SyncFull bool
	// BusyTimeout is how long a write waits for another process's write
	// lock before failing. Zero means 10 seconds.
	BusyTimeout time.Duration
	// LeaseTTL is how long a run's hold on a thread lasts without a
	// heartbeat; the holder renews it every third of that. It matters only
	// when the holder runs on another machine (see Saver.Acquire). Zero
	// means 15 seconds.
	LeaseTTL time.Duration
	// ReadConns caps the read connections. Zero means max(4, GOMAXPROCS).
	ReadConns int
	// Logger receives warnings (a lost lease, a failed heartbeat). Nil
	// means slog.Default().
	Logger *slog.Logger
}

// DB is one SQLite database file holding both checkpoints ([DB.Saver]) and a
// cross-thread store ([DB.Store]). It is safe for concurrent use, and other
// processes may open the same file at the same time.
type DB struct {
	path  string
	w     *sql.DB // exactly one connection: all writes, serialised
	r     *sql.DB // read pool
	opts  Options
	log   *slog.Logger
	self  procinfo.Owner
	saver *Saver
	store *Store

	leases sqlcore.Leases // held by this DB, released on Close

	put  putConn          // Saver.Put's statements on the writer connection
	ckpt *walCheckpointer // copies the write-ahead log back, in the background
	core *sqlcore.Core    // the operations shared with the postgres package
}

// Open opens (creating if needed) the SQLite database at path, a file
// system path, and brings its schema up to date. The file is created with
// mode 0600; its directory must exist. opts may be nil.
func Open(ctx context.Context, path string, opts *Options) (*DB, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("sqlite: open %q: want a file system path (for an in-memory saver use checkpoint.MemorySaver)", path)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 10 * time.Second
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 15 * time.Second
	}
	if o.ReadConns <= 0 {
		o.ReadConns = max(4, runtime.GOMAXPROCS(0))
	}
	db := &DB{opts: o, log: o.Logger, self: procinfo.Self()}
	if db.log == nil {
		db.log = slog.Default()
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %q: %w", path, err)
	}
	db.path = abs
	switch err := checkExisting(abs); {
	case errors.Is(err, fs.ErrNotExist):
		if err := create(ctx, abs); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	}

	sync := "NORMAL"
	if o.SyncFull {
		sync = "FULL"
	}
	busy := strconv.FormatInt(o.BusyTimeout.Milliseconds(), 10)
	w := url.Values{}
	w.Add("_pragma", "busy_timeout("+busy+")")
	w.Add("_pragma", "journal_mode(WAL)")
	w.Add("_pragma", "synchronous("+sync+")")
	w.Add("_pragma", "foreign_keys(0)")
	// The background checkpointer copies the log back; the writer does it
	// only when that falls far behind (see walckpt.go).
	w.Add("_pragma", "wal_autocheckpoint("+strconv.FormatInt(walAutoPages(), 10)+")")
	w.Set("_txlock", "immediate")
	db.w, err = sql.Open("sqlite", dsn(abs, w))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %q: %w", path, err)
	}
	db.w.SetMaxOpenConns(1)
	db.w.SetMaxIdleConns(1)
	db.w.SetConnMaxLifetime(0)
	db.w.SetConnMaxIdleTime(0)

	r := url.Values{}
	r.Add("_pragma", "busy_timeout("+busy+")")
	r.Add("_pragma", "query_only(1)")
	db.r, err = sql.Open("sqlite", dsn(abs, r))
	if err != nil {
		_ = db.w.Close()
		return nil, fmt.Errorf("sqlite: open %q: %w", path, err)
	}
	db.r.SetMaxOpenConns(o.ReadConns)
	db.r.SetMaxIdleConns(o.ReadConns)

	if err := migrate(ctx, db.w, db.path); err != nil {
		_ = db.w.Close()
		_ = db.r.Close()
		return nil, err
	}
	c := url.Values{}
	c.Add("_pragma", "busy_timeout("+busy+")")
	cdb, err := sql.Open("sqlite", dsn(abs, c))
	if err != nil {
		_ = db.w.Close()
		_ = db.r.Close()
		return nil, fmt.Errorf("sqlite: open %q: %w", path, err)
	}
	cdb.SetMaxOpenConns(1)
	cdb.SetMaxIdleConns(1)
	db.ckpt = startWALCheckpointer(cdb, db.log)
	db.core = sqlcore.New(dialect, sqlcore.StdConn(db.r, db.w, &sql.TxOptions{ReadOnly: true}))
	db.saver = &Saver{db: db}
	db.store = &Store{db: db}
	return db, nil
}

// ErrNotDatabase reports a file at the database path that is not a SQLite
// database: Open refuses it rather than start a new database in its place.
var ErrNotDatabase = errors.New("sqlite: not a database")

// sqliteHeader opens every SQLite database file.
const sqliteHeader = "SQLite format 3\x00"

// checkExisting refuses a file at path that is not a SQLite database: an
// empty file (unless its write-ahead log holds the database, as after a
// crash before the first checkpoint) or one without SQLite's header. A
// missing file is an error wrapping fs.ErrNotExist.
func checkExisting(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err != nil {
		return fmt.Errorf("sqlite: open %q: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("sqlite: open %q: %w", path, err)
	}
	if fi.IsDir() {
		return fmt.Errorf("%w: %s is a directory", ErrNotDatabase, path)
	}
	if fi.Size() == 0 {
		if wal, err := os.Stat(path + "-wal"); err == nil && wal.Size() > 0 {
			return nil
		}
		return fmt.Errorf("%w: %s exists but is empty; remove it to start a new database there, or choose another path", ErrNotDatabase, path)
	}
	head := make([]byte, len(sqliteHeader))
	if _, err := io.ReadFull(f, head); err != nil || string(head) != sqliteHeader {
		return fmt.Errorf("%w: %w: %s is not a SQLite database (it does not start with SQLite's header)", ErrNotDatabase, checkpoint.ErrCorrupt, path)
	}
	return nil
}

// create makes a new database at path, private to the user (mode 0600; SQLite
// gives the -wal and -shm files the same mode). The database is built in a
// temporary file and linked into place whole, so that path never holds an
// empty file another opener could take for a foreign one, and two processes
// creating it at once end up with one database.
func create(ctx context.Context, path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new-*")
	if err != nil {
		return fmt.Errorf("sqlite: create %q: %w", path, err)
	}
	name := tmp.Name()
	_ = tmp.Close()
	defer os.Remove(name)
	q := url.Values{}
	q.Add("_pragma", "journal_mode(DELETE)")
	conn, err := sql.Open("sqlite", dsn(name, q))
	if err != nil {
		return fmt.Errorf("sqlite: create %q: %w", path, err)
	}
	err = migrate(ctx, conn, path)
	if cerr := conn.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Link(name, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("sqlite: create %q: %w", path, err)
	}
	return nil
}

func dsn(path string, q url.Values) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	if !strings.HasPrefix(u.Path, "/") {
		u.Path = "/" + u.Path
	}
	// url.URL writes "file:///abs"; SQLite accepts an empty authority.
	return u.String()
}

// Path returns the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Saver returns the checkpoint saver of the database. Close the database
// (DB.Close), not the Saver, when done.
func (db *DB) Saver() *Saver { return db.saver }

// Store returns the cross-thread store of the database.
func (db *DB) Store() *Store { return db.store }

// Close ends the leases still held through this DB as if released with
// checkpoint.StatusError, then closes the database. Calling it again does
// nothing.
func (db *DB) Close() error {
	if !db.leases.Close(db.opts.BusyTimeout, db.log, "sqlite") {
		return nil
	}
	cerr := db.ckpt.close()
	// Not ctx, which releasing the leases may have used up: statements
	// left unfinalized would keep the writer open after Close.
	if conn, err := db.w.Conn(context.Background()); err == nil {
		_ = conn.Raw(func(dc any) error { db.put.close(dc); return nil })
		_ = conn.Close()
	}
	return errors.Join(cerr, db.w.Close(), db.r.Close())
}

// Checkpoint copies the write-ahead log into the database file and
// truncates the log (PRAGMA wal_checkpoint(TRUNCATE)). A background
// goroutine copies the log back as it grows; call this before measuring or
// copying the file.
func (db *DB) Checkpoint(ctx context.Context) error {
	// The writer connection first, then the background checkpoint's lock
	// (the order a Put takes them in): a TRUNCATE while that checkpoint
	// copies would find the log busy and do nothing, without an error.
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return wrap("wal checkpoint", err)
	}
	defer conn.Close()
	db.ckpt.mu.Lock()
	defer db.ckpt.mu.Unlock()
	_, err = conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	return wrap("wal checkpoint", err)
}

func migrations() ([]sqlcore.Migration, error) { return dialect.Migrations(migrationFS, nil) }

// migrate checks the schema version of the database w at path and applies
// what is missing, in one write transaction so that concurrent openers do
// not race.
func migrate(ctx context.Context, w *sql.DB, path string) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return wrap("open", err)
	}
	defer tx.Rollback()
	err = dialect.Migrate(ctx, sqlcore.StdTx(tx), ms, SchemaVersion, func(v int) error {
		return fmt.Errorf("%w: %s has schema version %d; this program supports up to %d", checkpoint.ErrSchemaVersion, path, v, SchemaVersion)
	})
	if err != nil {
		return err
	}
	return wrap("open", tx.Commit())
}

// wrap adds context to a database error and turns SQLite's corruption
// codes into checkpoint.ErrCorrupt. Context errors pass through unchanged
// (wrapped) so that errors.Is(err, context.Canceled) holds.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var se *msqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("sqlite: %s: %w: %v", op, checkpoint.ErrCorrupt, err)
		}
	}
	return fmt.Errorf("sqlite: %s: %w", op, err)
}

// Size returns the bytes the database takes on disk: the file, its
// write-ahead log and shared-memory index.
func (db *DB) Size(ctx context.Context) (int64, error) {
	var total int64
	for _, p := range []string{db.path, db.path + "-wal", db.path + "-shm"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("sqlite: size: %w", err)
		}
		total += fi.Size()
	}
	return total, nil
}

// Vacuum gives the space of deleted threads back to the file system: it
// copies the write-ahead log into the file and rebuilds the file without
// its free pages (VACUUM). It needs as much free disk as the database
// takes, and other writers wait while it runs.
func (db *DB) Vacuum(ctx context.Context) error {
	if err := db.Checkpoint(ctx); err != nil {
		return err
	}
	if _, err := db.w.ExecContext(ctx, "VACUUM"); err != nil {
		return wrap("vacuum", err)
	}
	return db.Checkpoint(ctx)
}
