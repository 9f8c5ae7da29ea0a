package backend

import (
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func TestGlobSpecPruning(t *testing.T) {
	for _, tc := range []struct {
		pattern, dir string
		root         string
		holds        map[string]bool
	}{
		{"*.go", "/", "/", map[string]bool{"/a": true, "/.git": true}}, // names at any depth
		{"**/*.go", "/", "/", map[string]bool{"/a/b": true, "/.git": false, "/a/.cache": false}},
		{".github/**/*.yml", "/", "/.github", map[string]bool{"/.github/workflows": true}},
		{"src/*.go", "/", "/src", map[string]bool{"/src": true, "/src/x": false}},
		{"*/x/*.go", "/", "/", map[string]bool{"/a": true, "/a/x": true, "/a/y": false, "/a/x/z": false}},
		{"a/**/b/*.go", "/p", "/p/a", map[string]bool{"/p/a/q/r": true}},
		{"src/**", "/", "/src", map[string]bool{"/src/a/b": true}},
		{"/abs/*.go", "/abs/deeper", "/abs/deeper", nil},
		{"{a,b}/*.go", "/", "/", map[string]bool{"/a": true, "/c": false, "/a/d": false}},
	} {
		g, err := newGlobSpec(tc.pattern, tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		if g.root != tc.root {
			t.Errorf("%q in %q: root %q, want %q", tc.pattern, tc.dir, g.root, tc.root)
		}
		for d, want := range tc.holds {
			if got := g.mayHold(d); got != want {
				t.Errorf("%q: mayHold(%q) = %v, want %v", tc.pattern, d, got, want)
			}
		}
	}
	if g, _ := newGlobSpec("/other/*.go", "/src"); !g.empty {
		t.Error("an absolute pattern outside the directory should match nothing")
	}
}

func TestScanLinesLongAndCRLF(t *testing.T) {
	long := strings.Repeat("x", 200_000)
	r, err := scanLines(strings.NewReader("a\r\n"+long+"\r\nb"), 1, 1)
	if err != nil || len(r.Lines) != 1 || r.Lines[0] != long {
		t.Fatalf("long line: %d lines, %v", len(r.Lines), err)
	}
}

func TestScanLinesLineBreaks(t *testing.T) {
	for _, in := range []string{"a\rb\r\nc\n\rd\r", "\r\r\n\r", "x", "x\r\n", "\r", "a\r\r\r\nb"} {
		want, err := stringLines(in, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		// One byte a read splits every \r\n across reads.
		got, err := scanLines(iotest.OneByteReader(strings.NewReader(in)), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Lines, want.Lines) {
			t.Errorf("%q: scanLines %q, stringLines %q", in, got.Lines, want.Lines)
		}
	}
}
