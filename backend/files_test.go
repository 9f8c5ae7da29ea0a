package backend

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
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
			if got, want := f.List(dir), memList(all, dir); !slices.Equal(paths(got), paths(want)) || !slices.EqualFunc(got, want, func(x, y FileInfo) bool { return x.IsDir == y.IsDir }) {
				t.Fatalf("step %d: List(%s) = %v, want %v", i, dir, got, want)
			}
			if got, want := f.IsDir(dir), dir == "/" || memIsDir(all, dir); got != want {
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

func paths(fis []FileInfo) []string {
	out := make([]string, len(fis))
	for i, fi := range fis {
		out[i] = fi.Path
	}
	return out
}

// FuzzStringLines checks that reading in-memory content gives what reading
// it through a reader gives.
func FuzzStringLines(f *testing.F) {
	f.Add("a\nb\n", 0, 0)
	f.Add("a\r\nb", 1, 1)
	f.Add("", 0, 5)
	f.Add("\n\n\n", 2, 1)
	f.Add("x", 3, 0)
	f.Fuzz(func(t *testing.T, s string, offset, limit int) {
		offset, limit = offset%50, limit%50
		want, werr := scanLines(strings.NewReader(s), offset, limit)
		got, gerr := stringLines(s, offset, limit)
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Fatalf("%q %d %d: errors %v / %v", s, offset, limit, werr, gerr)
		}
		if !slices.Equal(want.Lines, got.Lines) || want.Offset != got.Offset {
			t.Fatalf("%q %d %d: %q@%d, want %q@%d", s, offset, limit, got.Lines, got.Offset, want.Lines, want.Offset)
		}
	})
}
