package sqlcore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/internal/dbtime"
	"github.com/deepagents-go/deepagents/internal/nskey"
	"github.com/deepagents-go/deepagents/store"
)

// StoreGet implements [store.Store.Get].
func (c *Core) StoreGet(ctx context.Context, namespace []string, key string) (_ *store.Item, err error) {
	ctx, done, err := c.start(ctx)
	if err != nil {
		return nil, err
	}
	defer done(&err)
	var value []byte
	var created, updated int64
	err = c.conn.Reader.QueryRow(ctx, c.q.storeGet, nskey.Encode(namespace), key).Scan(&value, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, c.d.Wrap("store get", err)
	}
	it := &store.Item{Namespace: slices.Clone(namespace), Key: key, CreatedAt: dbtime.Decode(created), UpdatedAt: dbtime.Decode(updated)}
	if it.Namespace == nil {
		it.Namespace = []string{}
	}
	if err := json.Unmarshal(value, &it.Value); err != nil {
		return nil, fmt.Errorf("%s: store item %q: corrupt value: %w", c.d.Name, key, err)
	}
	return it, nil
}

// StorePut implements [store.Store.Put].
func (c *Core) StorePut(ctx context.Context, namespace []string, key string, value map[string]any) (err error) {
	ctx, done, err := c.start(ctx)
	if err != nil {
		return err
	}
	defer done(&err)
	b, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("%s: store put %q: %w", c.d.Name, key, err)
	}
	_, err = c.conn.Writer.Exec(ctx, c.q.storePut, nskey.Encode(namespace), key, b, time.Now().UnixNano())
	return c.d.Wrap("store put", err)
}

// StorePutBatch implements [store.BatchPutter]: the items in one write
// transaction.
func (c *Core) StorePutBatch(ctx context.Context, items []store.Item) (err error) {
	ctx, done, err := c.start(ctx)
	if err != nil {
		return err
	}
	defer done(&err)
	tx, err := c.conn.BeginWrite(ctx)
	if err != nil {
		return c.d.Wrap("store put", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	now := time.Now().UnixNano()
	for _, it := range items {
		b, err := json.Marshal(it.Value)
		if err != nil {
			return fmt.Errorf("%s: store put %q: %w", c.d.Name, it.Key, err)
		}
		if _, err := tx.Exec(ctx, c.q.storePut, nskey.Encode(it.Namespace), it.Key, b, now); err != nil {
			return c.d.Wrap("store put", err)
		}
	}
	return c.d.Wrap("store put", tx.Commit())
}

// StoreDelete implements [store.Store.Delete].
func (c *Core) StoreDelete(ctx context.Context, namespace []string, key string) (err error) {
	ctx, done, err := c.start(ctx)
	if err != nil {
		return err
	}
	defer done(&err)
	_, err = c.conn.Writer.Exec(ctx, c.q.storeDelete, nskey.Encode(namespace), key)
	return c.d.Wrap("store delete", err)
}

// prefixWhere appends to args the bounds of the namespaces that start with
// prefix, and returns the condition selecting them, if any.
func (c *Core) prefixWhere(prefix []string, conds []string, args []any) ([]string, []any) {
	lo, hi := nskey.Range(prefix)
	if hi == nil {
		return conds, args
	}
	args = append(args, lo, hi)
	return append(conds, "namespace >= "+c.param(len(args)-1)+" AND namespace < "+c.param(len(args))), args
}

func and(conds []string) string {
	if len(conds) == 0 {
		return "true"
	}
	return strings.Join(conds, " AND ")
}

// StoreSearch implements [store.Store.Search].
func (c *Core) StoreSearch(ctx context.Context, prefix []string, opts store.SearchOptions) (_ []store.Item, err error) {
	ctx, done, err := c.start(ctx)
	if err != nil {
		return nil, err
	}
	defer done(&err)
	limit := opts.Limit
	if limit <= 0 {
		limit = 10
	}
	offset := max(opts.Offset, 0)
	conds, args := c.prefixWhere(prefix, nil, nil)
	var filter map[string]any // applied here, to the rows as they come
	if c.d.FilterCond != nil {
		keys := make([]string, 0, len(opts.Filter))
		for k := range opts.Filter {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			b, err := json.Marshal(opts.Filter[k])
			if err != nil {
				return nil, fmt.Errorf("%s: store search: filter %q: %w", c.d.Name, k, err)
			}
			args = append(args, k, string(b))
			conds = append(conds, c.d.FilterCond(c.param(len(args)-1), c.param(len(args))))
		}
	} else if filter, err = normalize(opts.Filter); err != nil {
		return nil, fmt.Errorf("%s: store search: filter: %w", c.d.Name, err)
	}
	q := c.q.storeSearch + and(conds) + ` ORDER BY namespace, key`
	if filter == nil {
		args = append(args, limit, offset)
		q += ` LIMIT ` + c.param(len(args)-1) + ` OFFSET ` + c.param(len(args))
		offset = 0
	}
	rows, err := c.conn.Reader.Query(ctx, q, args...)
	if err != nil {
		return nil, c.d.Wrap("store search", err)
	}
	defer rows.Close()
	var (
		out              []store.Item
		ns, value        []byte
		it               store.Item
		created, updated int64
	)
	// One set of destinations for all rows: through an interface, each
	// row's would escape to the heap.
	dest := []any{&ns, &it.Key, &value, &created, &updated}
	for rows.Next() && len(out) < limit {
		it = store.Item{}
		if err := rows.Scan(dest...); err != nil {
			return nil, c.d.Wrap("store search", err)
		}
		if err := json.Unmarshal(value, &it.Value); err != nil {
			return nil, fmt.Errorf("%s: store item %q: corrupt value: %w", c.d.Name, it.Key, err)
		}
		if filter != nil && !store.Matches(it.Value, filter) {
			continue
		}
		if offset > 0 {
			offset--
			continue
		}
		if it.Namespace, err = nskey.Decode(ns); err != nil {
			return nil, fmt.Errorf("%s: store item %q: corrupt namespace: %w", c.d.Name, it.Key, err)
		}
		it.CreatedAt, it.UpdatedAt = dbtime.Decode(created), dbtime.Decode(updated)
		out = append(out, it)
	}
	return out, c.d.Wrap("store search", rows.Err())
}

// normalize round-trips a filter through JSON so that it compares like the
// stored values (numbers as float64).
func normalize(v map[string]any) (map[string]any, error) {
	if len(v) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

// StoreListNamespaces implements [store.Store.ListNamespaces].
func (c *Core) StoreListNamespaces(ctx context.Context, opts store.NamespaceOptions) (_ [][]string, err error) {
	ctx, done, err := c.start(ctx)
	if err != nil {
		return nil, err
	}
	defer done(&err)
	limit := opts.Limit
	if limit <= 0 {
		limit = 100
	}
	conds, args := c.prefixWhere(opts.Prefix, nil, nil)
	rows, err := c.conn.Reader.Query(ctx, c.q.storeNamespaces+and(conds)+` ORDER BY namespace`, args...)
	if err != nil {
		return nil, c.d.Wrap("store list namespaces", err)
	}
	defer rows.Close()
	out, err := nskey.Page(rows, opts.MaxDepth, max(opts.Offset, 0), limit)
	if err != nil {
		return nil, fmt.Errorf("%s: store list namespaces: %w", c.d.Name, err)
	}
	return out, nil
}
