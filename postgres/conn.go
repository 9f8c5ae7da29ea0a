package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/sqlcore"
)

// dialect is PostgreSQL's SQL for the operations the sqlite and postgres
// packages share (sqlcore).
func (db *DB) dialect() sqlcore.Dialect {
	q := &db.sql
	return sqlcore.Dialect{
		Name:    "postgres",
		Tables:  db.q + ".",
		Params:  "$",
		JSONIn:  "%s::text::jsonb",
		JSONOut: "%s::text",
		NoLimit: nil,
		Wrap:    wrap,
		Bound:   db.bound,
		// One jsonb equality per field of a Search's filter, evaluated by
		// the server.
		FilterCond: func(k, v string) string { return "value -> (" + k + "::text) = (" + v + "::text::jsonb)" },

		ChainInfo: q.chainInfo,
		Messages:  q.msgs,
		Files:     q.files,
		Values:    q.values,
		ListThreads: func(opts checkpoint.ListOptions, limit any, offset int) (string, []any) {
			if opts.Status != "" {
				return q.threadsByStatus, []any{limit, offset, opts.TopLevel, string(opts.Status)}
			}
			return q.threads, []any{limit, offset, opts.TopLevel}
		},
		GetThread:    func(threadID string) (string, []any) { return q.thread, []any{threadID} },
		DeleteThread: []string{q.deleteThread},
	}
}

// conn is the pool as sqlcore uses it: reads and writes alike on
// the pool, Load in a repeatable-read transaction.
func (db *DB) conn() sqlcore.Conn {
	pool := querier{db.pool}
	begin := func(opts pgx.TxOptions) func(context.Context) (sqlcore.Tx, error) {
		return func(ctx context.Context) (sqlcore.Tx, error) {
			t, err := db.pool.BeginTx(ctx, opts)
			if err != nil {
				return nil, err
			}
			return tx{querier{t}, t, ctx}, nil
		}
	}
	return sqlcore.Conn{Reader: pool, Writer: pool,
		BeginRead:  begin(pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}),
		BeginWrite: begin(pgx.TxOptions{})}
}

// pgxQuerier is what a pool and a transaction have in common.
type pgxQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// querier adapts a pgxQuerier to sqlcore.Querier; a Batch is pgx's, sent
// in one round trip.
type querier struct{ q pgxQuerier }

func (q querier) QueryRow(ctx context.Context, sql string, args ...any) sqlcore.Row {
	return q.q.QueryRow(ctx, sql, args...)
}

func (q querier) Query(ctx context.Context, sql string, args ...any) (sqlcore.Rows, error) {
	r, err := q.q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return rows{r}, nil
}

func (q querier) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := q.q.Exec(ctx, sql, args...)
	return tag.RowsAffected(), err
}

func (q querier) Batch(ctx context.Context, queries ...sqlcore.Query) sqlcore.Batch {
	b := &pgx.Batch{}
	for _, x := range queries {
		b.Queue(x.SQL, x.Args...)
	}
	return batch{q.q.SendBatch(ctx, b)}
}

type tx struct {
	querier
	tx  pgx.Tx
	ctx context.Context
}

func (t tx) Commit() error { return t.tx.Commit(t.ctx) }

func (t tx) Rollback() error { return t.tx.Rollback(context.Background()) }

type batch struct{ pgx.BatchResults }

func (b batch) QueryRow() sqlcore.Row { return b.BatchResults.QueryRow() }

func (b batch) Query() (sqlcore.Rows, error) {
	r, err := b.BatchResults.Query()
	if err != nil {
		return nil, err
	}
	return rows{r}, nil
}

// rows are pgx's rows with database/sql's Close.
type rows struct{ pgx.Rows }

func (r rows) Close() error {
	r.Rows.Close()
	return r.Rows.Err()
}
