package thread

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFilesIndexMatchesBruteForce checks the directory index against the
// answers computed from the whole map, over random puts and deletes.
func TestFilesIndexMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	names := []string{"a", "b", "c"}
	randPath := func() string {
		p := ""
		for range 1 + rng.IntN(4) {
			p += "/" + names[rng.IntN(len(names))]
		}
		return p + fmt.Sprint(rng.IntN(3))
	}
	f := NewFiles(map[string]FileData{"/seed/x": {Content: "x"}})
	for i := range 3000 {
		p := randPath()
		switch rng.IntN(4) {
		case 0:
			f.Delete(p)
		case 1:
			f.Apply(map[string]*FileData{p: nil, randPath(): {Content: "applied"}})
		default:
			f.Put(p, FileData{Content: fmt.Sprint(i)})
		}
		if i%100 != 0 {
			continue
		}
		all := f.Snapshot()
		for _, dir := range []string{"/", "/a", "/a/b", "/b/c/a", "/seed", "/c"} {
			if got, want := f.List(dir), bruteList(all, dir); !slices.Equal(got, want) {
				t.Fatalf("step %d: List(%s) = %v, want %v", i, dir, got, want)
			}
			if got, want := f.IsDir(dir), dir == "/" || len(bruteList(all, dir)) > 0; got != want {
				t.Fatalf("step %d: IsDir(%s) = %v, want %v", i, dir, got, want)
			}
			want := map[string]FileData{}
			for k, v := range all {
				if under(k, dir) {
					want[k] = v
				}
			}
			if got := f.Subtree(dir); !maps.Equal(got, want) {
				t.Fatalf("step %d: Subtree(%s) has %d files, want %d", i, dir, len(got), len(want))
			}
		}
	}
	// The index survives a JSON round trip.
	b, _ := f.MarshalJSON()
	var g Files
	if err := g.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(paths(g.List("/")), paths(f.List("/"))) {
		t.Error("index lost in a JSON round trip")
	}
}

func paths(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Path
	}
	return out
}

// under reports whether p is dir or lies below it.
func under(p, dir string) bool {
	return dir == "/" || p == dir || strings.HasPrefix(p, dir+"/")
}

// bruteList lists dir's children from the whole map, without the index.
func bruteList(all map[string]FileData, dir string) []Entry {
	prefix := strings.TrimSuffix(dir, "/") + "/"
	kids := map[string]Entry{}
	for p, d := range all {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		name, _, deeper := strings.Cut(rest, "/")
		if deeper {
			kids[prefix+name] = Entry{Path: prefix + name, IsDir: true}
		} else if _, seen := kids[p]; !seen {
			kids[p] = Entry{Path: p, Size: int64(len(d.Content)), ModTime: d.ModifiedAt}
		}
	}
	out := slices.Collect(maps.Values(kids))
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// TestAppendIsAmortized checks that appending to a file costs what is
// appended, not the file's size, and that contents read before an append
// do not change after it.
func TestAppendIsAmortized(t *testing.T) {
	f := NewFiles(nil)
	now := time.Now()
	chunk := strings.Repeat("x", 1000) + "\n"
	var want strings.Builder
	var snapshots []string
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range 5000 {
		f.Append("/h.md", chunk, now)
		want.WriteString(chunk)
		if i%1000 == 0 {
			d, _ := f.Get("/h.md")
			snapshots = append(snapshots, d.Content)
		}
	}
	runtime.ReadMemStats(&after)
	d, _ := f.Get("/h.md")
	if d.Content != want.String() {
		t.Fatalf("content after 5,000 appends: %d bytes, want %d", len(d.Content), want.Len())
	}
	for i, s := range snapshots {
		if n := (i*1000 + 1) * len(chunk); len(s) != n || strings.Count(s, "\n") != i*1000+1 {
			t.Errorf("snapshot %d changed: %d bytes, want %d", i, len(s), n)
		}
	}
	// 5 MB appended; copying the file on every append would allocate
	// about 12.5 GB.
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("5,000 appends of 1 KB allocated %d bytes", got)
	}
	// A rewrite replaces the buffer: later appends do not touch the old
	// content.
	old := d.Content
	f.Put("/h.md", FileData{Content: "new\n"})
	f.Append("/h.md", "more\n", now)
	if d, _ := f.Get("/h.md"); d.Content != "new\nmore\n" || old != want.String() {
		t.Errorf("after a rewrite: %q", d.Content)
	}
}
