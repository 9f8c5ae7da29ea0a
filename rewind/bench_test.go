package rewind_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/rewind"
	"github.com/deepagents-go/deepagents/sqlite"
)

// repository makes a folder of n source files of 0.5–8 KB in folders of 50,
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
		if err := os.WriteFile(p, []byte(strings.Repeat(line, 10+rng.IntN(140))), 0o644); err != nil {
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

// BenchmarkRecordStep is a workspace checkpoint after a step of the agent
// on a repository of 10,000 files, with the defaults, in SQLite: the step
// edits one file and adds another. It reports the database's growth per
// step; the first point (the whole tree) is recorded before the timer.
func BenchmarkRecordStep(b *testing.B) {
	ctx := context.Background()
	dir := repository(b, 10_000)
	dbPath := filepath.Join(b.TempDir(), "threads.db")
	db, err := sqlite.Open(ctx, dbPath, nil)
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
	size := func() int64 {
		var n int64
		for _, suffix := range []string{"", "-wal"} {
			if fi, err := os.Stat(dbPath + suffix); err == nil {
				n += fi.Size()
			}
		}
		return n
	}
	first := size()
	b.ReportMetric(float64(first)/1e6, "MB-first-point")
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
	b.ReportMetric(float64(size()-first)/float64(b.N), "B-db/step")
}
