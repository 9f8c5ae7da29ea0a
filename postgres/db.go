package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/internal/procinfo"
	"github.com/deepagents-go/deepagents/sqlcore"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// SchemaVersion is the newest schema this package knows. Open refuses a
// schema that is newer (checkpoint.ErrSchemaVersion) and upgrades an older
// one.
const SchemaVersion = 2

// DefaultSchema is the schema that holds the tables unless Options.Schema
// says otherwise.
const DefaultSchema = "deepagents"

// Options tune a DB. The zero value is a sound default.
type Options struct {
	// Schema holds the tables; it is created if missing. Empty means
	// DefaultSchema. Several independent deployments (or tests) can share
	// a database with a schema each.
	Schema string
	// Logger receives warnings (a lost lease). Nil means slog.Default().
	Logger *slog.Logger
	// LeaseCheck is how often a held lease pings its connection, which
	// also keeps it from idling out. Zero means 15 seconds.
	LeaseCheck time.Duration
	// ConnectTimeout bounds establishing a connection when the connection
	// string sets no connect_timeout. Zero means DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// StatementTimeout is the server's statement_timeout for the DB's
	// connections when the connection string sets none, and, with a few
	// seconds of grace, the longest any operation waits for the server:
	// a connection that freezes fails the operation with ErrTimeout
	// instead of hanging. Zero means DefaultStatementTimeout.
	StatementTimeout time.Duration
}

// Defaults of Options.
const (
	DefaultConnectTimeout   = 10 * time.Second
	DefaultStatementTimeout = 30 * time.Second
	// timeoutGrace is how much longer than the statement timeout (at most
	// the timeout again) an operation waits before giving up on the
	// server: enough for the server's own timeout error to arrive first
	// when it can.
	timeoutGrace = 5 * time.Second
)

// ErrTimeout reports an operation the server did not answer in time (see
// Options.StatementTimeout): a frozen connection, a partition, a server
// too busy to answer.
var ErrTimeout = errors.New("postgres: the server did not answer in time")

// errTimedOut is the cause of an operation's own deadline.
var errTimedOut = errors.New("postgres: operation deadline")

// bound limits one operation to the statement timeout plus grace. Call the
// returned function, with the operation's error, when the operation ends:
// it turns a deadline of bound's own into ErrTimeout.
func (db *DB) bound(ctx context.Context) (context.Context, func(*error)) {
	d := db.opts.StatementTimeout + min(timeoutGrace, db.opts.StatementTimeout)
	ctx, cancel := context.WithTimeoutCause(ctx, d, errTimedOut)
	return ctx, func(errp *error) {
		if *errp != nil && errors.Is(context.Cause(ctx), errTimedOut) {
			*errp = fmt.Errorf("%w: no answer within %s: %v", ErrTimeout, d, *errp)
		}
		cancel()
	}
}

func (o *Options) setDefaults() {
	if o.Schema == "" {
		o.Schema = DefaultSchema
	}
	if o.LeaseCheck <= 0 {
		o.LeaseCheck = 15 * time.Second
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.StatementTimeout <= 0 {
		o.StatementTimeout = DefaultStatementTimeout
	}
}

// DB holds checkpoints ([DB.Saver]) and a cross-thread store ([DB.Store])
// in a PostgreSQL schema, through a connection pool. It is safe for
// concurrent use by many goroutines and many processes on many machines.
type DB struct {
	pool     *pgxpool.Pool
	ownPool  bool
	schema   string // as given
	q        string // quoted, for SQL text
	opts     Options
	log      *slog.Logger
	self     procinfo.Owner
	lockConf *pgx.ConnConfig // for the dedicated connections of leases
	sql      queries
	core     *sqlcore.Core // the operations shared with the sqlite package
	saver    *Saver
	store    *Store

	leases sqlcore.Leases // held by this DB, released on Close
}

// Open connects to the PostgreSQL server at connString (a URL such as
// postgres://user@host:5432/db?sslmode=disable, or key=value pairs), and
// creates or upgrades the schema. opts may be nil.
func Open(ctx context.Context, connString string, opts *Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	o.setDefaults()
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = o.ConnectTimeout
	}
	if _, set := cfg.ConnConfig.RuntimeParams["statement_timeout"]; !set {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(o.StatementTimeout.Milliseconds(), 10)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	db, err := newDB(ctx, pool, true, opts)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

// New uses an existing pool, which DB.Close leaves open. The pool must not
// sit behind a transaction-pooling proxy (see Saver.Acquire).
func New(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*DB, error) {
	return newDB(ctx, pool, false, opts)
}

func newDB(ctx context.Context, pool *pgxpool.Pool, own bool, opts *Options) (*DB, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.setDefaults()
	if strings.IndexByte(o.Schema, 0) >= 0 || len(o.Schema) > 63 {
		return nil, fmt.Errorf("postgres: invalid schema name %q", o.Schema)
	}
	db := &DB{pool: pool, ownPool: own, schema: o.Schema, q: pgx.Identifier{o.Schema}.Sanitize(), opts: o,
		log: o.Logger, self: procinfo.Self()}
	if db.log == nil {
		db.log = slog.Default()
	}
	db.lockConf = pool.Config().ConnConfig.Copy()
	if db.lockConf.RuntimeParams == nil {
		db.lockConf.RuntimeParams = map[string]string{}
	}
	db.lockConf.RuntimeParams["application_name"] = "deepagents-lease"
	db.sql = buildQueries(db.q)
	if err := db.migrate(ctx); err != nil {
		return nil, err
	}
	db.core = sqlcore.New(db.dialect(), db.conn())
	db.saver = &Saver{db: db}
	db.store = &Store{db: db}
	return db, nil
}

// Schema returns the schema holding the tables.
func (db *DB) Schema() string { return db.schema }

// Pool returns the connection pool.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Saver returns the checkpoint saver. Its Close closes the whole DB.
func (db *DB) Saver() *Saver { return db.saver }

// Store returns the cross-thread store.
func (db *DB) Store() *Store { return db.store }

// Close ends the leases still held through this DB as if released with
// checkpoint.StatusError, then closes the pool if Open made it. Calling it
// again does nothing.
func (db *DB) Close() error {
	if !db.leases.Close(10*time.Second, db.log, "postgres") {
		return nil
	}
	if db.ownPool {
		db.pool.Close()
	}
	return nil
}

// lockKey is the advisory lock key of a name in the DB's schema.
func (db *DB) lockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(db.schema))
	h.Write([]byte{0})
	h.Write([]byte(name))
	return int64(h.Sum64())
}

// migrate creates the schema if needed, checks its version and applies
// what is missing, in one transaction under an advisory lock so that
// concurrent openers do not race.
func (db *DB) migrate(ctx context.Context) error {
	d := db.dialect()
	ms, err := d.Migrations(migrationFS, func(sql string) string { return strings.ReplaceAll(sql, "{{schema}}", db.q) })
	if err != nil {
		return err
	}
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return wrap("open", err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, db.lockKey("\x00migrate")); err != nil {
		return wrap("open", err)
	}
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, db.schema).Scan(&exists); err != nil {
		return wrap("open", err)
	}
	if !exists {
		if _, err := tx.Exec(ctx, `CREATE SCHEMA `+db.q); err != nil {
			return wrap("create schema", err)
		}
	}
	err = d.Migrate(ctx, querier{tx}, ms, SchemaVersion, func(v int) error {
		return fmt.Errorf("%w: schema %s has version %d; this program supports up to %d", checkpoint.ErrSchemaVersion, db.schema, v, SchemaVersion)
	})
	if err != nil {
		return err
	}
	return wrap("open", tx.Commit(ctx))
}

// wrap adds context to a database error and turns PostgreSQL's corruption
// codes into checkpoint.ErrCorrupt.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && strings.HasPrefix(pe.Code, "XX00") && pe.Code != "XX000" {
		return fmt.Errorf("postgres: %s: %w: %v", op, checkpoint.ErrCorrupt, err)
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}

// Size returns the bytes the DB's tables take on the server, their
// indexes and TOAST data included.
func (db *DB) Size(ctx context.Context) (n int64, err error) {
	ctx, done := db.bound(ctx)
	defer done(&err)
	err = db.pool.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
		FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
		WHERE ns.nspname = $1 AND c.relkind = 'r'`, db.schema).Scan(&n)
	return n, wrap("size", err)
}

// Vacuum runs VACUUM (ANALYZE) on the DB's tables, so that the space of
// deleted threads is reused. It does not lock the tables against other
// processes, and so does not shrink them on disk either (VACUUM FULL, which
// would, locks them; run it yourself when nothing else uses the schema).
func (db *DB) Vacuum(ctx context.Context) error {
	rows, err := db.pool.Query(ctx, `SELECT c.relname FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
		WHERE ns.nspname = $1 AND c.relkind = 'r'`, db.schema)
	if err != nil {
		return wrap("vacuum", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return wrap("vacuum", err)
	}
	for _, t := range tables {
		if _, err := db.pool.Exec(ctx, "VACUUM (ANALYZE) "+db.q+"."+pgx.Identifier{t}.Sanitize()); err != nil {
			return wrap("vacuum", err)
		}
	}
	return nil
}
