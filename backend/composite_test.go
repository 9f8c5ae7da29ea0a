//go:build unix

package backend_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/backendtest"
	"github.com/deepagents-go/deepagents/backend/sandbox"
	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/thread"
)

func newFS(t *testing.T) *backend.FilesystemBackend {
	t.Helper()
	fs, err := backend.NewFilesystemBackend(t.TempDir(), backend.FilesystemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// compositeRoutes puts routes under directories the conformance suite uses,
// so that its globs, greps, listings and batches cross backends.
func compositeRoutes(t *testing.T) map[string]backend.Backend {
	return map[string]backend.Backend{
		"/memories/":     backend.NewStoreBackend(store.NewMemoryStore(), nil),
		"/b/d/":          backend.NewStateBackend(thread.NewFiles(nil)),
		"/src/sub":       backend.NewStateBackend(thread.NewFiles(nil)),
		"/src/sub/deep/": backend.NewStoreBackend(store.NewMemoryStore(), nil),
		"/g/sub/":        backend.NewStoreBackend(store.NewMemoryStore(), nil),
		"/u/deep/":       newFS(t),
		"/c/":            newFS(t),
	}
}

var compositePreexisting = []string{"/memories", "/src", "/g", "/u", "/c", "/b"} // routes show as directories

func TestCompositeConformance(t *testing.T) {
	for name, def := range map[string]func(t *testing.T) backend.Backend{
		"StateDefault":      func(*testing.T) backend.Backend { return backend.NewStateBackend(thread.NewFiles(nil)) },
		"FilesystemDefault": func(t *testing.T) backend.Backend { return newFS(t) },
	} {
		t.Run(name, func(t *testing.T) {
			backendtest.RunWith(t, func(t *testing.T) backend.Backend {
				c, err := backend.NewComposite(def(t), compositeRoutes(t))
				if err != nil {
					t.Fatal(err)
				}
				return c
			}, backendtest.Options{Preexisting: compositePreexisting})
		})
	}
}

func TestCompositeRouting(t *testing.T) {
	ctx := context.Background()
	def := backend.NewStateBackend(thread.NewFiles(nil))
	mem := backend.NewStateBackend(thread.NewFiles(nil))
	proj := backend.NewStateBackend(thread.NewFiles(nil))
	b, err := backend.NewComposite(def, map[string]backend.Backend{
		"/memories/":          mem,
		"/memories/projects/": proj,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.(backend.Sandbox); ok {
		t.Fatal("a composite over a non-sandbox default is a Sandbox")
	}
	for p, c := range map[string]string{
		"/notes.md":                "default",
		"/memories/facts.md":       "memories",
		"/memories/projects/x.md":  "projects",
		"/memories/projectsX/y.md": "memories too",
	} {
		if err := b.Write(ctx, p, c); err != nil {
			t.Fatal(err)
		}
	}
	// Each backend holds its files under stripped paths.
	check := func(name string, s *backend.StateBackend, want ...string) {
		t.Helper()
		var got []string
		fs, _ := s.Glob(ctx, "**", "/")
		for _, f := range fs {
			got = append(got, f.Path)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s holds %q, want %q", name, got, want)
		}
	}
	check("default", def, "/notes.md")
	check("memories", mem, "/facts.md", "/projectsX/y.md")
	check("projects", proj, "/x.md")

	ls, err := b.List(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || ls[0].Path != "/memories" || !ls[0].IsDir || ls[1].Path != "/notes.md" {
		t.Errorf("List(/) = %+v", ls)
	}
	ls, _ = b.List(ctx, "/memories")
	if got := pathsOf(ls); !slices.Equal(got, []string{"/memories/facts.md", "/memories/projects", "/memories/projectsX"}) {
		t.Errorf("List(/memories) = %q", got)
	}
	ms, err := b.Grep(ctx, backend.GrepQuery{Pattern: ".", Mode: backend.GrepFiles})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Path)
	}
	want := []string{"/memories/facts.md", "/memories/projects/x.md", "/memories/projectsX/y.md", "/notes.md"}
	if !slices.Equal(got, want) {
		t.Errorf("Grep from / = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		pattern, dir string
		want         []string
	}{
		{"**/*.md", "/", want},
		{"/memories/*.md", "/", []string{"/memories/facts.md"}},
		{"memories/projects/*.md", "/", []string{"/memories/projects/x.md"}},
		{"*/*/*.md", "/", []string{"/memories/projects/x.md", "/memories/projectsX/y.md"}},
		{"*.md", "/memories/projects", []string{"/memories/projects/x.md"}},
		{"**/x.md", "/memories", []string{"/memories/projects/x.md"}},
		{"/**/y.md", "/memories/projectsX", []string{"/memories/projectsX/y.md"}},
	} {
		fs, err := b.Glob(ctx, tc.pattern, tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := pathsOf(fs); !slices.Equal(got, tc.want) {
			t.Errorf("Glob(%q, %q) = %q, want %q", tc.pattern, tc.dir, got, tc.want)
		}
	}
	for _, tc := range []struct {
		glob, dir string
		want      []string
	}{
		{"memories/projects/*.md", "/", []string{"/memories/projects/x.md"}},
		{"*/x.md", "/memories", []string{"/memories/projects/x.md"}},
		{"/memories/*.md", "/", []string{"/memories/facts.md"}},
		{"y.md", "/", []string{"/memories/projectsX/y.md"}},
	} {
		ms, err := b.Grep(ctx, backend.GrepQuery{Pattern: ".", Path: tc.dir, Glob: tc.glob, Mode: backend.GrepFiles})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range ms {
			got = append(got, m.Path)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Grep(glob %q, path %q) = %q, want %q", tc.glob, tc.dir, got, tc.want)
		}
	}
	// Batches keep order and the caller's paths.
	res := b.Download(ctx, []string{"/memories/projects/x.md", "notes.md", "/memories/nope", "../x", "/memories/facts.md"})
	wantContent := []string{"projects", "default", "", "", "memories"}
	wantCode := []string{"", "", "file_not_found", "invalid_path", ""}
	for i, r := range res {
		if string(r.Content) != wantContent[i] || backend.ErrorCode(r.Err) != wantCode[i] {
			t.Errorf("download %d (%s): %q, %v", i, r.Path, r.Content, r.Err)
		}
	}
	if res[1].Path != "notes.md" {
		t.Errorf("download path %q, want the caller's spelling", res[1].Path)
	}
}

func TestCompositeHidesDefaultFilesUnderRoutes(t *testing.T) {
	ctx := context.Background()
	def := backend.NewStateBackend(thread.NewFiles(nil))
	if err := def.Write(ctx, "/memories/stale.md", "hidden"); err != nil {
		t.Fatal(err)
	}
	b, _ := backend.NewComposite(def, map[string]backend.Backend{"/memories/": backend.NewStateBackend(thread.NewFiles(nil))})
	ms, _ := b.Grep(ctx, backend.GrepQuery{Pattern: "hidden"})
	fs, _ := b.Glob(ctx, "**", "/")
	if len(ms) != 0 || len(fs) != 0 {
		t.Errorf("default's file under a route leaked: %v %v", ms, fs)
	}
	if _, err := b.Read(ctx, "/memories/stale.md", 0, 0); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("Read = %v, want ErrNotFound", err)
	}
}

func TestNewCompositeErrors(t *testing.T) {
	s := backend.NewStateBackend(nil)
	for name, routes := range map[string]map[string]backend.Backend{
		"root":      {"/": s},
		"traversal": {"/a/../b/": s},
		"nil":       {"/a/": nil},
		"duplicate": {"/a/": s, "/a": s},
	} {
		if _, err := backend.NewComposite(s, routes); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := backend.NewComposite(nil, nil); err == nil {
		t.Error("nil default: no error")
	}
}

// TestCompositeGlobMatchesOneBackend: globbing files spread over routes
// finds what globbing the same files in one backend finds, for patterns
// that cross routes in every way (a route below the pattern's literal
// part, "**" before and after it, braces, names, dot directories).
func TestCompositeGlobMatchesOneBackend(t *testing.T) {
	ctx := t.Context()
	files := []string{
		"/top.md", "/a/x.md", "/a/b/y.md", "/a/b/c/z.md", "/a/b/c/a/b/w.md", "/a/b/.hid/v.md",
		"/a/b/q,r.md", "/k/a/b/u.md", "/a/b/c/d/e/f.txt",
	}
	one := backend.NewStateBackend(thread.NewFiles(nil))
	def := backend.NewStateBackend(thread.NewFiles(nil))
	routed := map[string]backend.Backend{"/a/b/": backend.NewStateBackend(thread.NewFiles(nil)), "/k/": backend.NewStoreBackend(store.NewMemoryStore(), nil)}
	c, err := backend.NewComposite(def, routed)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := one.Write(ctx, f, "x"); err != nil {
			t.Fatal(err)
		}
		if err := c.Write(ctx, f, "x"); err != nil {
			t.Fatal(err)
		}
	}
	for _, pattern := range []string{
		"*.md", "**/*.md", "a/**/*.md", "**/b/**/*.md", "**/a/**/b/**/*.md", "a/b/**", "a/*/c/*.md",
		"**/b/*.md", "{a,k}/**/*.md", "a/b/{c/z,q\\,r}.md", "**/.hid/*.md", "/a/b/c/**/*.md", "**/**/**/*.txt",
	} {
		want, err := one.Glob(ctx, pattern, "/")
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Glob(ctx, pattern, "/")
		if err != nil {
			t.Fatalf("Glob(%q): %v", pattern, err)
		}
		if !slices.Equal(paths(got), paths(want)) {
			t.Errorf("Glob(%q) over routes = %v, in one backend %v", pattern, paths(got), paths(want))
		}
	}
}

func paths(fi []backend.FileInfo) []string {
	out := make([]string, len(fi))
	for i, f := range fi {
		out[i] = f.Path
	}
	return out
}

func TestCompositeSandboxConformance(t *testing.T) {
	backendtest.RunWith(t, func(t *testing.T) backend.Backend {
		c, err := backend.NewComposite(newShell(t, sandbox.LocalShellOptions{}), compositeRoutes(t))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := c.(backend.Sandbox); !ok {
			t.Fatal("a composite over a LocalShell is not a Sandbox")
		}
		return c
	}, backendtest.Options{Preexisting: compositePreexisting})
}

// newShell is a LocalShell rooted in a new temporary folder, for the
// tests of the backends that wrap one.
func newShell(t *testing.T, opts sandbox.LocalShellOptions) *sandbox.LocalShell {
	t.Helper()
	s, err := sandbox.NewLocalShell(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
