package rewind

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/store"
)

// TestFreshWatcherTrustsNoLog: two threads on a folder that grows past
// watchFrom; the other thread's tree is from a walk before any watch, so
// after the walk that starts the watches it walks again rather than trust
// a log that holds nothing of before, and its rewind keeps a file changed
// meanwhile. (Found in review: it overwrote it.)
func TestFreshWatcherTrustsNoLog(t *testing.T) {
	old := watchFrom
	watchFrom = 5
	defer func() { watchFrom = old }()
	ctx := context.Background()
	dir := t.TempDir()
	put := func(rel, s string) {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("x.txt", "v0\n")
	tr, err := New(Config{Dir: dir, Store: store.NewMemoryStore()})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	fsb, _ := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{})
	if _, err := tr.Record(ctx, "A", KindTurn, "a", ""); err != nil { // walk, small
		t.Fatal(err)
	}
	for i := range 6 {
		put(fmt.Sprintf("f%d.txt", i), "f\n")
	}
	if _, err := tr.Record(ctx, "B", KindTurn, "b", ""); err != nil { // walk: large now
		t.Fatal(err)
	}
	// B's agent edits x.txt (reported)
	var ch []backend.Change
	c2 := backend.WithChanges(ctx, func(c backend.Change) {
		ch = append(ch, backend.Change{Path: c.Path, Info: c.Info, Content: append([]byte(nil), c.Content...)})
	})
	if _, err := fsb.Edit(c2, "/x.txt", "v0", "agent", false); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.RecordChanges(ctx, "B", KindStep, "", "", ch); err != nil {
		t.Fatal(err)
	}
	put("x.txt", "user's precious version\n")                        // by hand
	if _, err := tr.Record(ctx, "A", KindStep, "", ""); err != nil { // walk that makes the watcher
		t.Fatal(err)
	}
	plan, err := tr.Restore(ctx, "B", 1, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "x.txt"))
	if string(got) != "user's precious version\n" || !slices.Contains(plan.Kept, "x.txt") {
		t.Errorf("B's rewind overwrote x.txt: %q; plan %+v", got, plan)
	}
}
