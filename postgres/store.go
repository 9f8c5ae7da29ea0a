package postgres

import (
	"context"

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
func (s *Store) Get(ctx context.Context, namespace []string, key string) (*store.Item, error) {
	return s.db.core.StoreGet(ctx, namespace, key)
}

// Put implements [store.Store].
func (s *Store) Put(ctx context.Context, namespace []string, key string, value map[string]any) error {
	return s.db.core.StorePut(ctx, namespace, key, value)
}

// PutBatch implements [store.BatchPutter]: one transaction.
func (s *Store) PutBatch(ctx context.Context, items []store.Item) error {
	return s.db.core.StorePutBatch(ctx, items)
}

// Delete implements [store.Store].
func (s *Store) Delete(ctx context.Context, namespace []string, key string) error {
	return s.db.core.StoreDelete(ctx, namespace, key)
}

// Search implements [store.Store].
func (s *Store) Search(ctx context.Context, prefix []string, opts store.SearchOptions) ([]store.Item, error) {
	return s.db.core.StoreSearch(ctx, prefix, opts)
}

// ListNamespaces implements [store.Store].
func (s *Store) ListNamespaces(ctx context.Context, opts store.NamespaceOptions) ([][]string, error) {
	return s.db.core.StoreListNamespaces(ctx, opts)
}
