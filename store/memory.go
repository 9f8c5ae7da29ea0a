package store

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/deepagents-go/deepagents/internal/nskey"
)

// MemoryStore is an in-memory Store. The zero value is ready to use. Values are
// copied in and out, so callers may keep changing their maps.
type MemoryStore struct {
	mu    sync.RWMutex
	items map[string]*Item // keyed by nsKey(namespace, key)
	now   func() time.Time
}

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

// nsKey encodes the namespace and the key (as a last element) so that no two
// distinct pairs collide, whatever bytes their strings hold.
func nsKey(ns []string, key string) string {
	return string(nskey.Encode(append(ns[:len(ns):len(ns)], key)))
}

func (m *MemoryStore) clock() time.Time {
	if m.now != nil {
		return m.now()
	}
	return time.Now().UTC()
}

// Get implements Store.
func (m *MemoryStore) Get(ctx context.Context, ns []string, key string) (*Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	it, ok := m.items[nsKey(ns, key)]
	if !ok {
		return nil, ErrNotFound
	}
	c := cloneItem(it)
	return &c, nil
}

// Put implements Store.
func (m *MemoryStore) Put(ctx context.Context, ns []string, key string, value map[string]any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	v, err := cloneValue(value)
	if err != nil {
		return err
	}
	now := m.clock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.items == nil {
		m.items = make(map[string]*Item)
	}
	k := nsKey(ns, key)
	if old, ok := m.items[k]; ok {
		old.Value, old.UpdatedAt = v, now
		return nil
	}
	m.items[k] = &Item{Namespace: slices.Clone(ns), Key: key, Value: v, CreatedAt: now, UpdatedAt: now}
	return nil
}

// Delete implements Store.
func (m *MemoryStore) Delete(ctx context.Context, ns []string, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.items, nsKey(ns, key))
	return nil
}

// Search implements Store.
func (m *MemoryStore) Search(ctx context.Context, prefix []string, opts SearchOptions) ([]Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	filter, err := cloneValue(opts.Filter)
	if err != nil {
		return nil, err
	}
	m.mu.RLock()
	var out []Item
	for _, it := range m.items {
		if HasPrefix(it.Namespace, prefix) && Matches(it.Value, filter) {
			out = append(out, cloneItem(it))
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b Item) int {
		if c := slices.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	return page(out, opts.Offset, opts.Limit, 10), nil
}

// ListNamespaces implements Store.
func (m *MemoryStore) ListNamespaces(ctx context.Context, opts NamespaceOptions) ([][]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	seen := map[string][]string{}
	m.mu.RLock()
	for _, it := range m.items {
		if !HasPrefix(it.Namespace, opts.Prefix) {
			continue
		}
		ns := it.Namespace
		if opts.MaxDepth > 0 && len(ns) > opts.MaxDepth {
			ns = ns[:opts.MaxDepth]
		}
		seen[string(nskey.Encode(ns))] = ns
	}
	m.mu.RUnlock()
	out := make([][]string, 0, len(seen))
	for _, ns := range seen {
		out = append(out, slices.Clone(ns))
	}
	slices.SortFunc(out, slices.Compare)
	return page(out, opts.Offset, opts.Limit, 100), nil
}

// HasPrefix reports whether namespace ns starts with prefix.
func HasPrefix(ns, prefix []string) bool {
	return len(ns) >= len(prefix) && slices.Equal(ns[:len(prefix)], prefix)
}

// Matches reports whether value has every field of filter with an equal JSON
// value. Both maps must hold JSON-decoded values (as cloneValue makes).
func Matches(value, filter map[string]any) bool {
	for k, want := range filter {
		got, ok := value[k]
		if !ok || !reflect.DeepEqual(got, want) {
			return false
		}
	}
	return true
}

func page[T any](s []T, offset, limit, defLimit int) []T {
	if limit <= 0 {
		limit = defLimit
	}
	if offset < 0 {
		offset = 0
	}
	if offset >= len(s) {
		return nil
	}
	s = s[offset:]
	if len(s) > limit {
		s = s[:limit]
	}
	return s
}

// cloneValue deep-copies a value as a round trip through JSON would,
// which also normalises it (numbers become float64) so that filters
// compare like with like. What JSON's own types hold (maps, slices,
// strings, numbers, booleans) is copied directly; anything else goes
// through JSON.
func cloneValue(v map[string]any) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	if out, ok := normalized(v); ok {
		return out.(map[string]any), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// normalized is x as decoding its JSON would give it; ok is false for what
// only JSON can tell (other types, strings that are not UTF-8, numbers
// JSON has no text for).
func normalized(x any) (any, bool) {
	switch x := x.(type) {
	case nil, bool:
		return x, true
	case string:
		return x, utf8.ValidString(x)
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint32:
		return float64(x), true
	case map[string]any:
		if x == nil {
			return nil, true
		}
		out := make(map[string]any, len(x))
		for k, v := range x {
			if !utf8.ValidString(k) {
				return nil, false
			}
			n, ok := normalized(v)
			if !ok {
				return nil, false
			}
			out[k] = n
		}
		return out, true
	case []any:
		if x == nil {
			return nil, true
		}
		out := make([]any, len(x))
		for i, v := range x {
			n, ok := normalized(v)
			if !ok {
				return nil, false
			}
			out[i] = n
		}
		return out, true
	}
	return nil, false
}

func cloneItem(it *Item) Item {
	c := *it
	c.Namespace = slices.Clone(it.Namespace)
	c.Value = deepCopy(it.Value)
	return c
}

func deepCopy(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		out[k] = deepCopyAny(v)
	}
	return out
}

func deepCopyAny(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return deepCopy(x)
	case []any:
		c := make([]any, len(x))
		for i := range x {
			c[i] = deepCopyAny(x[i])
		}
		return c
	}
	return v
}
