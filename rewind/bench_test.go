package rewind_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/rewind"
	"github.com/deepagents-go/deepagents/sqlite"
	"github.com/deepagents-go/deepagents/store"
)

// repository makes a folder of n source files of 0.5–8 KB (each its own
// content) in folders of 50,
// with a .gitignore and an ignored build folder, as a real repository has.
func repository(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	line := "func f(x int) int { return x*x + 1 } // a line of code\n"
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("pkg%03d/file%05d.go", i/50, i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		body := fmt.Sprintf("package pkg%03d // file %d\n", i/50, i) + strings.Repeat(line, 10+rng.IntN(140))
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("/build/\n*.o\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "build"), 0o755)
	for i := range 200 {
		os.WriteFile(filepath.Join(dir, "build", fmt.Sprintf("obj%d.o", i)), []byte("object"), 0o644)
	}
	return dir
}

// BenchmarkRecordStep is a workspace checkpoint after a command's step
// on a repository of 10,000 files, with the defaults, in SQLite: the step
// edits one file and adds another, as a command would (no backend reports
// them). It reports the bytes stored per step (the JSON of the values
// put); the first point (the whole tree) and the walk that starts the
// watches are recorded before the timer, and reported on their own.
func BenchmarkRecordStep(b *testing.B) {
	ctx := context.Background()
	dir := repository(b, 10_000)
	dbPath := filepath.Join(b.TempDir(), "threads.db")
	db, err := sqlite.Open(ctx, dbPath, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	counted := &counting{Store: db.Store()}
	tr, err := rewind.New(rewind.Config{Dir: dir, Store: counted})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	start := time.Now()
	if _, err := tr.Record(ctx, "t", rewind.KindTurn, "start", ""); err != nil {
		b.Fatal(err)
	}
	firstTime := time.Since(start)
	first := counted.bytes
	// The step after a new thread's first point of a large folder walks
	// it once more, watched from then on (inotify, on Linux): timed apart.
	os.WriteFile(filepath.Join(dir, "warm.go"), []byte("package p\n"), 0o644)
	start = time.Now()
	if _, err := tr.Record(ctx, "t", rewind.KindStep, "", ""); err != nil {
		b.Fatal(err)
	}
	watchTime := time.Since(start)
	first = counted.bytes
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		edited := filepath.Join(dir, fmt.Sprintf("pkg%03d/file%05d.go", i%200, i%10_000))
		os.WriteFile(edited, []byte(fmt.Sprintf("package p // edit %d\n", i)), 0o644)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("new%d.go", i)), []byte("package p\n"), 0o644)
		b.StartTimer()
		p, err := tr.Record(ctx, "t", rewind.KindStep, "", "")
		if err != nil || p == nil || len(p.Changes) != 2 {
			b.Fatalf("%+v, %v", p, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(counted.bytes-first)/float64(b.N), "B-stored/step")
	b.ReportMetric(firstTime.Seconds()*1000, "ms-first-point")
	b.ReportMetric(watchTime.Seconds()*1000, "ms-watching-walk")
	b.ReportMetric(float64(first)/1e6, "MB-first-point")
	fi, _ := os.Stat(dbPath)
	b.ReportMetric(float64(fi.Size())/1e6, "MB-db-file")
}

// BenchmarkRecordFileStep is a workspace checkpoint after a step of file
// tools alone on the same repository: the step writes one file and edits
// another, as write_file and edit_file do, and the backend reports both
// (backend.WithChanges); the point records those and walks nothing.
func BenchmarkRecordFileStep(b *testing.B) {
	ctx := context.Background()
	dir := repository(b, 10_000)
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "threads.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tr, err := rewind.New(rewind.Config{Dir: dir, Store: db.Store()})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	if _, err := tr.Record(ctx, "t", rewind.KindTurn, "start", ""); err != nil {
		b.Fatal(err)
	}
	fsb, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{})
	if err != nil {
		b.Fatal(err)
	}
	before := tr.Counts()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		var changes []backend.Change
		var mu sync.Mutex
		wctx := backend.WithChanges(ctx, func(c backend.Change) {
			mu.Lock()
			changes = append(changes, backend.Change{Path: c.Path, Info: c.Info, Content: append([]byte(nil), c.Content...)})
			mu.Unlock()
		})
		if err := fsb.Write(wctx, fmt.Sprintf("/new%d.go", i), strings.Repeat("package p // new\n", 40)); err != nil {
			b.Fatal(err)
		}
		j := (i * 37) % 10_000
		edited := fmt.Sprintf("/pkg%03d/file%05d.go", j/50, j)
		if _, err := fsb.Edit(wctx, edited, "package", fmt.Sprintf("package /* edit %d */", i), false); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		p, err := tr.RecordChanges(ctx, "t", rewind.KindStep, "", "", changes)
		if err != nil || p == nil || len(p.Changes) != 2 {
			b.Fatalf("%+v, %v", p, err)
		}
	}
	b.StopTimer()
	after := tr.Counts()
	if after.Walks != before.Walks || after.Stats != before.Stats || after.Reads != before.Reads {
		b.Fatalf("a file step walked, stat'ed or read: %+v then %+v", before, after)
	}
}

// counting is the SQLite store, counting the bytes of the values put (as
// JSON, as it stores them).
type counting struct {
	*sqlite.Store
	bytes int64
}

func (c *counting) PutBatch(ctx context.Context, items []store.Item) error {
	for _, it := range items {
		b, _ := json.Marshal(it.Value)
		c.bytes += int64(len(b))
	}
	return c.Store.PutBatch(ctx, items)
}
