// Package sqlcore is what the sqlite and postgres packages share of their
// checkpoint saver and store: the reads of a thread's checkpoints (Load,
// History, Threads, Thread), DeleteThread, the store's operations, the
// encoding of a checkpoint into rows for Put, and the leases a database
// releases when it closes. What differs between the databases in SQL is a
// [Dialect]; how each package talks to its database, a [Conn] (database/sql
// for SQLite, through [StdConn]; pgx for PostgreSQL).
//
// The ways to hold a thread (a lease row in SQLite, an advisory lock in
// PostgreSQL), SQLite's Put on the driver's connection and its WAL
// checkpoints, and PostgreSQL's single-statement Put stay in their
// packages.
//
// It is a package of the module's own, not under internal/, because it
// stands above checkpoint and store, which internal/'s helpers stand
// below; its API follows what sqlite and postgres need and may change
// with them.
package sqlcore

import (
	"context"
	"strconv"
	"strings"

	"github.com/deepagents-go/deepagents/checkpoint"
)

// Dialect is what differs between the databases in the SQL of the shared
// operations. SQL text given here is final; the core writes the rest of its
// SQL with Tables and Params.
type Dialect struct {
	// Name prefixes error messages: "sqlite", "postgres".
	Name string
	// Tables prefixes the tables' names: empty, or a quoted schema and a
	// dot.
	Tables string
	// Params is the placeholder before an argument's number: "?" (?1, ?2)
	// or "$" ($1, $2).
	Params string
	// JSONIn and JSONOut convert a store item's value going into its
	// column, from the bytes of its JSON, and coming out of it, to those
	// bytes: formats of one %s ("%s" where the column holds the bytes).
	JSONIn, JSONOut string
	// NoLimit is the LIMIT argument that means none.
	NoLimit any
	// Wrap adds the operation op to err, and turns the database's
	// corruption errors into checkpoint.ErrCorrupt; nil stays nil.
	Wrap func(op string, err error) error
	// Bound, if set, limits each operation: it is called when one starts,
	// and the function it returns when it ends, with its error.
	Bound func(ctx context.Context) (context.Context, func(*error))
	// FilterCond, if set, is the condition that a store item's value has
	// the field named by the argument k equal to the JSON text of the
	// argument v (k and v are placeholders): the server then applies a
	// Search's filter. Unset, Search applies it to the rows as they come.
	FilterCond func(k, v string) string

	// The reads of a checkpoint's ancestry, each given its seq as
	// argument 1. ChainInfo: whether the chain ends at a root, and the
	// newest non-NULL legacy todos column with its depth (see
	// checkpoint.LegacyTodosValue). Messages: pos, data of the messages
	// of the state in order. Files: for each path, its newest rewrite or
	// deletion and the appends after it, oldest first (path, deleted,
	// content, created_at, modified_at, appended). Values: each key's
	// newest row (key, data, its depth).
	ChainInfo, Messages, Files, Values string

	// ListThreads returns the query listing threads as opts asks, with
	// limit (NoLimit for none) and offset, and its arguments; GetThread,
	// the query of one thread. Their columns are thread_id, metadata (JSON
	// text or bytes), status as reported, created_at, updated_at, head.
	// They are the dialect's because a thread's status depends on how a run
	// holds it.
	ListThreads func(opts checkpoint.ListOptions, limit any, offset int) (string, []any)
	GetThread   func(threadID string) (string, []any)
	// DeleteThread deletes the thread given as argument 1 and its
	// checkpoints; several statements run in one write transaction.
	DeleteThread []string
}

// Core runs the shared operations on a database.
type Core struct {
	d    Dialect
	conn Conn
	q    queries
}

// queries is the SQL the core writes, in the dialect.
type queries struct {
	head, target, threadExists, history string
	storeGet, storePut, storeDelete     string
	storeSearch, storeNamespaces        string
}

// New returns the core of a database.
func New(d Dialect, conn Conn) *Core {
	c := &Core{d: d, conn: conn}
	s := d.sql
	in := func(p string) string { return strings.Replace(d.JSONIn, "%s", p, 1) }
	out := func(col string) string { return strings.Replace(d.JSONOut, "%s", col, 1) }
	c.q = queries{
		head:         s(`SELECT head FROM S.threads WHERE thread_id = $1`),
		target:       s(`SELECT seq, parent_id, step, created_at, meta, msg_count FROM S.checkpoints WHERE thread_id = $1 AND checkpoint_id = $2`),
		threadExists: s(`SELECT EXISTS (SELECT 1 FROM S.threads WHERE thread_id = $1)`),
		history: s(`SELECT checkpoint_id, parent_id, step, created_at, meta FROM S.checkpoints
			WHERE thread_id = $1 ORDER BY seq DESC LIMIT $2 OFFSET $3`),
		storeGet: s(`SELECT ` + out("value") + `, created_at, updated_at FROM S.store_items WHERE namespace = $1 AND key = $2`),
		storePut: s(`INSERT INTO S.store_items (namespace, key, value, created_at, updated_at) VALUES ($1, $2, ` + in("$3") + `, $4, $4)
			ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`),
		storeDelete:     s(`DELETE FROM S.store_items WHERE namespace = $1 AND key = $2`),
		storeSearch:     s(`SELECT namespace, key, ` + out("value") + `, created_at, updated_at FROM S.store_items WHERE `),
		storeNamespaces: s(`SELECT DISTINCT namespace FROM S.store_items WHERE `),
	}
	return c
}

// sql writes q in the dialect: S. before a table's name becomes Tables,
// $ before an argument's number Params.
func (d *Dialect) sql(q string) string {
	q = strings.ReplaceAll(q, "S.", d.Tables)
	if d.Params != "$" {
		q = strings.ReplaceAll(q, "$", d.Params)
	}
	return q
}

// param is the placeholder of argument n.
func (c *Core) param(n int) string { return c.d.Params + strconv.Itoa(n) }

// start checks ctx and bounds the operation; call done with its error at
// its end.
func (c *Core) start(ctx context.Context) (_ context.Context, done func(*error), err error) {
	if err := ctx.Err(); err != nil {
		return ctx, nop, err
	}
	if c.d.Bound == nil {
		return ctx, nop, nil
	}
	ctx, done = c.d.Bound(ctx)
	return ctx, done, nil
}

func nop(*error) {}

// each calls f for each row of rows, then closes them; it returns the first
// error of f, the rows or their closing.
func each(rows Rows, f func() error) error {
	for rows.Next() {
		if err := f(); err != nil {
			rows.Close()
			return err
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	return rows.Err()
}
