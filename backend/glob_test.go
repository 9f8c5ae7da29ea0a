package backend

import (
	"path"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// FuzzGlob checks that any pattern compiles or is refused without a panic,
// and that where the references' rules agree with plain doublestar (no
// braces, no name starting with ".", no final "**", a normal pattern) the
// two match alike.
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{
		{"*.py", "src/app/main.py"}, {"**/*.go", "a/b/c.go"}, {"src/**", "src/x"},
		{"{a,{b,c}}.py", "c.py"}, {"[^a].py", "b.py"}, {".*", ".env"}, {"{", "x"},
		{"a/**/b", "a/b"}, {"**/x/**/y", "x/y/x/y"}, {"\\{x}", "{x}"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, rel string) {
		g, err := compileGlob(pattern)
		if err != nil {
			return
		}
		rel = strings.Trim(path.Clean("/"+rel), "/")
		if rel == "" {
			return
		}
		got := g.match(rel)
		g.mayHold(rel)
		g.remainders(rel)
		if g.bare || strings.ContainsAny(pattern, "{}\\") || strings.HasSuffix(pattern, "**") ||
			strings.Contains("/"+rel, "/.") || strings.Contains(pattern, "//") || strings.HasPrefix(pattern, "/") ||
			strings.HasPrefix(pattern, "./") || strings.Contains(pattern, "/./") || strings.HasSuffix(pattern, "/.") || strings.HasSuffix(pattern, "/") ||
			strings.Contains(pattern, "[") && strings.Contains(pattern, "/") { // "/" in a class: never a path

			return
		}
		for e := range strings.SplitSeq(pattern, "/") {
			if e != "**" && strings.Contains(e, "**") { // doublestar reads these its own way
				return
			}
		}
		if want := doublestar.MatchUnvalidated(pattern, rel); got != want {
			t.Errorf("match(%q, %q) = %v, doublestar says %v", pattern, rel, got, want)
		}
	})
}

// TestGlobMatchAllocatesNothing: match runs for every file a walk meets.
func TestGlobMatchAllocatesNothing(t *testing.T) {
	for _, p := range []string{"*.go", "**/*.go", "src/**/x/*.go", "{a,b}/**/*.{go,md}"} {
		g, err := compileGlob(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() { g.match("src/a/b/x/c.go") }); n != 0 {
			t.Errorf("match with %q: %v allocations", p, n)
		}
	}
}
