//go:build unix

package backend_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
)

// TestRedirect sends a FilesystemBackend's calls to another folder for the
// calls of one context: the other calls, and the backends of other roots,
// stay where they are; the read-only paths hold in the other folder too.
func TestRedirect(t *testing.T) {
	ctx := context.Background()
	from, to, other := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{from, to} {
		if err := os.WriteFile(filepath.Join(d, "a.txt"), []byte("in "+filepath.Base(d)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := backend.NewFilesystemBackend(from, backend.FilesystemOptions{ReadOnly: []string{filepath.Join(from, "locked")}})
	if err != nil {
		t.Fatal(err)
	}
	user, err := backend.NewFilesystemBackend(other, backend.FilesystemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := backend.NewComposite(fs, map[string]backend.Backend{"/user/": user})
	if err != nil {
		t.Fatal(err)
	}
	if got := backend.HostRoot(b); got != from {
		t.Fatalf("HostRoot = %q, want %q", got, from)
	}
	r, err := backend.NewRedirect(from, to)
	if err != nil {
		t.Fatal(err)
	}
	rctx := backend.WithRedirect(ctx, r)
	if err := b.Write(rctx, "/new.txt", "x\n"); err != nil {
		t.Fatal(err)
	}
	if err := b.Write(rctx, "/user/u.txt", "u\n"); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{filepath.Join(to, "new.txt"): true, filepath.Join(from, "new.txt"): false, filepath.Join(other, "u.txt"): true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", p, err == nil, want)
		}
	}
	for c, want := range map[context.Context]string{ctx: "in " + filepath.Base(from), rctx: "in " + filepath.Base(to)} {
		res, err := b.Read(c, "/a.txt", 0, 0)
		if err != nil || len(res.Lines) != 1 || res.Lines[0] != want {
			t.Errorf("Read = %v, %v; want %q", res.Lines, err, want)
		}
	}
	if err := b.Write(rctx, "/locked/x", "no"); !errors.Is(err, backend.ErrPermission) {
		t.Errorf("a write below a read-only path, redirected: %v, want ErrPermission", err)
	}
	if out := b.Upload(rctx, []backend.File{{Path: "/up.txt", Content: []byte("up")}}); out[0].Err != nil {
		t.Fatal(out[0].Err)
	}
	if _, err := os.Stat(filepath.Join(to, "up.txt")); err != nil {
		t.Errorf("upload not redirected: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Read(rctx, "/a.txt", 0, 0); !errors.Is(err, backend.ErrRedirectClosed) {
		t.Errorf("a call after Close: %v, want ErrRedirectClosed", err)
	}
	if _, err := b.Read(ctx, "/a.txt", 0, 0); err != nil {
		t.Errorf("a call of another context after Close: %v", err)
	}
}
