package backendtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/backend"
)

// Factory returns a new, empty backend for one test. It may register
// cleanups with t.
type Factory func(t *testing.T) backend.Backend

// Options adapts the suite to a backend.
type Options struct {
	// Dir is the directory under which the suite puts its files, "/"
	// when empty. Set it for backends whose paths are host paths, such as
	// a Filesystem in non-virtual mode (give it a temporary directory).
	Dir string
	// SkipExecute skips the Execute tests of a backend that implements
	// backend.Sandbox.
	SkipExecute bool
	// Preexisting names directories the backend lists even when empty,
	// such as the routes of a backend.Composite ("/memories"). Listings
	// may show them besides the suite's own files.
	Preexisting []string
	// SkipConcurrentEdits skips the check that parallel edits of one file
	// within one process all land (for backends over a store without
	// atomic updates).
	SkipConcurrentEdits bool
}

// Run runs the conformance suite with default options.
func Run(t *testing.T, factory Factory) {
	t.Helper()
	RunWith(t, factory, Options{})
}

// RunWith runs the conformance suite.
func RunWith(t *testing.T, factory Factory, opts Options) {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = "/"
	}
	s := &suite{factory: factory, opts: opts}
	t.Run("Write", s.testWrite)
	t.Run("Read", s.testRead)
	t.Run("Edit", s.testEdit)
	t.Run("List", s.testList)
	t.Run("Glob", s.testGlob)
	t.Run("Grep", s.testGrep)
	t.Run("UploadDownload", s.testUploadDownload)
	t.Run("Append", s.testAppend)
	t.Run("Concurrency", s.testConcurrency)
	t.Run("Execute", s.testExecute)
}

type suite struct {
	factory Factory
	opts    Options
	seq     atomic.Int64
}

// env is where one test's files live: "/" or, with Options.Dir, a fresh
// directory below it.
type env struct{ dir string }

// p returns the path the test uses for the virtual path name.
func (e env) p(name string) string { return path.Join(e.dir, name) }

// ps maps p over names.
func (e env) ps(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = e.p(n)
	}
	return out
}

// fresh returns a new backend holding the given files (virtual name to
// content), written with Write.
func (s *suite) fresh(t *testing.T, files map[string]string) (backend.Backend, env) {
	t.Helper()
	b := s.factory(t)
	if b == nil {
		t.Fatal("factory returned a nil backend")
	}
	e := env{dir: "/"}
	if s.opts.Dir != "/" {
		e.dir = path.Join(s.opts.Dir, fmt.Sprintf("t%04d", s.seq.Add(1)))
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := b.Write(t.Context(), e.p(name), files[name]); err != nil {
			t.Fatalf("Write(%q): %v", e.p(name), err)
		}
	}
	return b, e
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error %v, want one matching %v", what, err, target)
	}
}

func noErr(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", what, err)
	}
}

// content reads a whole file back as its lines joined with "\n".
func content(t *testing.T, b backend.Backend, p string) []string {
	t.Helper()
	r, err := b.Read(t.Context(), p, 0, 0)
	if err != nil {
		t.Fatalf("Read(%q): %v", p, err)
	}
	return r.Lines
}

func equalLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %q, want %q", what, got, want)
	}
}

func download(t *testing.T, b backend.Backend, p string) []byte {
	t.Helper()
	r := b.Download(t.Context(), []string{p})
	if len(r) != 1 {
		t.Fatalf("Download(%q): %d results, want 1", p, len(r))
	}
	if r[0].Err != nil {
		t.Fatalf("Download(%q): %v", p, r[0].Err)
	}
	return r[0].Content
}

func (s *suite) testWrite(t *testing.T) {
	ctx := t.Context()
	t.Run("Create", func(t *testing.T) {
		b, e := s.fresh(t, nil)
		noErr(t, "Write", b.Write(ctx, e.p("/a.txt"), "hello\nworld\n"))
		equalLines(t, "read back", content(t, b, e.p("/a.txt")), []string{"hello", "world"})
		if got := string(download(t, b, e.p("/a.txt"))); got != "hello\nworld\n" {
			t.Errorf("downloaded %q, want the exact bytes written", got)
		}
	})
	t.Run("CreateOnly", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/a.txt": "one"})
		wantErr(t, "Write over an existing file", b.Write(ctx, e.p("/a.txt"), "two"), backend.ErrExists)
		equalLines(t, "content after refused write", content(t, b, e.p("/a.txt")), []string{"one"})
	})
	t.Run("MakesParents", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/d1/d2/f.txt": "x"})
		ls, err := b.List(ctx, e.p("/d1"))
		noErr(t, "List", err)
		if len(ls) != 1 || ls[0].Path != e.p("/d1/d2") || !ls[0].IsDir {
			t.Errorf("List(/d1) = %+v, want the directory /d1/d2", ls)
		}
		equalLines(t, "nested file", content(t, b, e.p("/d1/d2/f.txt")), []string{"x"})
	})
	t.Run("NormalisesPath", func(t *testing.T) {
		if s.opts.Dir != "/" {
			t.Skip("paths are host paths")
		}
		b, _ := s.fresh(t, nil)
		noErr(t, "Write", b.Write(ctx, "n/./m.txt", "x"))
		equalLines(t, "read by clean path", content(t, b, "/n/m.txt"), []string{"x"})
		wantErr(t, "Write of the same file by another spelling", b.Write(ctx, "//n//m.txt", "y"), backend.ErrExists)
	})
	t.Run("OverDirectory", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/d/f.txt": "x"})
		err := b.Write(ctx, e.p("/d"), "y")
		if !errors.Is(err, backend.ErrExists) && !errors.Is(err, backend.ErrIsDir) {
			t.Errorf("Write over a directory: error %v, want ErrExists or ErrIsDir", err)
		}
	})
	t.Run("UnderFile", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/f.txt": "x"})
		if err := b.Write(ctx, e.p("/f.txt/g.txt"), "y"); err == nil {
			t.Error("Write below a file succeeded")
		}
		equalLines(t, "the file", content(t, b, e.p("/f.txt")), []string{"x"})
	})
	t.Run("InvalidPath", func(t *testing.T) {
		b, e := s.fresh(t, nil)
		for _, p := range []string{"../x.txt", strings.TrimSuffix(e.dir, "/") + "/a/../../x.txt", "~/x.txt", "C:\\x.txt", "/a\x00b"} {
			wantErr(t, fmt.Sprintf("Write(%q)", p), b.Write(ctx, p, "x"), backend.ErrInvalidPath)
		}
	})
	t.Run("Empty", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/e.txt": ""})
		r, err := b.Read(ctx, e.p("/e.txt"), 0, 10)
		noErr(t, "Read of an empty file", err)
		if len(r.Lines) != 0 {
			t.Errorf("empty file read as %q", r.Lines)
		}
	})
}

func (s *suite) testRead(t *testing.T) {
	ctx := t.Context()
	t.Run("Missing", func(t *testing.T) {
		b, e := s.fresh(t, nil)
		_, err := b.Read(ctx, e.p("/nope.txt"), 0, 10)
		wantErr(t, "Read of a missing file", err, backend.ErrNotFound)
	})
	t.Run("Directory", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/d/f.txt": "x"})
		_, err := b.Read(ctx, e.p("/d"), 0, 10)
		wantErr(t, "Read of a directory", err, backend.ErrIsDir)
	})
	t.Run("Window", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/f.txt": "l1\nl2\nl3\nl4\nl5\n"})
		for _, tc := range []struct {
			offset, limit int
			want          []string
			wantOffset    int
		}{
			{0, 2000, []string{"l1", "l2", "l3", "l4", "l5"}, 0},
			{0, 2, []string{"l1", "l2"}, 0},
			{1, 2, []string{"l2", "l3"}, 1},
			{3, 10, []string{"l4", "l5"}, 3},
			{4, 1, []string{"l5"}, 4},
			{2, 0, []string{"l3", "l4", "l5"}, 2},
			{-3, 1, []string{"l1"}, 0},
		} {
			r, err := b.Read(ctx, e.p("/f.txt"), tc.offset, tc.limit)
			what := fmt.Sprintf("Read(offset %d, limit %d)", tc.offset, tc.limit)
			noErr(t, what, err)
			equalLines(t, what, r.Lines, tc.want)
			if r.Offset != tc.wantOffset {
				t.Errorf("%s: Offset %d, want %d", what, r.Offset, tc.wantOffset)
			}
		}
	})
	t.Run("PastEnd", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/f.txt": "a\nb\nc\n", "/g.txt": "a\nb"})
		for _, tc := range []struct {
			file          string
			offset, lines int
		}{{"/f.txt", 3, 3}, {"/f.txt", 100, 3}, {"/g.txt", 2, 2}} {
			_, err := b.Read(ctx, e.p(tc.file), tc.offset, 10)
			wantErr(t, fmt.Sprintf("Read(%s, offset %d)", tc.file, tc.offset), err, backend.ErrOffset)
			var oe *backend.OffsetError
			if !errors.As(err, &oe) {
				t.Errorf("Read past the end: error %v is not an *OffsetError", err)
				continue
			}
			if oe.Offset != tc.offset || oe.Lines != tc.lines {
				t.Errorf("OffsetError{Offset: %d, Lines: %d}, want {%d, %d}", oe.Offset, oe.Lines, tc.offset, tc.lines)
			}
		}
	})
	t.Run("EmptyFileAnyOffset", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/e.txt": ""})
		for _, off := range []int{0, 5} {
			r, err := b.Read(ctx, e.p("/e.txt"), off, 10)
			noErr(t, fmt.Sprintf("Read(empty, offset %d)", off), err)
			if len(r.Lines) != 0 {
				t.Errorf("Read(empty, offset %d) = %q, want no lines", off, r.Lines)
			}
		}
	})
	t.Run("LineRules", func(t *testing.T) {
		cases := []struct {
			content string
			want    []string
		}{
			{"a", []string{"a"}},
			{"a\n", []string{"a"}},
			{"a\nb", []string{"a", "b"}},
			{"a\n\n", []string{"a", ""}},
			{"\n", []string{""}},
			{"\n\nx", []string{"", "", "x"}},
			{"a\r\nb\r\n", []string{"a", "b"}},
			{"old\rmac\rlines", []string{"old", "mac", "lines"}}, // a bare \r ends a line too
			{"a\r\r\nb\r", []string{"a", "", "b"}},
			{"caf\xe9\n\xff\n", []string{"caf\xe9", "\xff"}}, // bytes as they are; the tool shows U+FFFD
			{"tab\there\n  spaced  \n", []string{"tab\there", "  spaced  "}},
			{"héllo wörld ✓\n", []string{"héllo wörld ✓"}},
		}
		files := map[string]string{}
		for i, c := range cases {
			files[fmt.Sprintf("/c%d.txt", i)] = c.content
		}
		b, e := s.fresh(t, files)
		for i, c := range cases {
			equalLines(t, fmt.Sprintf("lines of %q", c.content), content(t, b, e.p(fmt.Sprintf("/c%d.txt", i))), c.want)
		}
	})
	t.Run("LongLine", func(t *testing.T) {
		long := strings.Repeat("0123456789", 3000) // 30,000 characters
		b, e := s.fresh(t, map[string]string{"/long.txt": "first\n" + long + "\nlast"})
		equalLines(t, "long line", content(t, b, e.p("/long.txt")), []string{"first", long, "last"})
		r, err := b.Read(ctx, e.p("/long.txt"), 2, 1)
		noErr(t, "Read after a long line", err)
		equalLines(t, "line after the long one", r.Lines, []string{"last"})
	})
	t.Run("ManyLines", func(t *testing.T) {
		var sb strings.Builder
		for i := range 5000 {
			fmt.Fprintf(&sb, "line %d\n", i)
		}
		b, e := s.fresh(t, map[string]string{"/many.txt": sb.String()})
		r, err := b.Read(ctx, e.p("/many.txt"), 4998, 2000)
		noErr(t, "Read", err)
		equalLines(t, "tail", r.Lines, []string{"line 4998", "line 4999"})
		_, err = b.Read(ctx, e.p("/many.txt"), 5000, 10)
		var oe *backend.OffsetError
		if !errors.As(err, &oe) || oe.Lines != 5000 {
			t.Errorf("Read(offset 5000) error %v, want OffsetError with Lines 5000", err)
		}
	})
}

func (s *suite) testEdit(t *testing.T) {
	ctx := t.Context()
	t.Run("Single", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/f.txt": "alpha beta\ngamma\n"})
		n, err := b.Edit(ctx, e.p("/f.txt"), "beta", "BETA", false)
		noErr(t, "Edit", err)
		if n != 1 {
			t.Errorf("Edit count %d, want 1", n)
		}
		if got := string(download(t, b, e.p("/f.txt"))); got != "alpha BETA\ngamma\n" {
			t.Errorf("after edit: %q", got)
		}
	})
	t.Run("CRLF", func(t *testing.T) {
		// Models write old_string with \n; the file keeps its \r\n.
		b, e := s.fresh(t, map[string]string{"/f.txt": "one\r\ntwo\r\nthree\r\n"})
		n, err := b.Edit(ctx, e.p("/f.txt"), "one\ntwo", "uno\ndos\nmas", false)
		noErr(t, "Edit with LF in a CRLF file", err)
		if got := string(download(t, b, e.p("/f.txt"))); n != 1 || got != "uno\r\ndos\r\nmas\r\nthree\r\n" {
			t.Errorf("after edit (%d): %q", n, got)
		}
	})
	t.Run("CRLFStringsInLFFile", func(t *testing.T) {
		// A model that writes old_string and new_string with \r\n edits an
		// LF file as if it had written \n, and writes no \r into it.
		b, e := s.fresh(t, map[string]string{"/f.txt": "one\ntwo\nthree\n"})
		n, err := b.Edit(ctx, e.p("/f.txt"), "one\r\ntwo", "uno\r\ndos", false)
		noErr(t, "Edit with CRLF in an LF file", err)
		if got := string(download(t, b, e.p("/f.txt"))); n != 1 || got != "uno\ndos\nthree\n" {
			t.Errorf("after edit (%d): %q", n, got)
		}
		n, err = b.Edit(ctx, e.p("/f.txt"), "three", "tres\r\ncuatro", false)
		noErr(t, "Edit with a CRLF new string in an LF file", err)
		if got := string(download(t, b, e.p("/f.txt"))); n != 1 || got != "uno\ndos\ntres\ncuatro\n" {
			t.Errorf("after edit (%d): %q", n, got)
		}
	})
	t.Run("EmptyFile", func(t *testing.T) {
		// An empty file is edited with an empty old_string; it is not a
		// dead end between write_file (exists) and edit_file.
		b, e := s.fresh(t, map[string]string{"/empty.txt": "", "/full.txt": "x"})
		n, err := b.Edit(ctx, e.p("/empty.txt"), "", "now full\n", false)
		noErr(t, "Edit of an empty file", err)
		if got := string(download(t, b, e.p("/empty.txt"))); n != 1 || got != "now full\n" {
			t.Errorf("after edit (%d): %q", n, got)
		}
		_, err = b.Edit(ctx, e.p("/full.txt"), "", "y", false)
		wantErr(t, "Edit of a non-empty file with an empty old string", err, backend.ErrNoMatch)
	})
	t.Run("NoMatch", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/f.txt": "alpha\n"})
		_, err := b.Edit(ctx, e.p("/f.txt"), "zeta", "x", false)
		wantErr(t, "Edit without a match", err, backend.ErrNoMatch)
		_, err = b.Edit(ctx, e.p("/f.txt"), "zeta", "x", true)
		wantErr(t, "Edit all without a match", err, backend.ErrNoMatch)
		if got := string(download(t, b, e.p("/f.txt"))); got != "alpha\n" {
			t.Errorf("content changed to %q", got)
		}
	})
	t.Run("TrailingNewline", func(t *testing.T) {
		// A model's old_string often ends with a newline the file's last
		// line lacks: the error says so, and how often the rest occurs.
		b, e := s.fresh(t, map[string]string{"/once.txt": "one\ntwo", "/twice.txt": "end, the end", "/crlf.txt": "a\r\nb"})
		for _, tc := range []struct {
			path, old string
			count     int
		}{{"/once.txt", "two\n", 1}, {"/twice.txt", "end\n", 2}, {"/crlf.txt", "a\nb\n", 1}} {
			_, err := b.Edit(ctx, e.p(tc.path), tc.old, "x", false)
			var tn *backend.TrailingNewlineError
			if !errors.As(err, &tn) || tn.Count != tc.count || !errors.Is(err, backend.ErrNoMatch) {
				t.Errorf("Edit(%s, %q) = %v, want a TrailingNewlineError with Count %d", tc.path, tc.old, err, tc.count)
			}
		}
		_, err := b.Edit(ctx, e.p("/once.txt"), "one\n\n", "x", false)
		var tn *backend.TrailingNewlineError
		if errors.As(err, &tn) || !errors.Is(err, backend.ErrNoMatch) {
			t.Errorf("Edit with a string the file does not end with = %v, want plain ErrNoMatch", err)
		}
	})
	t.Run("Multiple", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/f.txt": "x = 1\nx = 2\nx = 3\n"})
		_, err := b.Edit(ctx, e.p("/f.txt"), "x =", "y =", false)
		wantErr(t, "Edit with three matches", err, backend.ErrMultipleMatch)
		var me *backend.MatchCountError
		if !errors.As(err, &me) || me.Count != 3 {
			t.Errorf("error %v, want *MatchCountError with Count 3", err)
		}
		if got := string(download(t, b, e.p("/f.txt"))); got != "x = 1\nx = 2\nx = 3\n" {
			t.Errorf("refused edit changed the file to %q", got)
		}
	})
	t.Run("ReplaceAll", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/f.txt": "x = 1\nx = 2\nx = 3\n"})
		n, err := b.Edit(ctx, e.p("/f.txt"), "x =", "yy =", true)
		noErr(t, "Edit replace all", err)
		if n != 3 {
			t.Errorf("count %d, want 3", n)
		}
		if got := string(download(t, b, e.p("/f.txt"))); got != "yy = 1\nyy = 2\nyy = 3\n" {
			t.Errorf("after edit: %q", got)
		}
		n, err = b.Edit(ctx, e.p("/f.txt"), "yy = 2", "z", true)
		noErr(t, "Edit replace all with one match", err)
		if n != 1 {
			t.Errorf("count %d, want 1", n)
		}
	})
	t.Run("LiteralAndMultiline", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/f.txt": "a.b*c\n(x)[y]\n$1\n"})
		n, err := b.Edit(ctx, e.p("/f.txt"), "a.b*c\n(x)[y]", "plain\ntext", false)
		noErr(t, "Edit with special characters", err)
		if n != 1 {
			t.Errorf("count %d, want 1", n)
		}
		_, err = b.Edit(ctx, e.p("/f.txt"), "$1", "$2 ${0}", false)
		noErr(t, "Edit with $", err)
		if got := string(download(t, b, e.p("/f.txt"))); got != "plain\ntext\n$2 ${0}\n" {
			t.Errorf("after edits: %q", got)
		}
	})
	t.Run("DeleteText", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/f.txt": "keep drop keep"})
		_, err := b.Edit(ctx, e.p("/f.txt"), " drop", "", false)
		noErr(t, "Edit to empty", err)
		if got := string(download(t, b, e.p("/f.txt"))); got != "keep keep" {
			t.Errorf("after edit: %q", got)
		}
	})
	t.Run("Missing", func(t *testing.T) {
		b, e := s.fresh(t, nil)
		_, err := b.Edit(ctx, e.p("/nope.txt"), "a", "b", false)
		wantErr(t, "Edit of a missing file", err, backend.ErrNotFound)
	})
	t.Run("Directory", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/d/f.txt": "a"})
		_, err := b.Edit(ctx, e.p("/d"), "a", "b", false)
		wantErr(t, "Edit of a directory", err, backend.ErrIsDir)
	})
	t.Run("EmptyOldString", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/f.txt": "abc"})
		if _, err := b.Edit(ctx, e.p("/f.txt"), "", "x", false); err == nil {
			t.Error("Edit with an empty old string succeeded")
		}
		if got := string(download(t, b, e.p("/f.txt"))); got != "abc" {
			t.Errorf("content changed to %q", got)
		}
	})
	t.Run("InvalidPath", func(t *testing.T) {
		b, _ := s.fresh(t, nil)
		_, err := b.Edit(ctx, "../f.txt", "a", "b", false)
		wantErr(t, "Edit(../f.txt)", err, backend.ErrInvalidPath)
	})
}

func paths(fi []backend.FileInfo) []string {
	out := make([]string, len(fi))
	for i, f := range fi {
		out[i] = f.Path
	}
	return out
}

// list calls List and drops the preexisting directories that are not in
// want.
func (s *suite) list(t *testing.T, b backend.Backend, p string, want []string) []backend.FileInfo {
	t.Helper()
	ls, err := b.List(t.Context(), p)
	noErr(t, fmt.Sprintf("List(%q)", p), err)
	return slices.DeleteFunc(ls, func(f backend.FileInfo) bool {
		return f.IsDir && slices.Contains(s.opts.Preexisting, f.Path) && !slices.Contains(want, f.Path)
	})
}

func (s *suite) testList(t *testing.T) {
	ctx := t.Context()
	files := map[string]string{
		"/a.txt":     "12345",
		"/b/c.txt":   "c",
		"/b/d/e.txt": "e",
		"/z.txt":     "",
		"/B.txt":     "upper",
	}
	t.Run("Root", func(t *testing.T) {
		b, e := s.fresh(t, files)
		want := e.ps("/B.txt", "/a.txt", "/b", "/z.txt")
		ls := s.list(t, b, e.p("/"), want)
		equalLines(t, "List(/)", paths(ls), want)
		for _, f := range ls {
			wantDir := f.Path == e.p("/b")
			if f.IsDir != wantDir {
				t.Errorf("%s: IsDir %v, want %v", f.Path, f.IsDir, wantDir)
			}
			if strings.HasSuffix(f.Path, "/") {
				t.Errorf("%s: path ends with a slash", f.Path)
			}
			if f.Path == e.p("/a.txt") && f.Size != 0 && f.Size != 5 {
				t.Errorf("%s: Size %d, want 5 (or 0 if unknown)", f.Path, f.Size)
			}
		}
	})
	t.Run("NamesOnly", func(t *testing.T) {
		// backend.ListNames gives List's entries, kinds included.
		b, e := s.fresh(t, files)
		for _, dir := range []string{"/", "/b", "/b/d", "/missing"} {
			full, err := b.List(ctx, e.p(dir))
			noErr(t, "List", err)
			names, err := backend.ListNames(ctx, b, e.p(dir))
			noErr(t, "ListNames", err)
			strip := func(ls []backend.FileInfo) []backend.FileInfo {
				out := make([]backend.FileInfo, len(ls))
				for i, f := range ls {
					out[i] = backend.FileInfo{Path: f.Path, IsDir: f.IsDir}
				}
				return out
			}
			if !slices.Equal(strip(full), strip(names)) {
				t.Errorf("%s: ListNames %v, List %v", dir, names, full)
			}
			// backend.ListText renders the same entries, the
			// backend's own way when it has one.
			text, err := backend.ListText(ctx, b, e.p(dir))
			noErr(t, "ListText", err)
			if want := backend.FormatListing(full); text != want {
				t.Errorf("%s: ListText %q, want %q", dir, text, want)
			}
		}
	})
	t.Run("ManyEntries", func(t *testing.T) {
		// More entries than one read of a directory returns (a Filesystem
		// reads 32 KiB of entries at a time), with names long enough to
		// fill it quickly, in an order other than their creation's.
		// 800 entries of 80 bytes take about 70 KiB.
		many := make(map[string]string, 801)
		var want []string
		for i := range 800 {
			p := fmt.Sprintf("/many/%s-%03d.txt", strings.Repeat("n", 60), (i*7919)%800)
			many[p] = "x"
			want = append(want, p)
		}
		many["/many/sub/f.txt"] = "y"
		want = append(want, "/many/sub")
		slices.Sort(want)
		b, e := s.fresh(t, many)
		ls, err := b.List(ctx, e.p("/many"))
		noErr(t, "List", err)
		equalLines(t, "List(/many)", paths(ls), e.ps(want...))
		names, err := backend.ListNames(ctx, b, e.p("/many"))
		noErr(t, "ListNames", err)
		equalLines(t, "ListNames(/many)", paths(names), e.ps(want...))
		// Again after a write: a backend may keep a large listing
		// between calls, and must see its own changes.
		for i := range 3 {
			if i == 2 {
				noErr(t, "Write", b.Write(ctx, e.p("/many/new.txt"), "z"))
				ls, err = b.List(ctx, e.p("/many"))
				noErr(t, "List", err)
				if len(ls) != len(want)+1 {
					t.Fatalf("List(/many) after a write: %d entries, want %d", len(ls), len(want)+1)
				}
			}
			text, err := backend.ListText(ctx, b, e.p("/many"))
			noErr(t, "ListText", err)
			if wantText := backend.FormatListing(ls); text != wantText {
				t.Errorf("ListText(/many) #%d differs from List: %.200q", i, text)
			}
		}
		for _, f := range names {
			if f.IsDir != (f.Path == e.p("/many/sub")) {
				t.Errorf("%s: IsDir %v", f.Path, f.IsDir)
			}
		}
	})
	t.Run("Subdirectory", func(t *testing.T) {
		b, e := s.fresh(t, files)
		for _, p := range []string{e.p("/b"), e.p("/b") + "/"} {
			ls, err := b.List(ctx, p)
			noErr(t, "List", err)
			equalLines(t, fmt.Sprintf("List(%q)", p), paths(ls), e.ps("/b/c.txt", "/b/d"))
			if len(ls) == 2 && (ls[0].IsDir || !ls[1].IsDir) {
				t.Errorf("List(%q) = %+v: wrong IsDir", p, ls)
			}
		}
	})
	t.Run("RelativePath", func(t *testing.T) {
		if s.opts.Dir != "/" {
			t.Skip("paths are host paths")
		}
		b, _ := s.fresh(t, files)
		ls, err := b.List(ctx, "b")
		noErr(t, "List", err)
		equalLines(t, "List(b)", paths(ls), []string{"/b/c.txt", "/b/d"})
	})
	t.Run("Missing", func(t *testing.T) {
		b, e := s.fresh(t, files)
		ls, err := b.List(ctx, e.p("/nope"))
		noErr(t, "List of a missing directory", err)
		if len(ls) != 0 {
			t.Errorf("List of a missing directory = %v", paths(ls))
		}
	})
	t.Run("Empty", func(t *testing.T) {
		b, e := s.fresh(t, nil)
		ls := s.list(t, b, e.p("/"), nil)
		if len(ls) != 0 {
			t.Errorf("List of an empty backend = %v", paths(ls))
		}
	})
	t.Run("InvalidPath", func(t *testing.T) {
		b, _ := s.fresh(t, nil)
		_, err := b.List(ctx, "../")
		wantErr(t, "List(../)", err, backend.ErrInvalidPath)
	})
}

func (s *suite) testGlob(t *testing.T) {
	ctx := t.Context()
	// The references' glob semantics: a pattern without "/" matches names
	// at any depth; with "/", paths relative to the search path; wildcards
	// and "**" never match a leading "." unless the pattern spells it.
	b, e := s.fresh(t, map[string]string{
		"/a.py":                     "a",
		"/sub/b.py":                 "b",
		"/sub/nested/c.py":          "c",
		"/readme.md":                "docs",
		"/.hidden.py":               "h",
		"/.hidden/x.py":             "x",
		"/.hidden/nested/y.py":      "y",
		"/.github/workflows/ci.yml": "name: ci",
	})
	namesPy := []string{"/.hidden/nested/y.py", "/.hidden/x.py", "/a.py", "/sub/b.py", "/sub/nested/c.py"}
	walkedPy := []string{"/a.py", "/sub/b.py", "/sub/nested/c.py"}
	for _, tc := range []struct {
		pattern, dir string
		want         []string
	}{
		{"*.py", "/", namesPy},
		{"**/*.py", "/", walkedPy},
		{"*.md", "/", []string{"/readme.md"}},
		{"sub/*.py", "/", []string{"/sub/b.py"}},
		{"sub/**/*.py", "/", []string{"/sub/b.py", "/sub/nested/c.py"}},
		{"./sub/*.py", "/", []string{"/sub/b.py"}},
		{"a.py/**", "/", nil},
		{"*.py", "/sub", []string{"/sub/b.py", "/sub/nested/c.py"}},
		{"nested/*.py", "/sub", []string{"/sub/nested/c.py"}},
		{"**", "/sub", []string{"/sub/b.py", "/sub/nested/c.py"}},
		{"*.yml", "/", []string{"/.github/workflows/ci.yml"}},
		{"**/*.yml", "/", nil},
		{".github/**/*.yml", "/", []string{"/.github/workflows/ci.yml"}},
		{".hidden.py", "/", []string{"/.hidden.py"}},
		{".*.py", "/", []string{"/.hidden.py"}},
		{".hidden/*.py", "/", []string{"/.hidden/x.py"}},
		{".hidden/**/*.py", "/", []string{"/.hidden/nested/y.py", "/.hidden/x.py"}},
		{"*", "/", []string{"/.github/workflows/ci.yml", "/.hidden/nested/y.py", "/.hidden/x.py", "/a.py", "/readme.md", "/sub/b.py", "/sub/nested/c.py"}},
		{"*.{py,md}", "/", append([]string{"/readme.md"}, namesPy...)},
		{"{a,{b,c}}.py", "/", walkedPy},
		{"?.py", "/", namesPy},
		{"[ab].py", "/", []string{"/a.py", "/sub/b.py"}},
		{"[!a].py", "/", []string{"/.hidden/nested/y.py", "/.hidden/x.py", "/sub/b.py", "/sub/nested/c.py"}},
		{"[^a].py", "/", []string{"/.hidden/nested/y.py", "/.hidden/x.py", "/sub/b.py", "/sub/nested/c.py"}},
		{"*.py", "/a.py", []string{"/a.py"}}, // the path names a file
		{"*.md", "/a.py", nil},
		{"*.nothing", "/", nil},
		{"**/*.py", "/missing", nil},
	} {
		got, err := b.Glob(ctx, tc.pattern, e.p(tc.dir))
		what := fmt.Sprintf("Glob(%q, %q)", tc.pattern, e.p(tc.dir))
		noErr(t, what, err)
		want := e.ps(tc.want...)
		slices.Sort(want)
		equalLines(t, what, paths(got), want)
		for _, f := range got {
			if f.IsDir {
				t.Errorf("%s: directory %s in results", what, f.Path)
			}
		}
	}
	t.Run("LiteralBraces", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/{probe}.py": "p", "/{x}a.py": "a", "/{x}b.py": "b", "/xa.py": "no"})
		for _, tc := range []struct {
			pattern string
			want    []string
		}{
			{"{probe}.py", []string{"/{probe}.py"}},
			{"{x}{a,b}.py", []string{"/{x}a.py", "/{x}b.py"}},
		} {
			got, err := b.Glob(ctx, tc.pattern, e.p("/"))
			noErr(t, "Glob "+tc.pattern, err)
			equalLines(t, "Glob "+tc.pattern, paths(got), e.ps(tc.want...))
		}
	})
	t.Run("TooManyAlternatives", func(t *testing.T) {
		_, err := b.Glob(ctx, strings.Repeat("{a,b}", 11), e.p("/"))
		wantErr(t, "Glob of 2048 alternatives", err, backend.ErrInvalidPattern)
	})
	t.Run("AbsolutePattern", func(t *testing.T) {
		got, err := b.Glob(ctx, e.p("/sub/*.py"), e.p("/"))
		noErr(t, "Glob", err)
		equalLines(t, "absolute pattern", paths(got), e.ps("/sub/b.py"))
		got, err = b.Glob(ctx, e.p("/*.py"), e.p("/"))
		noErr(t, "Glob", err)
		equalLines(t, "absolute pattern at the top", paths(got), e.ps("/a.py"))
	})
	t.Run("DefaultPath", func(t *testing.T) {
		if s.opts.Dir != "/" {
			t.Skip("paths are host paths")
		}
		got, err := b.Glob(ctx, "*.md", "")
		noErr(t, "Glob", err)
		equalLines(t, "Glob with empty path", paths(got), []string{"/readme.md"})
	})
	t.Run("InvalidPattern", func(t *testing.T) {
		_, err := b.Glob(ctx, "[", e.p("/"))
		wantErr(t, "Glob([)", err, backend.ErrInvalidPattern)
	})
	t.Run("InvalidPath", func(t *testing.T) {
		_, err := b.Glob(ctx, "*", "../x")
		wantErr(t, "Glob in ../x", err, backend.ErrInvalidPath)
	})
}

func (s *suite) testGrep(t *testing.T) {
	ctx := t.Context()
	files := map[string]string{
		"/g/a.go":       "package a\nfunc Foo() {}\n// Foo again\n",
		"/g/b.txt":      "nothing here\nFoo\n",
		"/g/sub/c.go":   "func Bar() {}\nfunc Foo2() {}\n",
		"/g/bin.dat":    "Foo\x00binary",
		"/g/crlf.txt":   "x\r\nFoo bar\r\n",
		"/other.txt":    "Foo outside",
		"/g/empty.txt":  "",
		"/g/unicode.md": "naïve Fóo ✓\n",
	}
	b, e := s.fresh(t, files)
	type m struct {
		path string
		line int
		text string
	}
	check := func(t *testing.T, q backend.GrepQuery, want []m) {
		t.Helper()
		got, err := b.Grep(ctx, q)
		noErr(t, fmt.Sprintf("Grep(%+v)", q), err)
		var g []m
		for _, x := range got {
			g = append(g, m{x.Path, x.Line, x.Text})
		}
		for i := range want {
			want[i].path = e.p(want[i].path)
		}
		if !slices.Equal(g, want) {
			t.Errorf("Grep(%+v):\n got %v\nwant %v", q, g, want)
		}
	}
	g := e.p("/g")
	t.Run("Content", func(t *testing.T) {
		check(t, backend.GrepQuery{Pattern: "Foo", Path: g}, []m{
			{"/g/a.go", 2, "func Foo() {}"},
			{"/g/a.go", 3, "// Foo again"},
			{"/g/b.txt", 2, "Foo"},
			{"/g/crlf.txt", 2, "Foo bar"},
			{"/g/sub/c.go", 2, "func Foo2() {}"},
		})
	})
	t.Run("FilesWithMatches", func(t *testing.T) {
		check(t, backend.GrepQuery{Pattern: "Foo", Path: g, Mode: backend.GrepFiles}, []m{
			{"/g/a.go", 2, "func Foo() {}"},
			{"/g/b.txt", 2, "Foo"},
			{"/g/crlf.txt", 2, "Foo bar"},
			{"/g/sub/c.go", 2, "func Foo2() {}"},
		})
	})
	t.Run("GlobBaseName", func(t *testing.T) {
		check(t, backend.GrepQuery{Pattern: "Foo", Path: g, Glob: "*.go", Mode: backend.GrepFiles}, []m{
			{"/g/a.go", 2, "func Foo() {}"},
			{"/g/sub/c.go", 2, "func Foo2() {}"},
		})
	})
	t.Run("GlobRelativePath", func(t *testing.T) {
		check(t, backend.GrepQuery{Pattern: "Foo", Path: g, Glob: "sub/*.go"}, []m{
			{"/g/sub/c.go", 2, "func Foo2() {}"},
		})
	})
	t.Run("GlobBraces", func(t *testing.T) {
		check(t, backend.GrepQuery{Pattern: "Foo", Path: g, Glob: "*.{txt,md}", Mode: backend.GrepFiles}, []m{
			{"/g/b.txt", 2, "Foo"},
			{"/g/crlf.txt", 2, "Foo bar"},
		})
	})
	t.Run("PathIsFile", func(t *testing.T) {
		check(t, backend.GrepQuery{Pattern: "Foo", Path: e.p("/g/a.go")}, []m{
			{"/g/a.go", 2, "func Foo() {}"},
			{"/g/a.go", 3, "// Foo again"},
		})
	})
	t.Run("Regexp", func(t *testing.T) {
		check(t, backend.GrepQuery{Pattern: `^func \w+\(\)`, Path: g}, []m{
			{"/g/a.go", 2, "func Foo() {}"},
			{"/g/sub/c.go", 1, "func Bar() {}"},
			{"/g/sub/c.go", 2, "func Foo2() {}"},
		})
		check(t, backend.GrepQuery{Pattern: `bar$`, Path: g}, []m{{"/g/crlf.txt", 2, "Foo bar"}})
		check(t, backend.GrepQuery{Pattern: `(?i)^FOO$`, Path: g}, []m{{"/g/b.txt", 2, "Foo"}})
		check(t, backend.GrepQuery{Pattern: `Bar|again`, Path: g}, []m{
			{"/g/a.go", 3, "// Foo again"},
			{"/g/sub/c.go", 1, "func Bar() {}"},
		})
		check(t, backend.GrepQuery{Pattern: `F.o ✓`, Path: g}, []m{{"/g/unicode.md", 1, "naïve Fóo ✓"}})
		check(t, backend.GrepQuery{Pattern: `Foo\(\) \{\}`, Path: g}, []m{{"/g/a.go", 2, "func Foo() {}"}})
	})
	t.Run("NoMatchAcrossLines", func(t *testing.T) {
		for _, p := range []string{`\{\}\n//`, `\{\}\s+//`, `a\s+func`, `again[^x]{2}`} {
			got, err := b.Grep(ctx, backend.GrepQuery{Pattern: p, Path: g})
			noErr(t, "Grep", err)
			if len(got) != 0 {
				t.Errorf("Grep(%q) matched across lines: %+v", p, got)
			}
		}
		check(t, backend.GrepQuery{Pattern: `again[^x]*`, Path: g}, []m{{"/g/a.go", 3, "// Foo again"}})
	})
	t.Run("NoMatch", func(t *testing.T) {
		got, err := b.Grep(ctx, backend.GrepQuery{Pattern: "zzz-no-such-text", Path: e.p("/")})
		noErr(t, "Grep", err)
		if len(got) != 0 {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("MissingPath", func(t *testing.T) {
		got, err := b.Grep(ctx, backend.GrepQuery{Pattern: "Foo", Path: e.p("/nope")})
		noErr(t, "Grep in a missing directory", err)
		if len(got) != 0 {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("DefaultPath", func(t *testing.T) {
		if s.opts.Dir != "/" {
			t.Skip("paths are host paths")
		}
		got, err := b.Grep(ctx, backend.GrepQuery{Pattern: "outside", Mode: backend.GrepFiles})
		noErr(t, "Grep", err)
		if len(got) != 1 || got[0].Path != "/other.txt" {
			t.Errorf("Grep with empty path: %+v, want /other.txt", got)
		}
	})
	t.Run("InvalidPattern", func(t *testing.T) {
		_, err := b.Grep(ctx, backend.GrepQuery{Pattern: "(", Path: e.p("/")})
		wantErr(t, "Grep(()", err, backend.ErrInvalidPattern)
		var pe *backend.PatternError
		if !errors.As(err, &pe) || pe.Err == nil || pe.Err.Error() == "" {
			t.Errorf("error %v does not carry the reason in a *PatternError", err)
		}
		_, err = b.Grep(ctx, backend.GrepQuery{Pattern: "x", Path: e.p("/"), Glob: "["})
		wantErr(t, "Grep with glob [", err, backend.ErrInvalidPattern)
	})
	t.Run("InvalidPath", func(t *testing.T) {
		_, err := b.Grep(ctx, backend.GrepQuery{Pattern: "x", Path: "../"})
		wantErr(t, "Grep in ../", err, backend.ErrInvalidPath)
	})
	t.Run("Limit", func(t *testing.T) {
		files := map[string]string{}
		for i := range 30 {
			files[fmt.Sprintf("/lim/f%02d.txt", i)] = "hit one\nmiss\nhit two\n"
		}
		b, e := s.fresh(t, files)
		all, err := b.Grep(ctx, backend.GrepQuery{Pattern: "hit", Path: e.p("/lim")})
		noErr(t, "Grep without a limit", err)
		if len(all) != 60 {
			t.Fatalf("without a limit: %d matches, want 60", len(all))
		}
		for _, mode := range []backend.GrepMode{backend.GrepContent, backend.GrepFiles} {
			got, err := b.Grep(ctx, backend.GrepQuery{Pattern: "hit", Path: e.p("/lim"), Mode: mode, Limit: 7})
			noErr(t, "Grep with a limit", err)
			if len(got) != 7 {
				t.Errorf("mode %d, limit 7: %d matches", mode, len(got))
			}
			if !slices.IsSortedFunc(got, func(a, b backend.GrepMatch) int {
				return cmp.Or(strings.Compare(a.Path, b.Path), a.Line-b.Line)
			}) {
				t.Errorf("mode %d: capped matches not sorted: %v", mode, got)
			}
		}
	})
	t.Run("MaxLineBytes", func(t *testing.T) {
		long := strings.Repeat("é", 3000) + "needle" // 6,006 bytes
		b, e := s.fresh(t, map[string]string{"/cut.txt": "short needle\n" + long + "\n"})
		got, err := b.Grep(ctx, backend.GrepQuery{Pattern: "needle", Path: e.p("/"), MaxLineBytes: 101})
		noErr(t, "Grep", err)
		if len(got) != 2 || got[0].Text != "short needle" || got[0].Cut {
			t.Fatalf("matches %+v", got)
		}
		if got[1].Text != strings.Repeat("é", 50) || !got[1].Cut {
			t.Errorf("a long line cut at 101 bytes: %q (cut %v), want 50 whole characters", got[1].Text, got[1].Cut)
		}
	})
	t.Run("Cancel", func(t *testing.T) {
		// A pattern with no literal to look for runs the regular
		// expression over every byte, slowly: seconds for this file. The
		// context cancels itself when the search looks at it a second
		// time, so the search is under way, whatever the machine's speed:
		// a search that runs to its end anyway returns its matches, and
		// fails.
		line := "the quick brown fox jumps over the lazy dog 0123456789\n"
		b, e := s.fresh(t, map[string]string{"/slow/big.txt": strings.Repeat(line, 80000)})
		cctx := cancelOnLook(ctx, 2)
		got, err := b.Grep(cctx, backend.GrepQuery{Pattern: `(\w+\s?){20}[A-Z]`, Path: e.p("/slow")})
		if err == nil {
			t.Fatalf("a cancelled grep reported no error (%d matches)", len(got))
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
		if cctx.Err() == nil {
			t.Errorf("grep failed (%v) before it was cancelled", err)
		}
	})
	t.Run("LongLine", func(t *testing.T) {
		long := strings.Repeat("x", 20000) + "needle" + strings.Repeat("y", 20000)
		b, e := s.fresh(t, map[string]string{"/l.txt": "a\n" + long + "\nz"})
		got, err := b.Grep(ctx, backend.GrepQuery{Pattern: "needle", Path: e.p("/")})
		noErr(t, "Grep", err)
		if len(got) != 1 || got[0].Line != 2 || got[0].Text != long {
			t.Errorf("match in a long line: %d matches", len(got))
		}
	})
}

// testAppend checks backend.Append, natively or through the fallback.
func (s *suite) testAppend(t *testing.T) {
	ctx := t.Context()
	b, e := s.fresh(t, map[string]string{"/log/old.md": "first\n"})
	for _, part := range []string{"a\n", "b\n", "c"} {
		noErr(t, "Append to a new file", backend.Append(ctx, b, e.p("/log/new/h.md"), part))
		noErr(t, "Append to an existing file", backend.Append(ctx, b, e.p("/log/old.md"), part))
	}
	if got := content(t, b, e.p("/log/new/h.md")); strings.Join(got, "\n") != "a\nb\nc" {
		t.Errorf("appended file: %q", got)
	}
	if got := content(t, b, e.p("/log/old.md")); strings.Join(got, "\n") != "first\na\nb\nc" {
		t.Errorf("appended existing file: %q", got)
	}
	if err := backend.Append(ctx, b, e.p("/log"), "x"); err == nil {
		t.Error("Append to a directory succeeded")
	}
}

func (s *suite) testUploadDownload(t *testing.T) {
	ctx := t.Context()
	t.Run("Batch", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/u/old.txt": "old"})
		bin := []byte{0xff, 0xfe, 'a', '\n', 0, 1, 2}
		up := []backend.File{
			{Path: e.p("/u/a.txt"), Content: []byte("alpha\n")},
			{Path: "../escape.txt", Content: []byte("no")},
			{Path: e.p("/u/deep/b.bin"), Content: bin},
			{Path: e.p("/u/old.txt"), Content: []byte("new")},
			{Path: e.p("/u/deep"), Content: []byte("dir")},
		}
		res := b.Upload(ctx, up)
		if len(res) != len(up) {
			t.Fatalf("Upload: %d results for %d files", len(res), len(up))
		}
		wantCodes := []string{"", "invalid_path", "", "", "is_directory"}
		for i, r := range res {
			if r.Path != up[i].Path {
				t.Errorf("Upload result %d: path %q, want %q", i, r.Path, up[i].Path)
			}
			if got := backend.ErrorCode(r.Err); got != wantCodes[i] || (wantCodes[i] == "") != (r.Err == nil) {
				t.Errorf("Upload result %d (%s): error %v (code %q), want code %q", i, r.Path, r.Err, got, wantCodes[i])
			}
		}
		dl := []string{e.p("/u/a.txt"), e.p("/u/missing.txt"), e.p("/u/deep"), "../x", e.p("/u/deep/b.bin"), e.p("/u/old.txt")}
		got := b.Download(ctx, dl)
		if len(got) != len(dl) {
			t.Fatalf("Download: %d results for %d paths", len(got), len(dl))
		}
		wantCodes = []string{"", "file_not_found", "is_directory", "invalid_path", "", ""}
		wantContent := []string{"alpha\n", "", "", "", string(bin), "new"}
		for i, r := range got {
			if r.Path != dl[i] {
				t.Errorf("Download result %d: path %q, want %q", i, r.Path, dl[i])
			}
			if code := backend.ErrorCode(r.Err); code != wantCodes[i] || (wantCodes[i] == "") != (r.Err == nil) {
				t.Errorf("Download result %d (%s): error %v (code %q), want code %q", i, r.Path, r.Err, code, wantCodes[i])
			}
			if string(r.Content) != wantContent[i] {
				t.Errorf("Download result %d (%s): content %q, want %q", i, r.Path, r.Content, wantContent[i])
			}
		}
		r, err := b.Read(ctx, e.p("/u/deep/b.bin"), 0, 1)
		noErr(t, "Read of an uploaded binary", err)
		equalLines(t, "first line of the binary", r.Lines, []string{"\xff\xfea"})
	})
	t.Run("Empty", func(t *testing.T) {
		b, _ := s.fresh(t, nil)
		if r := b.Upload(ctx, nil); len(r) != 0 {
			t.Errorf("Upload(nil) = %v", r)
		}
		if r := b.Download(ctx, nil); len(r) != 0 {
			t.Errorf("Download(nil) = %v", r)
		}
	})
	t.Run("ThenEdit", func(t *testing.T) {
		b, e := s.fresh(t, nil)
		if r := b.Upload(ctx, []backend.File{{Path: e.p("/e.txt"), Content: []byte("one two")}}); r[0].Err != nil {
			t.Fatal(r[0].Err)
		}
		if _, err := b.Edit(ctx, e.p("/e.txt"), "two", "three", false); err != nil {
			t.Fatal(err)
		}
		wantErr(t, "Write over an uploaded file", b.Write(ctx, e.p("/e.txt"), "x"), backend.ErrExists)
		if got := string(download(t, b, e.p("/e.txt"))); got != "one three" {
			t.Errorf("got %q", got)
		}
	})
}

func (s *suite) testConcurrency(t *testing.T) {
	ctx := t.Context()
	const n = 16
	t.Run("DistinctFiles", func(t *testing.T) {
		b, e := s.fresh(t, map[string]string{"/shared.txt": "shared"})
		var wg sync.WaitGroup
		errs := make(chan error, n*8)
		for i := range n {
			wg.Go(func() {
				p := e.p(fmt.Sprintf("/c/f%02d.txt", i))
				if err := b.Write(ctx, p, fmt.Sprintf("file %d\n", i)); err != nil {
					errs <- err
					return
				}
				if _, err := b.Edit(ctx, p, "file", "edited", false); err != nil {
					errs <- err
				}
				if _, err := b.Read(ctx, e.p("/shared.txt"), 0, 10); err != nil {
					errs <- err
				}
				if _, err := b.List(ctx, e.p("/c")); err != nil {
					errs <- err
				}
				if _, err := b.Grep(ctx, backend.GrepQuery{Pattern: "edited", Path: e.p("/c")}); err != nil {
					errs <- err
				}
				if _, err := b.Glob(ctx, "**/*.txt", e.p("/")); err != nil {
					errs <- err
				}
				if r := b.Download(ctx, []string{p}); r[0].Err != nil {
					errs <- r[0].Err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		ls, err := b.List(ctx, e.p("/c"))
		noErr(t, "List", err)
		if len(ls) != n {
			t.Errorf("%d files after concurrent writes, want %d", len(ls), n)
		}
		got, err := b.Grep(ctx, backend.GrepQuery{Pattern: "^edited", Path: e.p("/c"), Mode: backend.GrepFiles})
		noErr(t, "Grep", err)
		if len(got) != n {
			t.Errorf("%d edited files, want %d", len(got), n)
		}
	})
	t.Run("SameFileCreate", func(t *testing.T) {
		b, e := s.fresh(t, nil)
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok := 0
		for i := range n {
			wg.Go(func() {
				err := b.Write(ctx, e.p("/race.txt"), fmt.Sprint(i))
				if err == nil {
					mu.Lock()
					ok++
					mu.Unlock()
				} else if !errors.Is(err, backend.ErrExists) {
					t.Errorf("concurrent Write: %v", err)
				}
			})
		}
		wg.Wait()
		if ok != 1 {
			t.Errorf("%d concurrent creates of one file succeeded, want exactly 1", ok)
		}
	})
	t.Run("SameFileEdits", func(t *testing.T) {
		if s.opts.SkipConcurrentEdits {
			t.Skip("SkipConcurrentEdits")
		}
		var sb strings.Builder
		for i := range n {
			fmt.Fprintf(&sb, "token-%02d\n", i)
		}
		b, e := s.fresh(t, map[string]string{"/edits.txt": sb.String()})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				tok := fmt.Sprintf("token-%02d", i)
				if _, err := b.Edit(ctx, e.p("/edits.txt"), tok, strings.ToUpper(tok), false); err != nil {
					t.Errorf("Edit %s: %v", tok, err)
				}
			})
		}
		wg.Wait()
		want := strings.ToUpper(sb.String())
		if got := string(download(t, b, e.p("/edits.txt"))); got != want {
			t.Errorf("parallel edits lost updates:\n got %q\nwant %q", got, want)
		}
	})
}

func (s *suite) testExecute(t *testing.T) {
	b := s.factory(t)
	sb, ok := b.(backend.Sandbox)
	if !ok {
		t.Skip("not a backend.Sandbox")
	}
	if s.opts.SkipExecute {
		t.Skip("SkipExecute")
	}
	ctx := t.Context()
	if sb.ID() == "" {
		t.Error("ID() is empty")
	}
	t.Run("Output", func(t *testing.T) {
		r, err := sb.Execute(ctx, "echo hello", 0)
		noErr(t, "Execute", err)
		if r.Output != "hello\n" || r.ExitCode != 0 || r.Truncated {
			t.Errorf("echo hello: %+v", r)
		}
	})
	t.Run("ExitCode", func(t *testing.T) {
		r, err := sb.Execute(ctx, "echo partial; exit 3", 0)
		noErr(t, "a failing command is not an error", err)
		if r.ExitCode != 3 || !strings.Contains(r.Output, "partial") {
			t.Errorf("exit 3: %+v", r)
		}
	})
	t.Run("Stderr", func(t *testing.T) {
		r, err := sb.Execute(ctx, "echo out; echo err >&2", 0)
		noErr(t, "Execute", err)
		if !strings.Contains(r.Output, "out\n") || !strings.Contains(r.Output, "err\n") {
			t.Errorf("stdout and stderr: %q", r.Output)
		}
	})
	t.Run("Timeout", func(t *testing.T) {
		start := time.Now()
		r, err := sb.Execute(ctx, "echo started; sleep 30", time.Second)
		wantErr(t, "a command past its timeout", err, backend.ErrTimeout)
		if time.Since(start) > 20*time.Second {
			t.Error("the timed-out command was not killed")
		}
		if !strings.Contains(r.Output, "started") {
			t.Errorf("output before the timeout lost: %q", r.Output)
		}
	})
	// Cancellation is tested without the clock: a call that ignored its
	// context would wait for the command, which never ends by itself, and
	// the test binary's -timeout would fail it.
	t.Run("Cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := sb.Execute(cctx, "sleep infinity", 0)
		wantErr(t, "a command given a cancelled context", err, context.Canceled)
	})
	t.Run("Cancel", func(t *testing.T) {
		// The context cancels itself when the call looks at it a second
		// time: past its first check, while the command runs (or, in a
		// backend that checks more often before it starts, before it).
		_, err := sb.Execute(cancelOnLook(ctx, 2), "sleep infinity", 0)
		if err == nil {
			t.Error("a cancelled command reported no error")
		}
	})
}
