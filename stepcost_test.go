package deepagents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/rewind"
	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/tool"
	"github.com/deepagents-go/deepagents/workspace"
)

// costSteps is the run's length: long enough that a cost growing with the
// run shows between step 1,000 and step 4,000.
const costSteps = 4_100

// stepKind is what the scripted run's step i calls: a write of a new file
// into the growing folder, a read of it, or, at a few steps, a command
// (a tool with no traits, which may change anything) that writes a file
// beside them.
func stepKind(i int) string {
	switch {
	case i == 501 || i == 1_001 || i == 4_001 || i == 1_005 || i == 4_005:
		return "command"
	case i%2 == 0:
		return "write"
	default:
		return "read"
	}
}

// stepCall is step i's tool call. Names have one width, so that the
// same kind of step writes the same bytes wherever it is in the run.
func stepCall(i int) llm.ToolCall {
	args := map[string]any{}
	name := ""
	switch stepKind(i) {
	case "write":
		name = "write_file"
		args["file_path"], args["content"] = fmt.Sprintf("/notes/n%05d.md", i), fmt.Sprintf("note %05d\n", i)
	case "read":
		name = "read_file"
		args["file_path"] = fmt.Sprintf("/notes/n%05d.md", i-1)
	case "command":
		name = "command"
		args["name"] = fmt.Sprintf("out/c%05d.txt", i)
	}
	raw, _ := json.Marshal(args)
	return llm.ToolCall{ID: fmt.Sprintf("call%05d", i), Name: name, Args: raw}
}

// costProbe records, before each model call, what the tracker and the
// saver had done: after the rewind middleware (which it follows in the
// stack), so that the difference between two calls is the step between
// them.
type costProbe struct {
	tr *rewind.Tracker
	at []rewind.Counts // by step
}

func (p *costProbe) Name() string { return "cost-probe" }

func (p *costProbe) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	p.at = append(p.at, p.tr.Counts())
	return next(ctx, req)
}

// countingSaver is a Saver that counts the bytes of what each Put saves,
// by step: the checkpoint's delta and metadata as JSON. (The run commits
// while the next steps go on, so the step a checkpoint is of, not when
// it is saved, says whose it is.)
type countingSaver struct {
	checkpoint.Saver
	mu     sync.Mutex
	byStep map[int]int64
}

func (s *countingSaver) Put(ctx context.Context, cp *checkpoint.Checkpoint) error {
	b, err := json.Marshal(struct {
		checkpoint.Delta
		Meta json.RawMessage
	}{cp.Delta, cp.Meta})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.byStep[cp.Step] += int64(len(b))
	s.mu.Unlock()
	return s.Saver.Put(ctx, cp)
}

// TestStepCostIsFlat is the guard that no default makes a run's cost grow
// faster than its work: the deep agent with the CLI's workspace and
// rewind on (the defaults), a repository of 1,200 files that grows by a
// file every other step, 4,100 steps. What the workspace checkpoints and the saver do per
// step is counted, not timed: a step of file tools walks and reads
// nothing, and stats at most what it wrote; a command's step looks at what inotify
// noticed (or walks the folder once where it cannot), each entry stat'ed
// at most once, and reads only the file it wrote; and a step at 4,000
// costs what the same kind of step cost at 1,000.
func TestStepCostIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("a 4,100-step run")
	}
	ctx := context.Background()
	dir := t.TempDir()
	st := store.NewMemoryStore()
	ws, err := workspace.Open(workspace.Config{Dir: dir, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	tr, err := rewind.New(rewind.Config{Dir: dir, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	// The command writes beside the notes, in a folder there from the
	// start: each of its steps changes one file. The folder is a
	// repository of 1,200 files to begin with, so that it is watched
	// (inotify) from the first command on, early and late alike.
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 1_200 {
		p := filepath.Join(dir, fmt.Sprintf("src/p%02d/f%04d.go", i/100, i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("package p // %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	command := tool.Must(tool.New("command", "Write a file as a command would.", func(_ context.Context, in struct {
		Name string `json:"name"`
	}) (string, error) {
		p := filepath.Join(dir, filepath.FromSlash(in.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		return "done", os.WriteFile(p, []byte("output\n"), 0o644)
	}))
	turns := make([]replay.Turn, 0, costSteps)
	for i := 1; i < costSteps; i++ {
		turns = append(turns, replay.Turn{ToolCalls: []llm.ToolCall{stepCall(i)}, Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}})
	}
	turns = append(turns, replay.Turn{Content: "done", Usage: llm.Usage{InputTokens: 100, OutputTokens: 5}})
	saver := &countingSaver{Saver: checkpoint.NewMemorySaver(), byStep: make(map[int]int64)}
	probe := &costProbe{tr: tr}
	a, err := deepagents.New(deepagents.Config{
		Model:        replay.NewFromScript(&replay.Script{ContextWindow: 1 << 40, Turns: turns}),
		Backend:      ws.Backend,
		Checkpointer: saver,
		Store:        st,
		Tools:        []tool.Tool{command},
		Middleware:   append(ws.Middleware, probe),
		Rewind:       tr,
		MaxSteps:     costSteps + 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(ctx, deepagents.Input{Messages: []llm.Message{llm.UserText("take notes")}})
	if err != nil || res.Status != deepagents.StatusCompleted {
		t.Fatalf("run: %v, %v", res, err)
	}
	if len(probe.at) != costSteps {
		t.Fatalf("the probe saw %d model calls, want %d", len(probe.at), costSteps)
	}
	// cost is what step i's tools cost the workspace checkpoints: its
	// point, recorded before the model call that follows it.
	cost := func(i int) rewind.Counts {
		a, b := probe.at[i-1], probe.at[i] // before the calls of steps i and i+1
		return rewind.Counts{
			Walks: b.Walks - a.Walks, Walked: b.Walked - a.Walked, Stats: b.Stats - a.Stats,
			Reads: b.Reads - a.Reads, ReadBytes: b.ReadBytes - a.ReadBytes,
			Points: b.Points - a.Points, StoredBytes: b.StoredBytes - a.StoredBytes,
		}
	}
	entries := func() int64 { // what a walk can see now: every file and folder
		var n int64
		filepath.WalkDir(dir, func(string, os.DirEntry, error) error { n++; return nil })
		return n - 1
	}()
	for _, early := range []int{1_000, 1_002, 1_003, 1_005, 1_001} {
		late := early + 3_000
		kind := stepKind(early)
		e, l := cost(early), cost(late)
		switch kind {
		case "write":
			// At most a stat of the file it wrote, on a watched folder:
			// that nobody changed it since.
			if e.Walks != 0 || e.Walked != 0 || e.Stats > 1 || e.Reads != 0 || e.Points != 1 {
				t.Errorf("a write step at %d: %+v; want one point, no walk, no read, a stat at most", early, e)
			}
		case "read":
			if e != (rewind.Counts{}) {
				t.Errorf("a read step at %d: %+v; want nothing", early, e)
			}
		case "command":
			// A look at what inotify noticed (a stat of the file the
			// command wrote), or, without inotify, a walk: each entry
			// stat'ed at most once.
			for _, c := range []rewind.Counts{e, l} {
				if c.Walks > 1 || c.Walked > entries || c.Stats > entries || c.Walks+c.Stats == 0 || c.Reads != 1 || c.Points != 1 {
					t.Errorf("a command step: %+v; want a look or one walk of at most %d entries, one file read, one point", c, entries)
				}
			}
			if early == 1_001 && e.Walks != l.Walks {
				// Where a walk came instead of a look (the folder grew
				// since): what it reads and stores is what a look reads
				// and stores.
				e = rewind.Counts{Reads: e.Reads, ReadBytes: e.ReadBytes, Points: e.Points, StoredBytes: e.StoredBytes}
				l = rewind.Counts{Reads: l.Reads, ReadBytes: l.ReadBytes, Points: l.Points, StoredBytes: l.StoredBytes}
			}
		}
		if e != l {
			t.Errorf("a %s step's point costs more at step %d than at step %d:\n %+v\n %+v", kind, late, early, l, e)
		}
		// Its checkpoint: the model's turn and the tool's result.
		if se, sl := saver.byStep[early], saver.byStep[late]; se == 0 || se != sl {
			t.Errorf("a %s step's checkpoint: %d bytes at step %d, %d at step %d", kind, sl, late, se, early)
		}
	}
}
