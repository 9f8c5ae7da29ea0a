// Package store defines a cross-thread key-value store: items grouped under
// hierarchical namespaces, shared by every thread of an agent. Long-term
// memory (files under /memories/, for example) lives here.
//
// [MemoryStore] is an in-memory implementation; the sqlite and postgres packages
// hold durable ones. Every implementation runs the storetest suite.
package store

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned by Get for a missing item.
var ErrNotFound = errors.New("store: item not found")

// Item is one stored value.
type Item struct {
	Namespace []string       `json:"namespace"`
	Key       string         `json:"key"`
	Value     map[string]any `json:"value"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

// SearchOptions narrows a Search.
type SearchOptions struct {
	// Filter keeps items whose value has each of these top-level fields
	// equal (as JSON values) to the given value.
	Filter map[string]any
	// Limit caps the number of items; zero means 10.
	Limit int
	// Offset skips that many items first.
	Offset int
}

// NamespaceOptions narrows a ListNamespaces.
type NamespaceOptions struct {
	// Prefix keeps namespaces that start with these elements.
	Prefix []string
	// MaxDepth, when positive, truncates namespaces to that many elements
	// (duplicates removed).
	MaxDepth int
	// Limit caps the number of namespaces; zero means 100.
	Limit int
	// Offset skips that many namespaces first.
	Offset int
}

// Store is a namespaced item store. Implementations must be safe for
// concurrent use.
type Store interface {
	// Get returns the item, or ErrNotFound.
	Get(ctx context.Context, namespace []string, key string) (*Item, error)
	// Put creates or replaces an item.
	Put(ctx context.Context, namespace []string, key string, value map[string]any) error
	// Delete removes an item; deleting a missing item is not an error.
	Delete(ctx context.Context, namespace []string, key string) error
	// Search returns the items whose namespace starts with prefix, ordered
	// by namespace and key.
	Search(ctx context.Context, prefix []string, opts SearchOptions) ([]Item, error)
	// ListNamespaces returns the distinct namespaces holding items, sorted.
	ListNamespaces(ctx context.Context, opts NamespaceOptions) ([][]string, error)
}

// BatchPutter is implemented by Stores that can put several items in one
// transaction: all of them or none, and one commit for all.
type BatchPutter interface {
	PutBatch(ctx context.Context, items []Item) error
}

// PutAll puts items into s: in one transaction when s is a BatchPutter,
// else one by one (and a failure may leave the first ones put).
func PutAll(ctx context.Context, s Store, items []Item) error {
	if b, ok := s.(BatchPutter); ok {
		return b.PutBatch(ctx, items)
	}
	for _, it := range items {
		if err := s.Put(ctx, it.Namespace, it.Key, it.Value); err != nil {
			return err
		}
	}
	return nil
}
