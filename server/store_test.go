package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
	"github.com/deepagents-go/deepagents/store"
)

type apiItem struct {
	Namespace []string       `json:"namespace"`
	Key       string         `json:"key"`
	Value     map[string]any `json:"value"`
	CreatedAt string         `json:"created_at"`
	UpdatedAt string         `json:"updated_at"`
}

// TestStoreItems puts, gets, searches, lists and deletes items, as
// LangGraph's /store answers them.
func TestStoreItems(t *testing.T) {
	f := newFixture(t, servertest.Options{})
	put := func(ns []string, key string, value map[string]any) {
		t.Helper()
		f.JSON(http.MethodPut, "/store/items", map[string]any{"namespace": ns, "key": key, "value": value}, http.StatusNoContent, nil)
	}
	put([]string{"users", "u1", "prefs"}, "theme", map[string]any{"color": "dark"})
	put([]string{"users", "u1", "prefs"}, "lang", map[string]any{"code": "fr"})
	put([]string{"users", "u2"}, "theme", map[string]any{"color": "light"})
	put([]string{"teams", "t1"}, "name", map[string]any{"name": "core"})

	var it apiItem
	f.JSON(http.MethodGet, "/store/items?namespace=users.u1.prefs&key=theme", nil, http.StatusOK, &it)
	if !slices.Equal(it.Namespace, []string{"users", "u1", "prefs"}) || it.Key != "theme" || it.Value["color"] != "dark" || it.CreatedAt == "" || it.UpdatedAt == "" {
		t.Fatalf("item = %+v", it)
	}
	// A missing item is null, as the SDK's getItem expects.
	code, b, _ := f.Do(http.MethodGet, "/store/items?namespace=users.u1.prefs&key=nope", nil)
	if code != http.StatusOK || string(b) != "null" {
		t.Fatalf("missing item: %d %s", code, b)
	}

	var res struct{ Items []apiItem }
	f.JSON(http.MethodPost, "/store/items/search", map[string]any{"namespace_prefix": []string{"users"}}, http.StatusOK, &res)
	if len(res.Items) != 3 {
		t.Fatalf("search users: %+v", res.Items)
	}
	f.JSON(http.MethodPost, "/store/items/search", map[string]any{"namespace_prefix": []string{"users"}, "filter": map[string]any{"color": "light"}}, http.StatusOK, &res)
	if len(res.Items) != 1 || res.Items[0].Namespace[1] != "u2" {
		t.Fatalf("search filtered: %+v", res.Items)
	}
	f.JSON(http.MethodPost, "/store/items/search", map[string]any{"namespace_prefix": []string{"users"}, "limit": 1, "offset": 1}, http.StatusOK, &res)
	if len(res.Items) != 1 || res.Items[0].Key != "theme" || res.Items[0].Namespace[1] != "u1" {
		t.Fatalf("search page: %+v", res.Items)
	}

	var ns struct{ Namespaces [][]string }
	f.JSON(http.MethodPost, "/store/namespaces", map[string]any{}, http.StatusOK, &ns)
	if want := [][]string{{"teams", "t1"}, {"users", "u1", "prefs"}, {"users", "u2"}}; !slices.EqualFunc(ns.Namespaces, want, slices.Equal) {
		t.Fatalf("namespaces = %v, want %v", ns.Namespaces, want)
	}
	f.JSON(http.MethodPost, "/store/namespaces", map[string]any{"prefix": []string{"users"}, "max_depth": 2}, http.StatusOK, &ns)
	if want := [][]string{{"users", "u1"}, {"users", "u2"}}; !slices.EqualFunc(ns.Namespaces, want, slices.Equal) {
		t.Fatalf("namespaces depth 2 = %v, want %v", ns.Namespaces, want)
	}
	f.JSON(http.MethodPost, "/store/namespaces", map[string]any{"suffix": []string{"prefs"}}, http.StatusOK, &ns)
	if want := [][]string{{"users", "u1", "prefs"}}; !slices.EqualFunc(ns.Namespaces, want, slices.Equal) {
		t.Fatalf("namespaces with suffix = %v, want %v", ns.Namespaces, want)
	}

	f.JSON(http.MethodDelete, "/store/items", map[string]any{"namespace": []string{"users", "u1", "prefs"}, "key": "theme"}, http.StatusNoContent, nil)
	code, b, _ = f.Do(http.MethodGet, "/store/items?namespace=users.u1.prefs&key=theme", nil)
	if code != http.StatusOK || string(b) != "null" {
		t.Fatalf("deleted item: %d %s", code, b)
	}
}

// TestStoreBadRequests: the reference's answers to malformed requests.
func TestStoreBadRequests(t *testing.T) {
	f := newFixture(t, servertest.Options{})
	for _, c := range []struct {
		method, path string
		body         any
		want         int
	}{
		{http.MethodPut, "/store/items", map[string]any{"namespace": []string{"a.b"}, "key": "k", "value": map[string]any{}}, http.StatusUnprocessableEntity},
		{http.MethodPut, "/store/items", map[string]any{"namespace": []string{""}, "key": "k", "value": map[string]any{}}, http.StatusUnprocessableEntity},
		{http.MethodPut, "/store/items", map[string]any{"namespace": []string{}, "key": "k", "value": map[string]any{}}, http.StatusBadRequest},
		{http.MethodPut, "/store/items", map[string]any{"namespace": []string{"a"}, "value": map[string]any{}}, http.StatusUnprocessableEntity},
		{http.MethodPut, "/store/items", map[string]any{"namespace": []string{"a"}, "key": "k"}, http.StatusUnprocessableEntity},
		{http.MethodPut, "/store/items", map[string]any{"namespace": []string{"a"}, "key": "k", "value": "text"}, http.StatusUnprocessableEntity},
		{http.MethodPut, "/store/items", map[string]any{"namespace": []string{"a"}, "key": "k", "value": map[string]any{}, "ttl": 5}, http.StatusUnprocessableEntity},
		{http.MethodPut, "/store/items", `{"namespace": [`, http.StatusUnprocessableEntity}, // a malformed body, as everywhere
		{http.MethodGet, "/store/items?namespace=a", nil, http.StatusUnprocessableEntity},
		{http.MethodGet, "/store/items?namespace=a..b&key=k", nil, http.StatusUnprocessableEntity},
		{http.MethodDelete, "/store/items", map[string]any{"namespace": []string{"a"}}, http.StatusUnprocessableEntity},
		{http.MethodPost, "/store/items/search", map[string]any{"namespace_prefix": []string{"a.b"}}, http.StatusUnprocessableEntity},
		{http.MethodPost, "/store/items/search", map[string]any{"limit": 0}, http.StatusUnprocessableEntity},
		{http.MethodPost, "/store/items/search", map[string]any{"offset": -1}, http.StatusUnprocessableEntity},
		{http.MethodPost, "/store/namespaces", map[string]any{"max_depth": 0}, http.StatusUnprocessableEntity},
		{http.MethodPost, "/store/namespaces", map[string]any{"suffix": []string{"x.y"}}, http.StatusUnprocessableEntity},
	} {
		if code, b, _ := f.Do(c.method, c.path, c.body); code != c.want {
			t.Errorf("%s %s %v: %d %s, want %d", c.method, c.path, c.body, code, b, c.want)
		}
	}
}

// TestStoreKeepsServerRecords: the server's own records (runs, replicas,
// thread metadata, ...) share the store but are not the API's to read or
// write.
func TestStoreKeepsServerRecords(t *testing.T) {
	st := store.NewMemoryStore()
	rs := newReplicas(t, 1, checkpoint.NewMemorySaver(), st, func() llm.Model { return servertest.NewBlockingModel() })
	f := rs[0].fixture
	ctx := t.Context()
	if err := st.Put(ctx, []string{"deepagents", "server", "thread_metadata"}, "r1", map[string]any{"status": "running"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, []string{"deepagents", "memories"}, "m", map[string]any{"x": 1.0}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{http.MethodPut, "/store/items", map[string]any{"namespace": []string{"deepagents", "server", "runs"}, "key": "r1", "value": map[string]any{}}},
		{http.MethodGet, "/store/items?namespace=deepagents.server.runs&key=r1", nil},
		{http.MethodDelete, "/store/items", map[string]any{"namespace": []string{"deepagents", "server", "runs"}, "key": "r1"}},
		{http.MethodPost, "/store/items/search", map[string]any{"namespace_prefix": []string{"deepagents", "server"}}},
		{http.MethodPost, "/store/namespaces", map[string]any{"prefix": []string{"deepagents", "server"}}},
	} {
		if code, b, _ := f.Do(c.method, c.path, c.body); code != http.StatusForbidden {
			t.Errorf("%s %s: %d %s, want 403", c.method, c.path, code, b)
		}
	}
	for _, prefix := range [][]string{nil, {"deepagents"}} {
		var res struct{ Items []apiItem }
		f.JSON(http.MethodPost, "/store/items/search", map[string]any{"namespace_prefix": prefix, "limit": 100}, http.StatusOK, &res)
		if len(res.Items) != 1 || res.Items[0].Key != "m" {
			t.Errorf("search %v: %+v", prefix, res.Items)
		}
		var ns struct{ Namespaces [][]string }
		f.JSON(http.MethodPost, "/store/namespaces", map[string]any{"prefix": prefix}, http.StatusOK, &ns)
		if b, _ := json.Marshal(ns.Namespaces); string(b) != `[["deepagents","memories"]]` {
			t.Errorf("namespaces %v: %s", prefix, b)
		}
	}
	if it, err := st.Get(ctx, []string{"deepagents", "server", "thread_metadata"}, "r1"); err != nil || it.Value["status"] != "running" {
		t.Fatalf("the server's record: %v %v", it, err)
	}
}
