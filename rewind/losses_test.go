package rewind_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/rewind"
	"github.com/deepagents-go/deepagents/store"
)

// TestRewindLosesNothing: what the agent added by a command (a binary
// file, one of 2 MB) goes on a rewind to before it and comes back on a
// rewind forward, byte for byte; the state the last turn ended in is a
// turn a rewind can go back to (the rewind undone, files and
// conversation); a folder that still holds an ignored file is kept, and
// reported as kept rather than removed. Each of these was lost before.
func TestRewindLosesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, dir, ".gitignore", "*.o\n")
	write(t, dir, "a.txt", "alpha\n")
	saver := checkpoint.NewMemorySaver()
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{call("x", "execute", `{"command":"printf 'NEW\\0bin' > newbin.dat && head -c 2000000 /dev/zero | tr '\\0' y > newbig.txt && mkdir -p pkg/build && echo go > pkg/a.go && echo obj > pkg/build/x.o"}`)}},
		replay.Turn{Content: "made them"},
		replay.Turn{ToolCalls: []llm.ToolCall{call("w", "write_file", `{"file_path":"/e.txt","content":"echo\n"}`)}},
		replay.Turn{Content: "added e"},
	)
	a, tr := shellAgent(t, dir, m, store.NewMemoryStore(), saver)
	for _, prompt := range []string{"make files", "add e"} {
		if _, err := a.Invoke(ctx, deepagents.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText(prompt)}}); err != nil {
			t.Fatal(err)
		}
	}
	big, _ := os.ReadFile(filepath.Join(dir, "newbig.txt"))
	if len(big) != 2_000_000 {
		t.Fatalf("the command wrote %d bytes", len(big))
	}
	afterAll := tree(t, dir)

	res, err := deepagents.Rewind(ctx, a, "t", 1, rewind.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plan := res.Files
	for _, f := range []string{"newbin.dat", "newbig.txt", "pkg/a.go", "e.txt"} {
		if _, err := os.Lstat(filepath.Join(dir, f)); !os.IsNotExist(err) || !slices.Contains(plan.Removed, f) {
			t.Errorf("%s after rewinding to turn 1: %v; plan %+v", f, err, plan)
		}
	}
	// pkg/build still holds the ignored x.o: kept, and so is pkg.
	if data, _ := os.ReadFile(filepath.Join(dir, "pkg/build/x.o")); string(data) != "obj\n" {
		t.Errorf("the ignored pkg/build/x.o = %q", data)
	}
	if slices.Contains(plan.Removed, "pkg") || slices.Contains(plan.Removed, "pkg/build") || !slices.Equal(plan.NotEmpty, []string{"pkg", "pkg/build"}) {
		t.Errorf("the report of the folders kept: removed %v, not empty %v", plan.Removed, plan.NotEmpty)
	}

	// Forward to turn 2: what the first prompt made, byte for byte.
	if _, err := deepagents.Rewind(ctx, a, "t", 2, rewind.Options{}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "newbin.dat")); string(data) != "NEW\x00bin" {
		t.Errorf("newbin.dat = %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "newbig.txt")); !bytes.Equal(data, big) {
		t.Errorf("newbig.txt: %d bytes back, want the 2,000,000 written", len(data))
	}

	// The state after the last turn: the first rewind recorded it as
	// turn 3, which undoes that rewind, files and conversation.
	turns, err := tr.Turns(ctx, "t")
	if err != nil || len(turns) != 4 || turns[2].Kind != rewind.KindEnd || turns[3].Kind != rewind.KindEnd {
		t.Fatalf("turns %+v, %v", turns, err)
	}
	if _, err := deepagents.Rewind(ctx, a, "t", 3, rewind.Options{}); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, dir); got != afterAll {
		t.Errorf("after undoing the rewinds:\n%s\nwant:\n%s", got, afterAll)
	}
	snap, err := saver.Load(ctx, "t", "")
	if err != nil || len(snap.Messages) == 0 || snap.Messages[len(snap.Messages)-1].Text() != "added e" {
		t.Errorf("the conversation after undoing the rewinds: %v", err)
	}
}

// TestNeverRemovesWhatItCannotPutBack: an added file whose content was
// not stored (over MaxFileBytes, or past the thread's quota) stays where
// it is on a rewind to before it, and the plan says so; the quota's note
// names the file.
func TestNeverRemovesWhatItCannotPutBack(t *testing.T) {
	ctx := context.Background()
	dir, st := t.TempDir(), store.NewMemoryStore()
	write(t, dir, "a.txt", "alpha\n")
	tr, err := rewind.New(rewind.Config{Dir: dir, Store: st, MaxFileBytes: 1 << 20, MaxThreadBytes: 3000})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	tr.Record(ctx, "t", rewind.KindTurn, "go", "")
	write(t, dir, "huge.bin", strings.Repeat("\x00", 2<<20)) // over MaxFileBytes
	write(t, dir, "one.txt", strings.Repeat("1", 2000))      // within the quota
	write(t, dir, "two.txt", strings.Repeat("2", 2000))      // past it
	p, err := tr.Record(ctx, "t", rewind.KindStep, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(p.Notes, "\n"); !strings.Contains(notes, "huge.bin") || !strings.Contains(notes, "two.txt") || strings.Contains(notes, "one.txt") {
		t.Errorf("notes %q", p.Notes)
	}
	plan, err := tr.Restore(ctx, "t", 1, rewind.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plan.Removed, []string{"one.txt"}) || !slices.Equal(plan.Unrestorable, []string{"huge.bin", "two.txt"}) {
		t.Errorf("plan %+v", plan)
	}
	for f, n := range map[string]int{"huge.bin": 2 << 20, "two.txt": 2000} {
		if data, err := os.ReadFile(filepath.Join(dir, f)); err != nil || len(data) != n {
			t.Errorf("%s: %d bytes, %v; want it left as it was", f, len(data), err)
		}
	}
}

// askedModel is a model that says when it is first asked.
type askedModel struct {
	llm.Model
	once  sync.Once
	asked chan struct{}
}

func (m *askedModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	m.once.Do(func() { close(m.asked) })
	return m.Model.Stream(ctx, req)
}

// heldStore holds the first point's record until the model has been
// asked: a turn's point that the prompt waited for would never be
// recorded.
type heldStore struct {
	store.Store
	asked <-chan struct{}
	held  atomic.Bool
}

func (s *heldStore) Put(ctx context.Context, ns []string, key string, v map[string]any) error {
	if len(ns) == 4 && ns[2] == "points" && !s.held.Swap(true) {
		select {
		case <-s.asked:
		case <-time.After(10 * time.Second):
			return errors.New("the model was not asked while the turn's point was being recorded")
		}
	}
	return s.Store.Put(ctx, ns, key, v)
}

// TestFirstPointDelaysNoPrompt: the turn's point (the first of a folder
// reads every file) is recorded while the model answers the first
// request; the tool that writes after it waits for it, so the point is of
// the folder before the write.
func TestFirstPointDelaysNoPrompt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, dir, "a.txt", "alpha\n")
	m := &askedModel{asked: make(chan struct{}), Model: replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{call("w", "write_file", `{"file_path":"/b.txt","content":"bravo\n"}`)}},
		replay.Turn{Content: "done"},
	)}
	st := &heldStore{Store: store.NewMemoryStore(), asked: m.asked}
	a, tr := folderAgent(t, dir, m, st, checkpoint.NewMemorySaver())
	res, err := a.Invoke(ctx, deepagents.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}})
	if err != nil || res.Status != deepagents.StatusCompleted {
		t.Fatalf("%+v, %v", res, err)
	}
	points, err := tr.Points(ctx, "t")
	if err != nil || len(points) != 2 || points[0].Kind != rewind.KindTurn || points[0].Changes["b.txt"] != nil || points[1].Changes["b.txt"] == nil {
		t.Fatalf("points %+v, %v", points, err)
	}
}

// TestKilledWithPointsWaiting: a process killed while steps' points wait
// to be written (they are written together, as a run's checkpoints are)
// loses those points, not the files: a rewind in the next process keeps
// what the lost steps changed, as changes made outside the agent, and
// --force puts back the turn's files, which were written.
func TestKilledWithPointsWaiting(t *testing.T) {
	ctx := context.Background()
	dir, st := t.TempDir(), store.NewMemoryStore()
	write(t, dir, "a.txt", "v1\n")
	killed := newTracker(t, dir, st)
	if _, err := killed.Record(ctx, "t", rewind.KindTurn, "go", ""); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		write(t, dir, "a.txt", fmt.Sprintf("v%d by the agent\n", i+2))
		write(t, dir, fmt.Sprintf("new%d.txt", i), "new\n")
		if _, err := killed.RecordLazily(ctx, "t"); err != nil {
			t.Fatal(err)
		}
	}
	// Killed: never flushed, never closed.
	next := newTracker(t, dir, st)
	points, err := next.Points(ctx, "t")
	if err != nil || len(points) != 1 {
		t.Fatalf("the points the next process reads: %d, %v", len(points), err)
	}
	plan, err := next.Restore(ctx, "t", 1, rewind.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plan.Kept, []string{"a.txt", "new0.txt", "new1.txt", "new2.txt"}) || len(plan.Removed) != 0 {
		t.Errorf("plan %+v", plan)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(data) != "v4 by the agent\n" {
		t.Errorf("a.txt = %q, want it kept", data)
	}
	if _, err := next.Restore(ctx, "t", 1, rewind.RestoreOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, dir); got != "a.txt -rw-r--r-- v1\n\n" {
		t.Errorf("forced:\n%s", got)
	}
}
