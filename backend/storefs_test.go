package backend_test

import (
	"context"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/backendtest"
	"github.com/deepagents-go/deepagents/store"
)

func TestStoreConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend {
		return backend.NewStoreBackend(store.NewMemoryStore(), nil)
	})
}

func TestStoreNamespaces(t *testing.T) {
	st := store.NewMemoryStore()
	type userKey struct{}
	ns := func(ctx context.Context) []string {
		u, _ := ctx.Value(userKey{}).(string)
		return []string{u, "filesystem"}
	}
	b := backend.NewStoreBackend(st, ns)
	alice := context.WithValue(context.Background(), userKey{}, "alice")
	bob := context.WithValue(context.Background(), userKey{}, "bob")
	if err := b.Write(alice, "/memories/notes.md", "alice's"); err != nil {
		t.Fatal(err)
	}
	if err := b.Write(bob, "/memories/notes.md", "bob's"); err != nil {
		t.Fatalf("same path in another namespace: %v", err)
	}
	it, err := st.Get(context.Background(), []string{"alice", "filesystem"}, "/memories/notes.md")
	if err != nil {
		t.Fatal(err)
	}
	if it.Value["content"] != "alice's" || it.Value["created_at"] == nil || it.Value["modified_at"] == nil {
		t.Errorf("item value %v", it.Value)
	}
	ls, err := b.List(bob, "/memories")
	if err != nil || len(ls) != 1 {
		t.Fatalf("List for bob: %v, %v", ls, err)
	}
	r, _ := b.Read(bob, "/memories/notes.md", 0, 0)
	if r.Lines[0] != "bob's" {
		t.Errorf("bob reads %q", r.Lines)
	}
}

func TestStoreReadsLineListContent(t *testing.T) {
	st := store.NewMemoryStore()
	ctx := context.Background()
	err := st.Put(ctx, []string{"filesystem"}, "/legacy.md", map[string]any{
		"content":     []any{"line one", "line two"},
		"created_at":  "2025-01-02T03:04:05Z",
		"modified_at": "2025-01-02T03:04:05Z",
	})
	if err != nil {
		t.Fatal(err)
	}
	b := backend.NewStoreBackend(st, nil)
	r, err := b.Read(ctx, "/legacy.md", 0, 0)
	if err != nil || len(r.Lines) != 2 || r.Lines[1] != "line two" {
		t.Fatalf("Read = %v, %v", r, err)
	}
	ls, _ := b.List(ctx, "/")
	if len(ls) != 1 || ls[0].ModTime.Year() != 2025 {
		t.Errorf("List = %+v", ls)
	}
}
