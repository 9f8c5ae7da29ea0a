package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/deepagents-go/deepagents/internal/dbtime"
	"github.com/deepagents-go/deepagents/internal/nskey"
	"github.com/deepagents-go/deepagents/store"
)

// Store is the [store.Store] of a [DB]. Items are rows keyed by the
// namespace's order-preserving encoding (bytea) and the key, so a namespace
// prefix is a range scan of the primary key. Values are jsonb; a Search
// filter becomes one jsonb equality per field, evaluated by the server.
//
// PostgreSQL's jsonb cannot hold the character U+0000 in a string; a value
// holding one is refused with the server's error.
type Store struct{ db *DB }

var _ store.Store = (*Store)(nil)

// Get implements [store.Store].
func (s *Store) Get(ctx context.Context, namespace []string, key string) (_ *store.Item, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx, done := s.db.bound(ctx)
	defer done(&err)
	var value string
	var created, updated int64
	err = s.db.pool.QueryRow(ctx, s.db.sql.storeGet, nskey.Encode(namespace), key).Scan(&value, &created, &updated)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, wrap("store get", err)
	}
	it := &store.Item{Namespace: slices.Clone(namespace), Key: key, CreatedAt: dbtime.Decode(created), UpdatedAt: dbtime.Decode(updated)}
	if it.Namespace == nil {
		it.Namespace = []string{}
	}
	if err := json.Unmarshal([]byte(value), &it.Value); err != nil {
		return nil, fmt.Errorf("postgres: store item %q: corrupt value: %w", key, err)
	}
	return it, nil
}

// Put implements [store.Store].
func (s *Store) Put(ctx context.Context, namespace []string, key string, value map[string]any) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx, done := s.db.bound(ctx)
	defer done(&err)
	b, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("postgres: store put %q: %w", key, err)
	}
	_, err = s.db.pool.Exec(ctx, s.db.sql.storePut, nskey.Encode(namespace), key, string(b), time.Now().UnixNano())
	return wrap("store put", err)
}

// Delete implements [store.Store].
func (s *Store) Delete(ctx context.Context, namespace []string, key string) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx, done := s.db.bound(ctx)
	defer done(&err)
	_, err = s.db.pool.Exec(ctx, s.db.sql.storeDelete, nskey.Encode(namespace), key)
	return wrap("store delete", err)
}

// where builds the conditions for a namespace prefix and a filter,
// appending their arguments to args.
func where(prefix []string, filter map[string]any, args []any) (string, []any, error) {
	var conds []string
	lo, hi := nskey.Range(prefix)
	if hi != nil {
		args = append(args, lo, hi)
		conds = append(conds, fmt.Sprintf("namespace >= $%d AND namespace < $%d", len(args)-1, len(args)))
	}
	keys := make([]string, 0, len(filter))
	for k := range filter {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b, err := json.Marshal(filter[k])
		if err != nil {
			return "", nil, fmt.Errorf("filter %q: %w", k, err)
		}
		args = append(args, k, string(b))
		conds = append(conds, fmt.Sprintf("value -> ($%d::text) = ($%d::text::jsonb)", len(args)-1, len(args)))
	}
	if len(conds) == 0 {
		return "true", args, nil
	}
	return strings.Join(conds, " AND "), args, nil
}

// Search implements [store.Store].
func (s *Store) Search(ctx context.Context, prefix []string, opts store.SearchOptions) (_ []store.Item, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx, done := s.db.bound(ctx)
	defer done(&err)
	limit := opts.Limit
	if limit <= 0 {
		limit = 10
	}
	cond, args, err := where(prefix, opts.Filter, []any{limit, max(opts.Offset, 0)})
	if err != nil {
		return nil, fmt.Errorf("postgres: store search: %w", err)
	}
	rows, err := s.db.pool.Query(ctx, `SELECT namespace, key, value::text, created_at, updated_at FROM `+s.db.q+`.store_items
		WHERE `+cond+` ORDER BY namespace, key LIMIT $1 OFFSET $2`, args...)
	if err != nil {
		return nil, wrap("store search", err)
	}
	defer rows.Close()
	var out []store.Item
	for rows.Next() {
		var ns []byte
		var value string
		var created, updated int64
		var it store.Item
		if err := rows.Scan(&ns, &it.Key, &value, &created, &updated); err != nil {
			return nil, wrap("store search", err)
		}
		if it.Namespace, err = nskey.Decode(ns); err != nil {
			return nil, fmt.Errorf("postgres: store item %q: corrupt namespace: %w", it.Key, err)
		}
		if err := json.Unmarshal([]byte(value), &it.Value); err != nil {
			return nil, fmt.Errorf("postgres: store item %q: corrupt value: %w", it.Key, err)
		}
		it.CreatedAt, it.UpdatedAt = dbtime.Decode(created), dbtime.Decode(updated)
		out = append(out, it)
	}
	return out, wrap("store search", rows.Err())
}

// ListNamespaces implements [store.Store].
func (s *Store) ListNamespaces(ctx context.Context, opts store.NamespaceOptions) (_ [][]string, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx, done := s.db.bound(ctx)
	defer done(&err)
	limit := opts.Limit
	if limit <= 0 {
		limit = 100
	}
	offset := max(opts.Offset, 0)
	cond, args, _ := where(opts.Prefix, nil, nil)
	rows, err := s.db.pool.Query(ctx, `SELECT DISTINCT namespace FROM `+s.db.q+`.store_items WHERE `+cond+` ORDER BY namespace`, args...)
	if err != nil {
		return nil, wrap("store list namespaces", err)
	}
	defer rows.Close()
	out, err := nskey.Page(rows, opts.MaxDepth, offset, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: store list namespaces: %w", err)
	}
	return out, nil
}
