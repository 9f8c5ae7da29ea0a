package sqlcore

import (
	"context"
	"database/sql"
	"errors"
)

// Querier runs statements: a pool, a connection or a transaction.
type Querier interface {
	QueryRow(ctx context.Context, query string, args ...any) Row
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Batch runs read queries in order, in one transaction (one
	// snapshot of the database); their results are read in that order
	// from the Batch, each Rows closed before the next result is asked
	// for.
	Batch(ctx context.Context, queries ...Query) Batch
}

// Query is a statement of a Batch and its arguments.
type Query struct {
	SQL  string
	Args []any
}

// Batch gives the results of a Querier.Batch in order.
type Batch interface {
	QueryRow() Row
	Query() (Rows, error)
	// Close ends the batch and reports its first error.
	Close() error
}

// Row is the result of QueryRow; Scan reports sql.ErrNoRows (which
// pgx.ErrNoRows wraps) when there is none.
type Row interface {
	Scan(dest ...any) error
}

// Rows are the rows of a query.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Tx is a transaction.
type Tx interface {
	Querier
	Commit() error
	// Rollback ends the transaction if Commit did not; it may be called
	// after Commit.
	Rollback() error
}

// Conn is a database as the core uses it.
type Conn struct {
	// Reader runs reads outside a transaction of the caller's.
	Reader Querier
	// Writer runs writes, each statement its own transaction.
	Writer Querier
	// BeginRead begins a read-only transaction: one snapshot.
	BeginRead func(ctx context.Context) (Tx, error)
	// BeginWrite begins a write transaction.
	BeginWrite func(ctx context.Context) (Tx, error)
}

// StdConn is the Conn of database/sql pools: r for reads, w for writes;
// read transactions begin with readOpts.
func StdConn(r, w *sql.DB, readOpts *sql.TxOptions) Conn {
	begin := func(db *sql.DB, opts *sql.TxOptions) func(context.Context) (Tx, error) {
		return func(ctx context.Context) (Tx, error) {
			tx, err := db.BeginTx(ctx, opts)
			if err != nil {
				return nil, err
			}
			return StdTx(tx), nil
		}
	}
	return Conn{Reader: Std(r, readOpts), Writer: Std(w, nil), BeginRead: begin(r, readOpts), BeginWrite: begin(w, nil)}
}

// Std adapts a database/sql pool to Querier. Its Batch runs in a
// transaction begun with opts.
func Std(db *sql.DB, opts *sql.TxOptions) Querier { return stdDB{db, opts} }

// StdTx adapts a database/sql transaction to Tx.
func StdTx(tx *sql.Tx) Tx { return stdTx{tx} }

type stdDB struct {
	db   *sql.DB
	opts *sql.TxOptions
}

func (s stdDB) QueryRow(ctx context.Context, query string, args ...any) Row {
	return s.db.QueryRowContext(ctx, query, args...)
}

func (s stdDB) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	return s.db.QueryContext(ctx, query, args...)
}

func (s stdDB) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return rowsAffected(s.db.ExecContext(ctx, query, args...))
}

func (s stdDB) Batch(ctx context.Context, queries ...Query) Batch {
	tx, err := s.db.BeginTx(ctx, s.opts)
	if err != nil {
		return &stdBatch{err: err}
	}
	return &stdBatch{ctx: ctx, tx: tx, own: true, queries: queries}
}

type stdTx struct{ tx *sql.Tx }

func (s stdTx) QueryRow(ctx context.Context, query string, args ...any) Row {
	return s.tx.QueryRowContext(ctx, query, args...)
}

func (s stdTx) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	return s.tx.QueryContext(ctx, query, args...)
}

func (s stdTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return rowsAffected(s.tx.ExecContext(ctx, query, args...))
}

func (s stdTx) Batch(ctx context.Context, queries ...Query) Batch {
	return &stdBatch{ctx: ctx, tx: s.tx, queries: queries}
}

func (s stdTx) Commit() error { return s.tx.Commit() }

func (s stdTx) Rollback() error { return s.tx.Rollback() }

func rowsAffected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// stdBatch runs each query of a batch when its result is asked for:
// database/sql has no pipelining, and an embedded database gains nothing
// from it.
type stdBatch struct {
	ctx     context.Context
	tx      *sql.Tx
	own     bool // the batch began tx and ends it
	queries []Query
	err     error // beginning the transaction failed
}

func (b *stdBatch) next() (Query, error) {
	if b.err != nil {
		return Query{}, b.err
	}
	if len(b.queries) == 0 {
		return Query{}, errNoQuery
	}
	q := b.queries[0]
	b.queries = b.queries[1:]
	return q, nil
}

func (b *stdBatch) QueryRow() Row {
	q, err := b.next()
	if err != nil {
		return errRow{err}
	}
	return b.tx.QueryRowContext(b.ctx, q.SQL, q.Args...)
}

func (b *stdBatch) Query() (Rows, error) {
	q, err := b.next()
	if err != nil {
		return nil, err
	}
	return b.tx.QueryContext(b.ctx, q.SQL, q.Args...)
}

func (b *stdBatch) Close() error {
	if b.own && b.tx != nil {
		_ = b.tx.Rollback() // read only: nothing to keep
		b.tx = nil
	}
	return b.err
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

var errNoQuery = errors.New("sqlcore: batch: no query left")
