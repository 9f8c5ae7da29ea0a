package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/store"
)

// Factory returns a new, empty Store for one subtest. It should arrange its
// own cleanup with t.Cleanup.
type Factory func(t *testing.T) store.Store

// Run runs the conformance suite against the Stores newStore makes.
func Run(t *testing.T, newStore Factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"GetPutDelete", testGetPutDelete},
		{"Overwrite", testOverwrite},
		{"DistinctNamespaces", testDistinctNamespaces},
		{"SearchPrefix", testSearchPrefix},
		{"SearchOrderAndPaging", testSearchOrderAndPaging},
		{"SearchFilter", testSearchFilter},
		{"ListNamespaces", testListNamespaces},
		{"Values", testValues},
		{"BadValues", testBadValues},
		{"Isolation", testIsolation},
		{"CanceledContext", testCanceledContext},
		{"Concurrency", testConcurrency},
		{"PutAll", testPutAll},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

func ctxb() context.Context { return context.Background() }

// norm returns v as JSON-decoded values, the form a Store returns.
func norm(t testing.TB, v map[string]any) map[string]any {
	t.Helper()
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return out
}

func put(t testing.TB, s store.Store, ns []string, key string, v map[string]any) {
	t.Helper()
	if err := s.Put(ctxb(), ns, key, v); err != nil {
		t.Fatalf("Put(%q, %q): %v", ns, key, err)
	}
}

func get(t testing.TB, s store.Store, ns []string, key string) *store.Item {
	t.Helper()
	it, err := s.Get(ctxb(), ns, key)
	if err != nil {
		t.Fatalf("Get(%q, %q): %v", ns, key, err)
	}
	return it
}

func sameValue(a, b map[string]any) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// addr names an item as "ns1/ns2:key".
func addr(it store.Item) string {
	s := ""
	for i, e := range it.Namespace {
		if i > 0 {
			s += "/"
		}
		s += e
	}
	return s + ":" + it.Key
}

func search(t testing.TB, s store.Store, prefix []string, opts store.SearchOptions) []string {
	t.Helper()
	items, err := s.Search(ctxb(), prefix, opts)
	if err != nil {
		t.Fatalf("Search(%q, %+v): %v", prefix, opts, err)
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = addr(it)
	}
	return out
}

func listNS(t testing.TB, s store.Store, opts store.NamespaceOptions) [][]string {
	t.Helper()
	ns, err := s.ListNamespaces(ctxb(), opts)
	if err != nil {
		t.Fatalf("ListNamespaces(%+v): %v", opts, err)
	}
	return ns
}

func tick() { time.Sleep(3 * time.Millisecond) }

func testGetPutDelete(t *testing.T, s store.Store) {
	ns := []string{"users", "ada"}
	_, err := s.Get(ctxb(), ns, "prefs")
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get missing = %v, want ErrNotFound", err)
	}
	before := time.Now().Add(-time.Minute)
	v := map[string]any{"theme": "dark", "size": 12}
	put(t, s, ns, "prefs", v)
	it := get(t, s, ns, "prefs")
	if !slices.Equal(it.Namespace, ns) || it.Key != "prefs" || !sameValue(it.Value, norm(t, v)) {
		t.Errorf("Get = %+v", it)
	}
	if it.CreatedAt.Before(before) || it.CreatedAt.After(time.Now().Add(time.Minute)) || !it.UpdatedAt.Equal(it.CreatedAt) {
		t.Errorf("times of a new item: created %v updated %v", it.CreatedAt, it.UpdatedAt)
	}
	// Other keys and namespaces are separate.
	if _, err := s.Get(ctxb(), ns, "other"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get other key = %v", err)
	}
	if _, err := s.Get(ctxb(), []string{"users"}, "prefs"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get parent namespace = %v", err)
	}
	if err := s.Delete(ctxb(), ns, "prefs"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctxb(), ns, "prefs"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get after Delete = %v", err)
	}
	if err := s.Delete(ctxb(), ns, "prefs"); err != nil {
		t.Errorf("Delete missing = %v", err)
	}
	if got := search(t, s, nil, store.SearchOptions{}); len(got) != 0 {
		t.Errorf("Search after Delete = %v", got)
	}
	// Empty namespace and empty key are items like any other.
	put(t, s, nil, "", map[string]any{"root": true})
	if it := get(t, s, []string{}, ""); it.Value["root"] != true || len(it.Namespace) != 0 {
		t.Errorf("root item = %+v", it)
	}
}

func testOverwrite(t *testing.T, s store.Store) {
	ns := []string{"n"}
	put(t, s, ns, "k", map[string]any{"v": 1})
	first := get(t, s, ns, "k")
	tick()
	put(t, s, ns, "k", map[string]any{"v": 2, "w": "x"})
	second := get(t, s, ns, "k")
	if !second.CreatedAt.Equal(first.CreatedAt) {
		t.Errorf("CreatedAt changed on overwrite: %v → %v", first.CreatedAt, second.CreatedAt)
	}
	if !second.UpdatedAt.After(first.UpdatedAt) {
		t.Errorf("UpdatedAt did not advance: %v → %v", first.UpdatedAt, second.UpdatedAt)
	}
	if !sameValue(second.Value, map[string]any{"v": 2.0, "w": "x"}) {
		t.Errorf("value after overwrite = %v", second.Value)
	}
	// Overwrite replaces the value, it does not merge.
	put(t, s, ns, "k", map[string]any{"only": true})
	if v := get(t, s, ns, "k").Value; !sameValue(v, map[string]any{"only": true}) {
		t.Errorf("value after second overwrite = %v", v)
	}
	// Deleting and putting again starts a new item.
	if err := s.Delete(ctxb(), ns, "k"); err != nil {
		t.Fatal(err)
	}
	tick()
	put(t, s, ns, "k", map[string]any{})
	if third := get(t, s, ns, "k"); !third.CreatedAt.After(first.CreatedAt) {
		t.Errorf("re-created item kept CreatedAt %v", third.CreatedAt)
	}
}

func testDistinctNamespaces(t *testing.T, s store.Store) {
	spaces := [][]string{
		{"a", "b"}, {"a.b"}, {"a/b"}, {"ab"}, {"a\x00b"}, {"a", "b", ""}, {"a", ""}, {"a"}, {"", "a"}, {"a\x01"}, {"日本", "語"},
	}
	for i, ns := range spaces {
		put(t, s, ns, "k", map[string]any{"i": i})
	}
	for i, ns := range spaces {
		it := get(t, s, ns, "k")
		if it.Value["i"] != float64(i) || !slices.Equal(it.Namespace, ns) {
			t.Errorf("Get(%q) = %q %v, want i=%d", ns, it.Namespace, it.Value, i)
		}
	}
	// A key is not a namespace element.
	put(t, s, []string{"x"}, "y", map[string]any{"which": "key"})
	put(t, s, []string{"x", "y"}, "", map[string]any{"which": "ns"})
	if it := get(t, s, []string{"x"}, "y"); it.Value["which"] != "key" {
		t.Errorf("x:y = %v", it.Value)
	}
	if it := get(t, s, []string{"x", "y"}, ""); it.Value["which"] != "ns" {
		t.Errorf("x/y: = %v", it.Value)
	}
	items, err := s.Search(ctxb(), []string{"a"}, store.SearchOptions{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, it := range items {
		got = append(got, it.Namespace)
	}
	want := [][]string{{"a"}, {"a", ""}, {"a", "b"}, {"a", "b", ""}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Search([a]) namespaces = %q, want %q", got, want)
	}
}

func seed(t *testing.T, s store.Store) {
	items := []struct {
		ns  []string
		key string
		v   map[string]any
	}{
		{[]string{"users", "ada", "memories"}, "m2", map[string]any{"kind": "fact", "n": 2}},
		{[]string{"users", "ada", "memories"}, "m1", map[string]any{"kind": "pref", "n": 1}},
		{[]string{"users", "ada"}, "profile", map[string]any{"kind": "profile", "n": 0}},
		{[]string{"users", "bob", "memories"}, "m1", map[string]any{"kind": "fact", "n": 3}},
		{[]string{"users2"}, "x", map[string]any{"kind": "fact", "n": 4}},
		{[]string{"docs"}, "readme", map[string]any{"kind": "doc", "n": 5}},
	}
	for _, it := range items {
		put(t, s, it.ns, it.key, it.v)
	}
}

func testSearchPrefix(t *testing.T, s store.Store) {
	seed(t, s)
	cases := []struct {
		prefix []string
		want   []string
	}{
		{nil, []string{"docs:readme", "users/ada:profile", "users/ada/memories:m1", "users/ada/memories:m2", "users/bob/memories:m1", "users2:x"}},
		{[]string{}, []string{"docs:readme", "users/ada:profile", "users/ada/memories:m1", "users/ada/memories:m2", "users/bob/memories:m1", "users2:x"}},
		{[]string{"users"}, []string{"users/ada:profile", "users/ada/memories:m1", "users/ada/memories:m2", "users/bob/memories:m1"}},
		{[]string{"users", "ada"}, []string{"users/ada:profile", "users/ada/memories:m1", "users/ada/memories:m2"}},
		{[]string{"users", "ada", "memories"}, []string{"users/ada/memories:m1", "users/ada/memories:m2"}},
		{[]string{"users", "a"}, nil},
		{[]string{"user"}, nil},
		{[]string{"users", "ada", "memories", "deeper"}, nil},
		{[]string{"nope"}, nil},
	}
	for _, c := range cases {
		if got := search(t, s, c.prefix, store.SearchOptions{}); !slices.Equal(got, c.want) {
			t.Errorf("Search(%q) = %q, want %q", c.prefix, got, c.want)
		}
	}
	items, err := s.Search(ctxb(), []string{"docs"}, store.SearchOptions{})
	if err != nil || len(items) != 1 {
		t.Fatalf("Search(docs) = %v, %v", items, err)
	}
	if it := items[0]; it.Value["kind"] != "doc" || it.CreatedAt.IsZero() || it.UpdatedAt.IsZero() {
		t.Errorf("Search item = %+v", it)
	}
}

func testSearchOrderAndPaging(t *testing.T, s store.Store) {
	// Keys and namespaces put in scrambled order.
	var want []string
	for _, ns := range []string{"b", "a", "c"} {
		for _, k := range []string{"k3", "k1", "k2", "K", "k10", "é"} {
			put(t, s, []string{"p", ns}, k, map[string]any{"ns": ns, "k": k})
		}
	}
	for _, ns := range []string{"a", "b", "c"} {
		for _, k := range []string{"K", "k1", "k10", "k2", "k3", "é"} { // bytewise order
			want = append(want, "p/"+ns+":"+k)
		}
	}
	if got := search(t, s, []string{"p"}, store.SearchOptions{Limit: 100}); !slices.Equal(got, want) {
		t.Errorf("Search order =\n%q\nwant\n%q", got, want)
	}
	if got := search(t, s, []string{"p"}, store.SearchOptions{}); !slices.Equal(got, want[:10]) {
		t.Errorf("default limit: %d items %q, want the first 10", len(got), got)
	}
	pages := []struct {
		opts store.SearchOptions
		want []string
	}{
		{store.SearchOptions{Limit: 4}, want[:4]},
		{store.SearchOptions{Limit: 4, Offset: 4}, want[4:8]},
		{store.SearchOptions{Limit: 5, Offset: 15}, want[15:]},
		{store.SearchOptions{Offset: 17}, want[17:]},
		{store.SearchOptions{Offset: 18}, nil},
		{store.SearchOptions{Offset: 100, Limit: 3}, nil},
		{store.SearchOptions{Offset: -3, Limit: -1}, want[:10]},
		{store.SearchOptions{Filter: map[string]any{"ns": "b"}, Limit: 2, Offset: 3}, want[9:11]},
	}
	for _, p := range pages {
		if got := search(t, s, []string{"p"}, p.opts); !slices.Equal(got, p.want) {
			t.Errorf("Search(%+v) = %q, want %q", p.opts, got, p.want)
		}
	}
}

func testSearchFilter(t *testing.T, s store.Store) {
	put(t, s, []string{"f"}, "a", map[string]any{"s": "x", "n": 1, "b": true, "z": nil, "o": map[string]any{"p": 1, "q": []any{1, "two"}}, "arr": []any{1, 2}})
	put(t, s, []string{"f"}, "b", map[string]any{"s": "x", "n": 2.5, "b": false, "o": map[string]any{"q": []any{1, "two"}, "p": 1}})
	put(t, s, []string{"f"}, "c", map[string]any{"s": "y", "n": 1.0, "arr": []any{2, 1}})
	put(t, s, []string{"g"}, "d", map[string]any{"s": "x"})
	cases := []struct {
		filter map[string]any
		want   []string
	}{
		{nil, []string{"f:a", "f:b", "f:c"}},
		{map[string]any{}, []string{"f:a", "f:b", "f:c"}},
		{map[string]any{"s": "x"}, []string{"f:a", "f:b"}},
		{map[string]any{"s": "x", "b": false}, []string{"f:b"}},
		{map[string]any{"n": 1}, []string{"f:a", "f:c"}},
		{map[string]any{"n": 1.0}, []string{"f:a", "f:c"}},
		{map[string]any{"n": 2.5}, []string{"f:b"}},
		{map[string]any{"n": "1"}, nil},
		{map[string]any{"b": true}, []string{"f:a"}},
		{map[string]any{"b": 1}, nil},
		{map[string]any{"z": nil}, []string{"f:a"}},
		{map[string]any{"o": map[string]any{"q": []any{1, "two"}, "p": 1}}, []string{"f:a", "f:b"}},
		{map[string]any{"o": map[string]any{"p": 1}}, nil},
		{map[string]any{"arr": []any{1, 2}}, []string{"f:a"}},
		{map[string]any{"missing": "x"}, nil},
		{map[string]any{"s": "X"}, nil},
	}
	for _, c := range cases {
		if got := search(t, s, []string{"f"}, store.SearchOptions{Filter: c.filter}); !slices.Equal(got, c.want) {
			t.Errorf("Search(filter %v) = %q, want %q", c.filter, got, c.want)
		}
	}
	if got := search(t, s, nil, store.SearchOptions{Filter: map[string]any{"s": "x"}}); !slices.Equal(got, []string{"f:a", "f:b", "g:d"}) {
		t.Errorf("Search(all, s=x) = %q", got)
	}
}

func testListNamespaces(t *testing.T, s store.Store) {
	seed(t, s)
	put(t, s, []string{"users", "ada", "memories"}, "m3", map[string]any{})
	all := [][]string{{"docs"}, {"users", "ada"}, {"users", "ada", "memories"}, {"users", "bob", "memories"}, {"users2"}}
	cases := []struct {
		opts store.NamespaceOptions
		want [][]string
	}{
		{store.NamespaceOptions{}, all},
		{store.NamespaceOptions{Prefix: []string{"users"}}, all[1:4]},
		{store.NamespaceOptions{Prefix: []string{"users", "ada"}}, all[1:3]},
		{store.NamespaceOptions{Prefix: []string{"user"}}, nil},
		{store.NamespaceOptions{MaxDepth: 1}, [][]string{{"docs"}, {"users"}, {"users2"}}},
		{store.NamespaceOptions{MaxDepth: 2}, [][]string{{"docs"}, {"users", "ada"}, {"users", "bob"}, {"users2"}}},
		{store.NamespaceOptions{MaxDepth: 2, Prefix: []string{"users"}}, [][]string{{"users", "ada"}, {"users", "bob"}}},
		{store.NamespaceOptions{MaxDepth: 9}, all},
		{store.NamespaceOptions{Limit: 2}, all[:2]},
		{store.NamespaceOptions{Limit: 2, Offset: 2}, all[2:4]},
		{store.NamespaceOptions{Offset: 4}, all[4:]},
		{store.NamespaceOptions{Offset: 5}, nil},
		{store.NamespaceOptions{MaxDepth: 1, Offset: 1, Limit: 1}, [][]string{{"users"}}},
	}
	for _, c := range cases {
		got := listNS(t, s, c.opts)
		if len(got) != len(c.want) || (len(got) > 0 && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("ListNamespaces(%+v) = %q, want %q", c.opts, got, c.want)
		}
	}
	// The default limit is 100.
	for i := range 105 {
		put(t, s, []string{"many", fmt.Sprintf("%03d", i)}, "k", nil)
	}
	got := listNS(t, s, store.NamespaceOptions{Prefix: []string{"many"}})
	if len(got) != 100 || got[0][1] != "000" || got[99][1] != "099" {
		t.Errorf("default limit: %d namespaces", len(got))
	}
	// Deleting the last item of a namespace removes it.
	for _, k := range []string{"m1", "m2", "m3"} {
		if err := s.Delete(ctxb(), []string{"users", "ada", "memories"}, k); err != nil {
			t.Fatal(err)
		}
	}
	if got := listNS(t, s, store.NamespaceOptions{Prefix: []string{"users"}}); !reflect.DeepEqual(got, [][]string{{"users", "ada"}, {"users", "bob", "memories"}}) {
		t.Errorf("after deletes: %q", got)
	}
}

func testValues(t *testing.T, s store.Store) {
	values := map[string]map[string]any{
		"nested": {"a": map[string]any{"b": map[string]any{"c": []any{1, map[string]any{"d": nil}, []any{}}}}, "e": map[string]any{}},
		"numbers": {"int": 42, "neg": -7, "float": 3.25, "big": 1e300, "small": 5e-324, "max53": float64(1 << 53), "zero": 0,
			"i64": int64(-9007199254740991), "u8": uint8(200), "f32": float32(0.5)},
		"unicode": {"ko": "한국어", "zh": "中文", "emoji": "😀👍🏽", "rtl": "العربية", "ctl": "tab\tnl\n\"q\" \\ <>&", "sep": "a\u2028b", "ключ": "значение"},
		"types":   {"t": true, "f": false, "n": nil, "s": "", "arr": []any{"x", 1.5, true, nil}},
		"structs": {"tagged": struct {
			A int    `json:"a"`
			B string `json:"b,omitempty"`
		}{A: 1}},
		"empty": {},
		"nil":   nil,
	}
	for k, v := range values {
		put(t, s, []string{"v"}, k, v)
	}
	for k, v := range values {
		it := get(t, s, []string{"v"}, k)
		if want := norm(t, v); !sameValue(it.Value, want) {
			t.Errorf("value %s = %#v, want %#v", k, it.Value, want)
		}
	}
	items, err := s.Search(ctxb(), []string{"v"}, store.SearchOptions{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if want := norm(t, values[it.Key]); !sameValue(it.Value, want) {
			t.Errorf("searched value %s = %#v, want %#v", it.Key, it.Value, want)
		}
	}
	// A large value.
	big := make([]any, 20000)
	for i := range big {
		big[i] = fmt.Sprintf("item %d ✓", i)
	}
	put(t, s, []string{"v"}, "big", map[string]any{"list": big})
	if got := get(t, s, []string{"v"}, "big").Value["list"].([]any); len(got) != len(big) || got[19999] != big[19999] {
		t.Errorf("big value: %d entries", len(got))
	}
}

func testBadValues(t *testing.T, s store.Store) {
	bad := map[string]map[string]any{
		"func": {"f": func() {}},
		"chan": {"c": make(chan int)},
		"nan":  {"n": math.NaN()},
		"inf":  {"n": math.Inf(1)},
	}
	for name, v := range bad {
		if err := s.Put(ctxb(), []string{"bad"}, name, v); err == nil {
			t.Errorf("Put of a %s value succeeded", name)
		}
		if _, err := s.Get(ctxb(), []string{"bad"}, name); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a refused %s value was stored: %v", name, err)
		}
	}
	put(t, s, []string{"bad"}, "ok", map[string]any{"a": 1})
	if _, err := s.Search(ctxb(), nil, store.SearchOptions{Filter: map[string]any{"f": func() {}}}); err == nil {
		t.Errorf("Search with a function in the filter succeeded")
	}
}

func testIsolation(t *testing.T, s store.Store) {
	inner := map[string]any{"x": 1}
	list := []any{1, 2}
	v := map[string]any{"inner": inner, "list": list, "s": "a"}
	put(t, s, []string{"i"}, "k", v)
	v["s"] = "changed"
	inner["x"] = 2
	list[0] = 9
	v["new"] = true
	want := map[string]any{"inner": map[string]any{"x": 1.0}, "list": []any{1.0, 2.0}, "s": "a"}
	it := get(t, s, []string{"i"}, "k")
	if !sameValue(it.Value, want) {
		t.Fatalf("changing the put value changed the store: %v", it.Value)
	}
	it.Value["s"] = "changed"
	it.Value["inner"].(map[string]any)["x"] = 3
	it.Value["list"].([]any)[1] = 7
	it.Namespace[0] = "changed"
	if got := get(t, s, []string{"i"}, "k"); !sameValue(got.Value, want) {
		t.Errorf("changing a got value changed the store: %v", got.Value)
	}
	items, err := s.Search(ctxb(), []string{"i"}, store.SearchOptions{})
	if err != nil || len(items) != 1 {
		t.Fatal(items, err)
	}
	items[0].Value["inner"].(map[string]any)["x"] = 4
	if got := get(t, s, []string{"i"}, "k"); !sameValue(got.Value, want) {
		t.Errorf("changing a searched value changed the store: %v", got.Value)
	}
	ns := []string{"j", "k"}
	put(t, s, ns, "x", nil)
	ns[0] = "changed"
	get(t, s, []string{"j", "k"}, "x")
}

func testCanceledContext(t *testing.T, s store.Store) {
	put(t, s, []string{"c"}, "k", map[string]any{"v": 1})
	ctx, cancel := context.WithCancel(ctxb())
	cancel()
	calls := map[string]func() error{
		"Get":    func() error { _, err := s.Get(ctx, []string{"c"}, "k"); return err },
		"Put":    func() error { return s.Put(ctx, []string{"c"}, "k", map[string]any{"v": 2}) },
		"Delete": func() error { return s.Delete(ctx, []string{"c"}, "k") },
		"Search": func() error { _, err := s.Search(ctx, nil, store.SearchOptions{}); return err },
		"ListNamespaces": func() error {
			_, err := s.ListNamespaces(ctx, store.NamespaceOptions{})
			return err
		},
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: %v", name, err)
		}
	}
	if v := get(t, s, []string{"c"}, "k").Value; v["v"] != 1.0 {
		t.Errorf("value after canceled calls = %v", v)
	}
}

func testConcurrency(t *testing.T, s store.Store) {
	const workers, n = 6, 20
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			own := []string{"own", fmt.Sprint(w)}
			for i := range n {
				key := fmt.Sprint(i)
				if err := s.Put(ctxb(), own, key, map[string]any{"i": i, "w": w}); err != nil {
					t.Errorf("Put: %v", err)
					return
				}
				if err := s.Put(ctxb(), []string{"shared"}, key, map[string]any{"w": w}); err != nil {
					t.Errorf("Put shared: %v", err)
					return
				}
				it, err := s.Get(ctxb(), own, key)
				if err != nil || it.Value["i"] != float64(i) {
					t.Errorf("Get own: %v, %v", it, err)
					return
				}
				if _, err := s.Search(ctxb(), []string{"shared"}, store.SearchOptions{Filter: map[string]any{"w": w}}); err != nil {
					t.Errorf("Search: %v", err)
				}
				if _, err := s.ListNamespaces(ctxb(), store.NamespaceOptions{MaxDepth: 1}); err != nil {
					t.Errorf("ListNamespaces: %v", err)
				}
				if i%3 == 0 {
					if err := s.Delete(ctxb(), own, key); err != nil {
						t.Errorf("Delete: %v", err)
					}
				}
			}
		})
	}
	wg.Wait()
	for w := range workers {
		items, err := s.Search(ctxb(), []string{"own", fmt.Sprint(w)}, store.SearchOptions{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if want := n - (n+2)/3; len(items) != want {
			t.Errorf("worker %d has %d items, want %d", w, len(items), want)
		}
	}
	if items := search(t, s, []string{"shared"}, store.SearchOptions{Limit: 100}); len(items) != n {
		t.Errorf("shared has %d items, want %d", len(items), n)
	}
}

// testPutAll: store.PutAll puts every item (in one transaction, for a
// BatchPutter), replacing those there; a value that cannot be stored
// fails a BatchPutter's batch whole.
func testPutAll(t *testing.T, s store.Store) {
	ctx := ctxb()
	if err := s.Put(ctx, []string{"b"}, "k0", map[string]any{"v": "old"}); err != nil {
		t.Fatal(err)
	}
	items := []store.Item{
		{Namespace: []string{"b"}, Key: "k0", Value: map[string]any{"v": "new"}},
		{Namespace: []string{"b"}, Key: "k1", Value: map[string]any{"v": 1.0}},
		{Namespace: []string{"b", "c"}, Key: "k2", Value: map[string]any{}},
	}
	if err := store.PutAll(ctx, s, items); err != nil {
		t.Fatal(err)
	}
	for _, want := range items {
		it, err := s.Get(ctx, want.Namespace, want.Key)
		if err != nil {
			t.Fatalf("%v/%s: %v", want.Namespace, want.Key, err)
		}
		if !reflect.DeepEqual(it.Value, norm(t, want.Value)) {
			t.Errorf("%v/%s = %v, want %v", want.Namespace, want.Key, it.Value, want.Value)
		}
	}
	if _, ok := s.(store.BatchPutter); !ok {
		return
	}
	bad := []store.Item{
		{Namespace: []string{"b"}, Key: "k3", Value: map[string]any{"v": 3.0}},
		{Namespace: []string{"b"}, Key: "k4", Value: map[string]any{"f": func() {}}},
	}
	if err := store.PutAll(ctx, s, bad); err == nil {
		t.Fatal("a batch with a value that is not JSON was put")
	}
	if _, err := s.Get(ctx, []string{"b"}, "k3"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a failed batch left its first item: %v", err)
	}
}
