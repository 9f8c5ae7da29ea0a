package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/deepagents-go/deepagents/internal/dbtime"
	"github.com/deepagents-go/deepagents/internal/nskey"
	"github.com/deepagents-go/deepagents/store"
)

// Store is the [store.Store] of a [DB]. Items are rows keyed by the
// namespace's order-preserving encoding and the key, so a namespace prefix
// is a range scan in the primary key. Values are stored as JSON; a Search
// filter is applied while the rows stream by, in key order.
type Store struct{ db *DB }

var _ store.Store = (*Store)(nil)

// Get implements [store.Store].
func (s *Store) Get(ctx context.Context, namespace []string, key string) (*store.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var value []byte
	var created, updated int64
	err := s.db.r.QueryRowContext(ctx, `SELECT value, created_at, updated_at FROM store_items WHERE namespace = ? AND key = ?`,
		nskey.Encode(namespace), key).Scan(&value, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, wrap("store get", err)
	}
	it := &store.Item{Namespace: slices.Clone(namespace), Key: key, CreatedAt: dbtime.Decode(created), UpdatedAt: dbtime.Decode(updated)}
	if err := json.Unmarshal(value, &it.Value); err != nil {
		return nil, fmt.Errorf("sqlite: store item %q: corrupt value: %w", key, err)
	}
	if it.Namespace == nil {
		it.Namespace = []string{}
	}
	return it, nil
}

// Put implements [store.Store].
func (s *Store) Put(ctx context.Context, namespace []string, key string, value map[string]any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("sqlite: store put %q: %w", key, err)
	}
	now := time.Now().UnixNano()
	_, err = s.db.w.ExecContext(ctx, `INSERT INTO store_items (namespace, key, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		nskey.Encode(namespace), key, b, now, now)
	return wrap("store put", err)
}

// Delete implements [store.Store].
func (s *Store) Delete(ctx context.Context, namespace []string, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err := s.db.w.ExecContext(ctx, `DELETE FROM store_items WHERE namespace = ? AND key = ?`, nskey.Encode(namespace), key)
	return wrap("store delete", err)
}

// prefixWhere returns the condition and arguments selecting namespaces that
// start with prefix.
func prefixWhere(prefix []string) (string, []any) {
	lo, hi := nskey.Range(prefix)
	if hi == nil {
		return "1", nil
	}
	return "namespace >= ? AND namespace < ?", []any{lo, hi}
}

// Search implements [store.Store].
func (s *Store) Search(ctx context.Context, prefix []string, opts store.SearchOptions) ([]store.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	filter, err := normalize(opts.Filter)
	if err != nil {
		return nil, fmt.Errorf("sqlite: store search: filter: %w", err)
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = 10
	}
	offset := max(opts.Offset, 0)
	where, args := prefixWhere(prefix)
	q := `SELECT namespace, key, value, created_at, updated_at FROM store_items WHERE ` + where + ` ORDER BY namespace, key`
	if len(filter) == 0 {
		q += fmt.Sprintf(" LIMIT %d OFFSET %d", limit, offset)
		offset = 0
	}
	rows, err := s.db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, wrap("store search", err)
	}
	defer rows.Close()
	var out []store.Item
	for rows.Next() && len(out) < limit {
		var ns, value []byte
		var it store.Item
		var created, updated int64
		if err := rows.Scan(&ns, &it.Key, &value, &created, &updated); err != nil {
			return nil, wrap("store search", err)
		}
		if err := json.Unmarshal(value, &it.Value); err != nil {
			return nil, fmt.Errorf("sqlite: store item %q: corrupt value: %w", it.Key, err)
		}
		if !store.Matches(it.Value, filter) {
			continue
		}
		if offset > 0 {
			offset--
			continue
		}
		if it.Namespace, err = nskey.Decode(ns); err != nil {
			return nil, fmt.Errorf("sqlite: store item %q: corrupt namespace: %w", it.Key, err)
		}
		it.CreatedAt, it.UpdatedAt = dbtime.Decode(created), dbtime.Decode(updated)
		out = append(out, it)
	}
	return out, wrap("store search", rows.Err())
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

// ListNamespaces implements [store.Store].
func (s *Store) ListNamespaces(ctx context.Context, opts store.NamespaceOptions) ([][]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = 100
	}
	offset := max(opts.Offset, 0)
	where, args := prefixWhere(opts.Prefix)
	rows, err := s.db.r.QueryContext(ctx, `SELECT DISTINCT namespace FROM store_items WHERE `+where+` ORDER BY namespace`, args...)
	if err != nil {
		return nil, wrap("store list namespaces", err)
	}
	defer rows.Close()
	out, err := nskey.Page(rows, opts.MaxDepth, offset, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: store list namespaces: %w", err)
	}
	return out, nil
}
