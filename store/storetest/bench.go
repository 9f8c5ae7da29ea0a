package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/deepagents-go/deepagents/store"
)

// BenchmarkStore measures a store item's Put, Get and a filtered Search of
// its namespace among 100 items: the benchmark each Store implementation
// runs on its own database.
func BenchmarkStore(b *testing.B, st store.Store) {
	ctx := context.Background()
	ns := []string{"users", "u1"}
	for i := range 100 {
		if err := st.Put(ctx, ns, fmt.Sprintf("k%03d", i), map[string]any{"n": i, "kind": "note"}); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if err := st.Put(ctx, ns, "k000", map[string]any{"n": 0, "kind": "note"}); err != nil {
			b.Fatal(err)
		}
		if _, err := st.Get(ctx, ns, "k050"); err != nil {
			b.Fatal(err)
		}
		if items, err := st.Search(ctx, ns, store.SearchOptions{Limit: 10, Filter: map[string]any{"kind": "note"}}); err != nil || len(items) != 10 {
			b.Fatal(err)
		}
	}
}
