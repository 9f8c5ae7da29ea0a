package backend_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
)

// sparseFile makes a file of size bytes under dir that starts with head and
// is zero bytes after it, without writing them: the disk holds only head.
func sparseFile(t *testing.T, dir, name, head string, size int64) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(head); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

// allocated returns how many bytes fn allocated.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReadMemoryIsBounded reads windows of 1 GB files: the memory a read
// takes depends on the window (and the limit), never on the file's size.
func TestReadMemoryIsBounded(t *testing.T) {
	const gb = 1 << 30
	dir := t.TempDir()
	var head strings.Builder
	for i := range 100 {
		fmt.Fprintf(&head, "line %d of a big file\n", i)
	}
	sparseFile(t, dir, "lines.txt", head.String(), gb)
	sparseFile(t, dir, "oneline.bin", "", gb) // a single 1 GB line
	fs, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{MaxFileSizeMB: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	var res backend.ReadResult
	n := allocated(func() { res, err = fs.Read(ctx, "/lines.txt", 0, 100) })
	if err != nil || len(res.Lines) != 100 || res.Lines[99] != "line 99 of a big file" || res.Truncated {
		t.Fatalf("100 lines: %d lines, truncated %v, %v", len(res.Lines), res.Truncated, err)
	}
	if n > 1<<20 {
		t.Errorf("reading 100 lines of a 1 GB file allocated %d bytes", n)
	}

	n = allocated(func() { res, err = fs.Read(ctx, "/oneline.bin", 0, 10) })
	if err != nil || len(res.Lines) != 1 || len(res.Lines[0]) != 1<<20 || !res.Truncated {
		t.Fatalf("a 1 GB line: %d lines, first %d bytes, truncated %v, %v", len(res.Lines), len(res.Lines[0]), res.Truncated, err)
	}
	// The line is gathered by appending, so a few times the limit, and
	// never anywhere near the file.
	if n > 8<<20 {
		t.Errorf("reading a 1 GB line allocated %d bytes, want a small multiple of the 1 MB limit", n)
	}

	// Downloads refuse what they would have to hold whole.
	out := fs.Download(ctx, []string{"/lines.txt", "/small.txt"})
	if !errors.Is(out[0].Err, backend.ErrTooLarge) || out[0].Content != nil {
		t.Errorf("download of 1 GB: %v, %d bytes", out[0].Err, len(out[0].Content))
	}
	if !strings.Contains(fmt.Sprint(out[0].Err), "1073741824 bytes") {
		t.Errorf("the error does not give the size: %v", out[0].Err)
	}
	if err := fs.Write(ctx, "/small.txt", "small"); err != nil {
		t.Fatal(err)
	}
	if out := fs.Download(ctx, []string{"/small.txt"}); out[0].Err != nil || string(out[0].Content) != "small" {
		t.Errorf("small download: %+v", out[0])
	}
}

// TestReadCutKeepsCharacters checks that a read cut at the limit does not
// end inside a multi-byte character.
func TestReadCutKeepsCharacters(t *testing.T) {
	dir := t.TempDir()
	// 'é' is two bytes; an odd prefix puts the 1 MiB cut inside one.
	content := "x" + strings.Repeat("é", 1<<20)
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{MaxFileSizeMB: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := fs.Read(context.Background(), "/f.txt", 0, 0)
	if err != nil || !res.Truncated || len(res.Lines) != 1 {
		t.Fatalf("%v, %+v", err, res.Truncated)
	}
	if got := res.Lines[0]; len(got) != 1<<20-1 || !strings.HasSuffix(got, "é") {
		t.Errorf("cut line: %d bytes, ends %q", len(got), got[len(got)-4:])
	}
}
