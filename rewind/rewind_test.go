package rewind_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/rewind"
	"github.com/deepagents-go/deepagents/store"
)

// tree is a folder's entries, as text: "path mode content" a line each,
// links as "path -> target"; .git and ignored entries included, so that a
// test sees everything a restore might touch.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		info, _ := d.Info()
		switch {
		case rel == ".":
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			b.WriteString(rel + " -> " + target + "\n")
		case d.IsDir():
			b.WriteString(rel + "/ " + info.Mode().Perm().String() + "\n")
		default:
			data, _ := os.ReadFile(p)
			b.WriteString(rel + " " + info.Mode().Perm().String() + " " + string(data) + "\n")
		}
		return nil
	})
	return b.String()
}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newTracker(t *testing.T, dir string, st store.Store) *rewind.Tracker {
	t.Helper()
	tr, err := rewind.New(rewind.Config{Dir: dir, Store: st, MaxFileBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

// TestRestoreExactTree: what the file tools and commands did (edits,
// removals, moves, generated files and folders, modes) is undone to the
// exact tree; ignored files are neither recorded nor touched.
func TestRestoreExactTree(t *testing.T) {
	ctx := context.Background()
	dir, st := t.TempDir(), store.NewMemoryStore()
	write(t, dir, "a.txt", "alpha\n")
	write(t, dir, "src/b.go", "package b\n")
	write(t, dir, "src/c.go", "package c\n")
	write(t, dir, ".gitignore", "build/\n*.log\n")
	write(t, dir, "build/out", "built\n")
	write(t, dir, ".git/HEAD", "ref: refs/heads/main\n")
	write(t, dir, "run.sh", "#!/bin/sh\n")
	os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
	tr := newTracker(t, dir, st)
	first, err := tr.Record(ctx, "t", rewind.KindTurn, "make it better", "cp1")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(first.Changed(), "build/out") || slices.Contains(first.Changed(), ".git/HEAD") {
		t.Errorf("ignored entries recorded: %v", first.Changed())
	}
	before := tree(t, dir)

	// The agent's step: an edit, a removal, a move, a generated folder, a
	// mode, and output in ignored places.
	write(t, dir, "a.txt", "alpha, improved\n")
	os.Remove(filepath.Join(dir, "src/b.go"))
	os.Rename(filepath.Join(dir, "src/c.go"), filepath.Join(dir, "src/d.go"))
	write(t, dir, "gen/deep/x.txt", "generated\n")
	os.Chmod(filepath.Join(dir, "run.sh"), 0o700)
	write(t, dir, "build/out", "rebuilt\n")
	write(t, dir, "debug.log", "log\n")
	step, err := tr.Record(ctx, "t", rewind.KindStep, "", "cp2")
	if err != nil || step == nil {
		t.Fatalf("step: %v, %v", step, err)
	}
	if none, err := tr.Record(ctx, "t", rewind.KindStep, "", "cp3"); err != nil || none != nil {
		t.Errorf("a step that changed nothing recorded %+v, %v", none, err)
	}
	after := tree(t, dir)

	plan, err := tr.Restore(ctx, "t", 1, rewind.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := tree(t, dir)
	// The ignored files stay as the step left them.
	want := strings.Replace(before, "build/out -rw-r--r-- built", "build/out -rw-r--r-- rebuilt", 1)
	if !strings.Contains(got, "debug.log -rw-r--r-- log") {
		t.Errorf("an ignored file was removed:\n%s", got)
	}
	got = strings.Replace(got, "debug.log -rw-r--r-- log\n\n", "", 1)
	if got != want {
		t.Errorf("after the restore:\n%s\nwant:\n%s", got, want)
	}
	if len(plan.Kept) != 0 || len(plan.Written) == 0 || len(plan.Removed) == 0 {
		t.Errorf("plan %+v", plan)
	}
	// The restore is a point: restoring the step's puts the step back.
	if _, err := tr.Restore(ctx, "t", step.Seq, rewind.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, dir); got != after {
		t.Errorf("back to the step:\n%s\nwant:\n%s", got, after)
	}
}

// TestOutsideChangesKept: a file changed by hand since the point (between
// runs, or after the agent's last step) is kept and reported, unless the
// restore is forced.
func TestOutsideChangesKept(t *testing.T) {
	ctx := context.Background()
	dir, st := t.TempDir(), store.NewMemoryStore()
	write(t, dir, "agent.txt", "v1\n")
	write(t, dir, "mine.txt", "v1\n")
	write(t, dir, "later.txt", "v1\n")
	tr := newTracker(t, dir, st)
	tr.Record(ctx, "t", rewind.KindTurn, "first", "")
	write(t, dir, "agent.txt", "v2 by the agent\n")
	tr.Record(ctx, "t", rewind.KindStep, "", "")
	write(t, dir, "mine.txt", "v2 by hand, between runs\n")
	tr.Record(ctx, "t", rewind.KindTurn, "second", "")
	write(t, dir, "later.txt", "v2 by hand, after the last step\n")

	plan, err := tr.Restore(ctx, "t", 1, rewind.RestoreOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plan.Kept, []string{"later.txt", "mine.txt"}) || !slices.Equal(plan.Written, []string{"agent.txt"}) {
		t.Fatalf("plan %+v", plan)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "agent.txt")); string(data) != "v2 by the agent\n" {
		t.Errorf("a dry run changed agent.txt: %q", data)
	}
	if _, err := tr.Restore(ctx, "t", 1, rewind.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{"agent.txt": "v1\n", "mine.txt": "v2 by hand, between runs\n", "later.txt": "v2 by hand, after the last step\n"} {
		if data, _ := os.ReadFile(filepath.Join(dir, f)); string(data) != want {
			t.Errorf("%s = %q, want %q", f, data, want)
		}
	}
	if _, err := tr.Restore(ctx, "t", 1, rewind.RestoreOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"agent.txt", "mine.txt", "later.txt"} {
		if data, _ := os.ReadFile(filepath.Join(dir, f)); string(data) != "v1\n" {
			t.Errorf("forced: %s = %q", f, data)
		}
	}
}

// TestLargeAndBinary: a binary file is stored and put back as any other;
// a file over MaxFileBytes is recorded by its size and time, reported,
// and left as it is.
func TestLargeAndBinary(t *testing.T) {
	ctx := context.Background()
	dir, st := t.TempDir(), store.NewMemoryStore()
	write(t, dir, "big.txt", strings.Repeat("x", 2000))
	write(t, dir, "img.bin", "\x89PNG\x00\x01")
	tr := newTracker(t, dir, st)
	p, err := tr.Record(ctx, "t", rewind.KindTurn, "go", "")
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(p.Notes, "\n"); !strings.Contains(notes, "big.txt") || strings.Contains(notes, "img.bin") {
		t.Errorf("notes %q", p.Notes)
	}
	write(t, dir, "big.txt", "small now")
	write(t, dir, "img.bin", "\x89PNG\x00\x02")
	tr.Record(ctx, "t", rewind.KindStep, "", "")
	plan, err := tr.Restore(ctx, "t", 1, rewind.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plan.Unrestorable, []string{"big.txt"}) || !slices.Equal(plan.Written, []string{"img.bin"}) {
		t.Errorf("plan %+v", plan)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "img.bin")); string(data) != "\x89PNG\x00\x01" {
		t.Errorf("img.bin = %q", data)
	}
}

// TestLinksNotFollowed: a folder the agent replaced with a link out of
// the workspace is put back as a folder; nothing is written through the
// link.
func TestLinksNotFollowed(t *testing.T) {
	ctx := context.Background()
	dir, outside, st := t.TempDir(), t.TempDir(), store.NewMemoryStore()
	write(t, dir, "conf/x.txt", "mine\n")
	tr := newTracker(t, dir, st)
	tr.Record(ctx, "t", rewind.KindTurn, "go", "")
	os.RemoveAll(filepath.Join(dir, "conf"))
	if err := os.Symlink(outside, filepath.Join(dir, "conf")); err != nil {
		t.Fatal(err)
	}
	tr.Record(ctx, "t", rewind.KindStep, "", "")
	if _, err := tr.Restore(ctx, "t", 1, rewind.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "conf")); err != nil || !fi.IsDir() {
		t.Errorf("conf is not a folder again: %v %v", fi, err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "conf/x.txt")); string(data) != "mine\n" {
		t.Errorf("conf/x.txt = %q", data)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside the workspace: %v", entries)
	}
}

// TestPointsPersist: another process (a new Tracker on the same store)
// lists the points and restores; Forget and Vacuum remove what no thread
// needs, and only that.
func TestPointsPersist(t *testing.T) {
	ctx := context.Background()
	dir, st := t.TempDir(), store.NewMemoryStore()
	// Contents too large to be kept in the points themselves: blobs.
	one, two := strings.Repeat("one\n", 200), strings.Repeat("two\n", 200)
	write(t, dir, "a.txt", one)
	tr := newTracker(t, dir, st)
	tr.Record(ctx, "t", rewind.KindTurn, "first prompt", "cp1")
	write(t, dir, "a.txt", two)
	tr.Record(ctx, "t", rewind.KindStep, "", "cp2")
	tr.Record(ctx, "other", rewind.KindTurn, "other thread", "")

	again := newTracker(t, dir, st)
	points, err := again.Points(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 2 || points[0].Prompt != "first prompt" || points[0].CheckpointID != "cp1" || points[1].Kind != rewind.KindStep {
		t.Fatalf("points %+v", points)
	}
	if _, err := again.Restore(ctx, "t", 1, rewind.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.txt")); !bytes.Equal(data, []byte(one)) {
		t.Errorf("a.txt = %q", data)
	}
	if err := again.Forget(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if points, _ := newTracker(t, dir, st).Points(ctx, "t"); len(points) != 0 {
		t.Errorf("forgotten thread has %d points", len(points))
	}
	// two was only t's; one is the other thread's too.
	n, err := rewind.Vacuum(ctx, st)
	if err != nil || n != 1 {
		t.Errorf("Vacuum removed %d, %v; want 1", n, err)
	}
	other, _ := newTracker(t, dir, st).Points(ctx, "other")
	if len(other) != 1 {
		t.Fatalf("the other thread lost its points: %+v", other)
	}
}

// TestRestoreKeepsWhatItCannotSee: a folder that became a file again, but
// holds files made by hand and ignored files, stays; a file the scan no
// longer sees (ignored since) is not overwritten unless forced. (Found in
// review: both were lost.)
func TestRestoreKeepsWhatItCannotSee(t *testing.T) {
	ctx := context.Background()
	dir, st := t.TempDir(), store.NewMemoryStore()
	write(t, dir, "config", "a file\n")
	write(t, dir, ".env", "TOKEN=1\n")
	write(t, dir, ".gitignore", "*.local\n")
	tr := newTracker(t, dir, st)
	tr.Record(ctx, "t", rewind.KindTurn, "go", "")
	os.Remove(filepath.Join(dir, "config"))
	write(t, dir, "config/a.yaml", "agent\n")
	write(t, dir, ".gitignore", "*.local\n.env\n")
	tr.Record(ctx, "t", rewind.KindStep, "", "")
	write(t, dir, "config/mine.yaml", "by hand\n")
	write(t, dir, "config/secret.local", "ignored\n")
	write(t, dir, ".env", "TOKEN=2 by hand\n")

	plan, err := tr.Restore(ctx, "t", 1, rewind.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{"config/mine.yaml": "by hand\n", "config/secret.local": "ignored\n", ".env": "TOKEN=2 by hand\n"} {
		if data, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(data) != want {
			t.Errorf("%s = %q, %v; want it kept", f, data, err)
		}
	}
	if !slices.Contains(plan.Kept, ".env") || !slices.Contains(plan.Kept, "config") {
		t.Errorf("plan %+v", plan)
	}
	if _, err := tr.Restore(ctx, "t", 1, rewind.RestoreOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, ".env")); string(data) != "TOKEN=1\n" {
		t.Errorf("forced: .env = %q", data)
	}
}

// TestFIFOsDoNotHang: a FIFO where a .gitignore or a file is does not
// hold the scan. (Found in review.)
func TestFIFOsDoNotHang(t *testing.T) {
	ctx := context.Background()
	dir, st := t.TempDir(), store.NewMemoryStore()
	write(t, dir, "a.txt", "a\n")
	tr := newTracker(t, dir, st)
	tr.Record(ctx, "t", rewind.KindTurn, "go", "")
	for _, f := range []string{".gitignore", "sub/.gitignore"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		if err := syscall.Mkfifo(filepath.Join(dir, f), 0o644); err != nil {
			t.Skip(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := tr.Record(ctx, "t", rewind.KindStep, "", "")
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the scan hangs on a FIFO")
	}
}

// TestTwoProcesses: a point another process recorded since is read before
// the next one is numbered. (Found in review: it was overwritten.)
func TestTwoProcesses(t *testing.T) {
	ctx := context.Background()
	dir, st := t.TempDir(), store.NewMemoryStore()
	write(t, dir, "a.txt", "1\n")
	session, cli := newTracker(t, dir, st), newTracker(t, dir, st)
	session.Record(ctx, "t", rewind.KindTurn, "first", "")
	write(t, dir, "a.txt", "2\n")
	if _, err := cli.Record(ctx, "t", rewind.KindStep, "", ""); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "3\n")
	p, err := session.Record(ctx, "t", rewind.KindTurn, "second", "")
	if err != nil {
		t.Fatal(err)
	}
	points, _ := newTracker(t, dir, st).Points(ctx, "t")
	if p.Seq != 3 || len(points) != 3 || points[1].Kind != rewind.KindStep {
		t.Errorf("the session's point is %d; the points: %+v", p.Seq, points)
	}
}

// TestPointsOfAnotherFolder: a tracker never puts a folder back from
// points that recorded no files, or another folder's: everything they do
// not list would be removed.
func TestPointsOfAnotherFolder(t *testing.T) {
	ctx := context.Background()
	dir, other, st := t.TempDir(), t.TempDir(), store.NewMemoryStore()
	write(t, dir, "precious.txt", "keep me\n")
	turnsOnly, err := rewind.New(rewind.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	turnsOnly.Record(ctx, "t", rewind.KindTurn, "go", "")
	plan, err := newTracker(t, dir, st).Restore(ctx, "t", 1, rewind.RestoreOptions{Force: true})
	if err != nil || len(plan.Removed)+len(plan.Written) != 0 {
		t.Errorf("points without files put %s back: %+v, %v", dir, plan, err)
	}
	write(t, other, "x.txt", "x\n")
	newTracker(t, other, st).Record(ctx, "u", rewind.KindTurn, "go", "")
	if _, err := newTracker(t, dir, st).Restore(ctx, "u", 1, rewind.RestoreOptions{Force: true}); err == nil {
		t.Error("another folder's points put this one back")
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "precious.txt")); string(data) != "keep me\n" {
		t.Errorf("precious.txt = %q", data)
	}
}

// TestPointsStoredBefore: points stored as an earlier version stored them
// (their fields as the item's value) are read, restored from and kept by
// Vacuum.
func TestPointsStoredBefore(t *testing.T) {
	ctx := context.Background()
	dir, st := t.TempDir(), store.NewMemoryStore()
	content := strings.Repeat("old\n", 300)
	hash := fmt.Sprintf("%x", sha256.Sum256([]byte(content)))
	items := []store.Item{
		{Namespace: []string{"deepagents", "rewind", "blobs"}, Key: hash, Value: map[string]any{"data": base64.StdEncoding.EncodeToString([]byte(content))}},
		{Namespace: []string{"deepagents", "rewind", "hashes"}, Key: hash, Value: map[string]any{}},
		{Namespace: []string{"deepagents", "rewind", "points", "t"}, Key: "0000000001", Value: map[string]any{
			"kind": "turn", "dir": dir, "prompt": "before", "created_at": "2026-11-26T20:55:01Z",
			"changes": map[string]any{"a.txt": map[string]any{"h": hash, "s": float64(len(content)), "m": float64(0o644), "b": true, "t": float64(1)}},
		}},
	}
	if err := store.PutAll(ctx, st, items); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "new\n")
	tr := newTracker(t, dir, st)
	turns, err := tr.Turns(ctx, "t")
	if err != nil || len(turns) != 1 || turns[0].Prompt != "before" {
		t.Fatalf("turns %+v, %v", turns, err)
	}
	if n, err := rewind.Vacuum(ctx, st); err != nil || n != 0 {
		t.Errorf("Vacuum removed %d, %v: the old point uses its blob", n, err)
	}
	if _, err := tr.Restore(ctx, "t", 1, rewind.RestoreOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(data) != content {
		t.Errorf("a.txt = %.20q", data)
	}
}
