//go:build unix

package backend_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/backend"
)

// jail is a Filesystem root with a sentinel directory beside it that no
// operation on the backend may read or change.
type jail struct {
	base, root, outside string
	secret              string
	planted             map[string]string // symlink name in root -> target
	before              map[string]string // snapshot of everything outside root
	fs                  *backend.FilesystemBackend
}

func newJail(tb testing.TB) *jail {
	tb.Helper()
	var b [12]byte
	_, _ = rand.Read(b[:])
	j := &jail{base: tb.TempDir(), secret: "TOPSECRET-" + hex.EncodeToString(b[:])}
	j.root = filepath.Join(j.base, "root")
	j.outside = filepath.Join(j.base, "outside")
	for _, d := range []string{j.root, filepath.Join(j.outside, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	for name, c := range map[string]string{
		"secret.txt":    j.secret + "\n",
		"sub/inner.txt": "inner " + j.secret,
		"edit.txt":      "X " + j.secret + " X",
	} {
		if err := os.WriteFile(filepath.Join(j.outside, name), []byte(c), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(j.root, "inside.txt"), []byte("inside\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	j.planted = map[string]string{
		"link":     "../outside",
		"abslink":  j.outside,
		"flink":    "../outside/secret.txt",
		"absflink": filepath.Join(j.outside, "edit.txt"),
		"dotdot":   "..",
		"loop":     "loop",
		"dangling": "../outside/new.txt",
	}
	j.plant(tb)
	j.before = j.snapshot(tb)
	var err error
	j.fs, err = backend.NewFilesystemBackend(j.root, backend.FilesystemOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return j
}

// plant (re)creates the symbolic links in the root, including one in a
// subdirectory pointing two levels up.
func (j *jail) plant(tb testing.TB) {
	tb.Helper()
	links := map[string]string{"sub/deeplink": "../../outside", "sub/deepflink": "../../outside/secret.txt"}
	for k, v := range j.planted {
		links[k] = v
	}
	if err := os.MkdirAll(filepath.Join(j.root, "sub"), 0o755); err != nil {
		tb.Fatal(err)
	}
	for name, target := range links {
		p := filepath.Join(j.root, name)
		if cur, err := os.Readlink(p); err == nil && cur == target {
			continue
		}
		os.RemoveAll(p)
		if err := os.Symlink(target, p); err != nil {
			tb.Fatal(err)
		}
	}
}

// snapshot records everything under base except the root: names, modes,
// sizes, modification times and contents.
func (j *jail) snapshot(tb testing.TB) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(j.base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == j.root {
			return fs.SkipDir
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fmt.Sprintf("%v %d %d", info.Mode(), info.Size(), info.ModTime().UnixNano())
		if info.Mode().IsRegular() {
			c, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(c)
		}
		out[p] = v
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// check fails if anything outside the root changed.
func (j *jail) check(tb testing.TB, what string) {
	tb.Helper()
	after := j.snapshot(tb)
	for p, v := range j.before {
		if after[p] != v {
			tb.Fatalf("%s changed %s outside the root:\n before %q\n after  %q", what, p, v, after[p])
		}
	}
	for p := range after {
		if _, ok := j.before[p]; !ok {
			tb.Fatalf("%s created %s outside the root", what, p)
		}
	}
}

// reset removes what the operations made in the root and replants the
// links, so the root does not grow without bound.
func (j *jail) reset(tb testing.TB) {
	tb.Helper()
	entries, err := os.ReadDir(j.root)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := j.planted[e.Name()]; ok || e.Name() == "inside.txt" || e.Name() == "sub" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(j.root, e.Name())); err != nil {
			tb.Fatal(err)
		}
	}
	j.plant(tb)
}

// op runs one operation and returns everything it produced as text.
func (j *jail) op(ctx context.Context, kind uint8, path, arg string) string {
	var b strings.Builder
	b.WriteString(path)
	switch kind % 9 {
	case 0:
		r, err := j.fs.Read(ctx, path, 0, 0)
		fmt.Fprint(&b, r.Lines, err)
	case 1:
		fmt.Fprint(&b, j.fs.Write(ctx, path, arg))
	case 2:
		n, err := j.fs.Edit(ctx, path, "X", arg, true)
		fmt.Fprint(&b, n, err)
		n, err = j.fs.Edit(ctx, path, "TOPSECRET", "", true)
		fmt.Fprint(&b, n, err)
	case 3:
		ls, err := j.fs.List(ctx, path)
		fmt.Fprint(&b, ls, err)
	case 4:
		gs, err := j.fs.Glob(ctx, arg, path)
		fmt.Fprint(&b, gs, err)
		gs, err = j.fs.Glob(ctx, "**", path)
		fmt.Fprint(&b, gs, err)
	case 5:
		ms, err := j.fs.Grep(ctx, backend.GrepQuery{Pattern: "TOPSECRET|inner", Path: path, Glob: arg})
		fmt.Fprint(&b, ms, err)
		ms, err = j.fs.Grep(ctx, backend.GrepQuery{Pattern: ".", Path: path, Mode: backend.GrepFiles})
		fmt.Fprint(&b, ms, err)
	case 6:
		fmt.Fprint(&b, j.fs.Upload(ctx, []backend.File{{Path: path, Content: []byte(arg)}, {Path: arg, Content: []byte(path)}}))
	case 7:
		for _, r := range j.fs.Download(ctx, []string{path, arg}) {
			fmt.Fprintf(&b, "%s %s %v", r.Path, r.Content, r.Err)
		}
	case 8:
		_, err := j.fs.Grep(ctx, backend.GrepQuery{Pattern: arg, Path: path})
		fmt.Fprint(&b, err)
	}
	return b.String()
}

func FuzzFilesystemConfinement(f *testing.F) {
	j := newJail(f)
	seeds := []string{
		"", "/", ".", "..", "../", "/..", "/../outside/secret.txt", "../outside/secret.txt",
		"~", "~/x", "~root/.ssh", "C:\\Windows", "c:/x", "\\\\server\\share", "a\x00b", "/link\x00/secret.txt",
		"/link/secret.txt", "link/sub/inner.txt", "/abslink/secret.txt", "/flink", "/absflink", "/dotdot/outside/secret.txt",
		"/sub/deeplink/secret.txt", "/sub/deepflink", "/loop", "/loop/x", "/dangling", "/link/new.txt", "/link",
		"/link/", "/abslink/sub", "/sub/deeplink/sub/inner.txt", "//link//secret.txt", "/./link/./secret.txt",
		"foo/../../outside", "/inside.txt/../link", "/" + strings.Repeat("a", 300), "/" + strings.Repeat("d/", 200) + "f",
		j.outside + "/secret.txt", j.base, "/proc/self/root" + j.outside + "/secret.txt", "/dev/stdin",
		"**", "**/*", "link/**", "/link/*", "*/*.txt", "{link,abslink}/**", "[", "a\\", "\\..\\outside",
	}
	for i, s := range seeds {
		f.Add(uint8(i), s, seeds[(i*7+3)%len(seeds)])
	}
	ctx := context.Background()
	n := 0
	f.Fuzz(func(t *testing.T, kind uint8, path, arg string) {
		out := j.op(ctx, kind, path, arg)
		if strings.Contains(out, j.secret) {
			t.Fatalf("op %d(%q, %q) revealed the secret outside the root: %s", kind%9, path, arg, out)
		}
		j.check(t, fmt.Sprintf("op %d(%q, %q)", kind%9, path, arg))
		if n++; n%64 == 0 {
			j.reset(t)
		}
	})
}

func TestFilesystemRefusesSymlinks(t *testing.T) {
	j := newJail(t)
	ctx := context.Background()
	for _, p := range []string{"/link/secret.txt", "/abslink/secret.txt", "/flink", "/absflink", "/dotdot/outside/secret.txt", "/sub/deeplink/secret.txt", "/sub/deepflink", "/loop"} {
		_, err := j.fs.Read(ctx, p, 0, 0)
		if !errorsIs(err, backend.ErrPermission) {
			t.Errorf("Read(%s): %v, want ErrPermission", p, err)
		}
		if r := j.fs.Download(ctx, []string{p}); backend.ErrorCode(r[0].Err) != "permission_denied" {
			t.Errorf("Download(%s): %v", p, r[0].Err)
		}
	}
	if _, err := j.fs.Edit(ctx, "/absflink", "X", "Y", true); !errorsIs(err, backend.ErrPermission) {
		t.Errorf("Edit through a symlink: %v", err)
	}
	if r := j.fs.Upload(ctx, []backend.File{{Path: "/flink", Content: []byte("x")}}); backend.ErrorCode(r[0].Err) != "permission_denied" {
		t.Errorf("Upload over a symlink: %v", r[0].Err)
	}
	if err := j.fs.Write(ctx, "/link/new.txt", "x"); err == nil {
		t.Error("Write through a symlinked directory succeeded")
	}
	if err := j.fs.Write(ctx, "/dangling", "x"); err == nil {
		t.Error("Write over a dangling symlink succeeded")
	}
	if _, err := j.fs.List(ctx, "/link"); !errorsIs(err, backend.ErrPermission) {
		t.Errorf("List of a symlinked directory: %v", err)
	}
	ls, _ := j.fs.List(ctx, "/")
	if got := pathsOf(ls); strings.Join(got, " ") != "/inside.txt /sub" {
		t.Errorf("List(/) = %q: symlinks must not be listed", got)
	}
	ms, err := j.fs.Grep(ctx, backend.GrepQuery{Pattern: "TOPSECRET|inner"})
	if err != nil || len(ms) != 0 {
		t.Errorf("Grep found %v, %v", ms, err)
	}
	gs, _ := j.fs.Glob(ctx, "**", "/")
	if got := pathsOf(gs); strings.Join(got, " ") != "/inside.txt" {
		t.Errorf("Glob(**) = %q", got)
	}
	// A host path is just a name below the root.
	if _, err := j.fs.Read(ctx, j.outside+"/secret.txt", 0, 0); !errorsIs(err, backend.ErrNotFound) {
		t.Errorf("Read of a host path: %v, want ErrNotFound", err)
	}
	j.check(t, "the operations")
}

func TestFilesystemSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := mkfifo(fifo); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	fs, _ := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := fs.Read(ctx, "/fifo", 0, 0); !errorsIs(err, backend.ErrPermission) {
			t.Errorf("Read of a FIFO: %v", err)
		}
		if ms, err := fs.Grep(ctx, backend.GrepQuery{Pattern: "x"}); err != nil || len(ms) != 0 {
			t.Errorf("Grep with a FIFO: %v %v", ms, err)
		}
		if r := fs.Upload(ctx, []backend.File{{Path: "/fifo", Content: []byte("x")}}); r[0].Err == nil {
			t.Error("Upload over a FIFO succeeded")
		}
	}()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("an operation on a FIFO hung")
	}
}

func TestFilesystemNonVirtualReachesHostPaths(t *testing.T) {
	j := newJail(t)
	fs, err := backend.NewFilesystemBackend(j.root, backend.FilesystemOptions{NonVirtual: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := fs.Read(context.Background(), j.outside+"/secret.txt", 0, 0)
	if err != nil || len(r.Lines) != 1 || r.Lines[0] != j.secret {
		t.Errorf("non-virtual Read of a host path: %v, %v", r, err)
	}
	ms, err := fs.Grep(context.Background(), backend.GrepQuery{Pattern: "inside"})
	if err != nil || len(ms) != 1 || ms[0].Path != filepath.ToSlash(j.root)+"/inside.txt" {
		t.Errorf("non-virtual Grep with an empty path searches the root: %v, %v", ms, err)
	}
	// The last element is still never followed.
	if _, err := fs.Read(context.Background(), j.root+"/flink", 0, 0); !errorsIs(err, backend.ErrPermission) {
		t.Errorf("non-virtual Read of a symlink: %v", err)
	}
}

func TestFilesystemGrepSkipsLargeFiles(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("needle\n"), (1<<20)/7+1) // just over 1 MiB
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "small.txt"), []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, _ := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{MaxFileSizeMB: 1})
	ms, err := fs.Grep(context.Background(), backend.GrepQuery{Pattern: "needle", Mode: backend.GrepFiles})
	if err != nil || len(ms) != 1 || ms[0].Path != "/small.txt" {
		t.Errorf("Grep with a 1 MB limit: %v, %v", ms, err)
	}
	// Read is not limited.
	r, err := fs.Read(context.Background(), "/big.txt", 149795, 10)
	if err != nil || len(r.Lines) != 2 {
		t.Errorf("Read of the big file's tail: %d lines, %v", len(r.Lines), err)
	}
	unlimited, _ := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{MaxFileSizeMB: -1})
	ms, _ = unlimited.Grep(context.Background(), backend.GrepQuery{Pattern: "needle", Mode: backend.GrepFiles})
	if len(ms) != 2 {
		t.Errorf("Grep without a limit: %v", ms)
	}
}
