package backend_test

import (
	"context"
	"errors"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/backendtest"
	"github.com/deepagents-go/deepagents/thread"
)

func TestStateConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend {
		return backend.NewStateBackend(thread.NewFiles(nil))
	})
}

func TestStateFromContext(t *testing.T) {
	var s backend.StateBackend // the zero value reads the run's files
	ctx := context.Background()
	if err := s.Write(ctx, "/a.txt", "x"); !errors.Is(err, backend.ErrNoState) {
		t.Fatalf("Write without files: %v, want ErrNoState", err)
	}
	if r := s.Download(ctx, []string{"/a.txt"}); !errors.Is(r[0].Err, backend.ErrNoState) {
		t.Fatalf("Download without files: %v, want ErrNoState", r[0].Err)
	}
	files := thread.NewFiles(nil)
	ctx = thread.WithFiles(ctx, files)
	if err := s.Write(ctx, "/a.txt", "x"); err != nil {
		t.Fatal(err)
	}
	if d, ok := files.Get("/a.txt"); !ok || d.Content != "x" || d.CreatedAt.IsZero() {
		t.Fatalf("file in the context's set: %+v, %v", d, ok)
	}
	if ch, _ := files.TakeChanges(); len(ch) != 1 || ch["/a.txt"] == nil {
		t.Fatalf("changes: %v", ch)
	}
	if _, err := s.Edit(ctx, "/a.txt", "x", "y", false); err != nil {
		t.Fatal(err)
	}
	if ch, _ := files.TakeChanges(); len(ch) != 1 || ch["/a.txt"].Content != "y" {
		t.Fatalf("edit not recorded as a change: %v", ch)
	}
	if err := s.Append(ctx, "/a.txt", "z"); err != nil {
		t.Fatal(err)
	}
	if ch, app := files.TakeChanges(); len(ch) != 0 || len(app) != 1 || app["/a.txt"].Content != "z" {
		t.Fatalf("append recorded as %v, %v; want only the appended text", ch, app)
	}
	if d, _ := files.Get("/a.txt"); d.Content != "yz" {
		t.Fatalf("after append: %q", d.Content)
	}
}

func TestStateConformanceThroughContext(t *testing.T) {
	// A State with no files of its own, driven through the context: the
	// suite's contexts carry no files, so wrap the backend to add them.
	backendtest.Run(t, func(t *testing.T) backend.Backend {
		return ctxFiles{backend.NewStateBackend(nil), thread.NewFiles(nil)}
	})
}

// ctxFiles adds a file set to every call's context.
type ctxFiles struct {
	b *backend.StateBackend
	f *thread.Files
}

func (c ctxFiles) ctx(ctx context.Context) context.Context { return thread.WithFiles(ctx, c.f) }

func (c ctxFiles) List(ctx context.Context, p string) ([]backend.FileInfo, error) {
	return c.b.List(c.ctx(ctx), p)
}
func (c ctxFiles) Read(ctx context.Context, p string, o, l int) (backend.ReadResult, error) {
	return c.b.Read(c.ctx(ctx), p, o, l)
}
func (c ctxFiles) Write(ctx context.Context, p, s string) error { return c.b.Write(c.ctx(ctx), p, s) }
func (c ctxFiles) Edit(ctx context.Context, p, o, n string, all bool) (int, error) {
	return c.b.Edit(c.ctx(ctx), p, o, n, all)
}
func (c ctxFiles) Grep(ctx context.Context, q backend.GrepQuery) ([]backend.GrepMatch, error) {
	return c.b.Grep(c.ctx(ctx), q)
}
func (c ctxFiles) Glob(ctx context.Context, pat, p string) ([]backend.FileInfo, error) {
	return c.b.Glob(c.ctx(ctx), pat, p)
}
func (c ctxFiles) Upload(ctx context.Context, f []backend.File) []backend.FileResult {
	return c.b.Upload(c.ctx(ctx), f)
}
func (c ctxFiles) Download(ctx context.Context, p []string) []backend.FileResult {
	return c.b.Download(c.ctx(ctx), p)
}

func pathsOf(fs []backend.FileInfo) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}
