package agent_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/tool"
)

// committingSaver is a memory saver that records what it committed and
// when, can take its time, and can fail its nth checkpoint. It is a
// checkpoint.BatchPutter only when batch is set.
type committingSaver struct {
	checkpoint.Saver
	delay  time.Duration
	failAt int // the checkpoint (1-based) whose commit fails; 0 never

	mu        sync.Mutex
	committed []string // checkpoint IDs, in commit order
	puts      int      // checkpoints offered
	batches   []int    // sizes of the PutBatch calls
}

var errDiskFull = errors.New("disk full")

func (s *committingSaver) Put(ctx context.Context, cp *checkpoint.Checkpoint) error {
	return s.commit(ctx, []*checkpoint.Checkpoint{cp})
}

func (s *committingSaver) commit(ctx context.Context, cps []*checkpoint.Checkpoint) error {
	time.Sleep(s.delay)
	s.mu.Lock()
	defer s.mu.Unlock()
	for range cps {
		s.puts++
		if s.puts == s.failAt {
			return errDiskFull
		}
	}
	for _, cp := range cps {
		if err := s.Saver.Put(ctx, cp); err != nil {
			return err
		}
		s.committed = append(s.committed, cp.ID)
	}
	return nil
}

func (s *committingSaver) isCommitted(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.committed, id)
}

// batchingSaver adds PutBatch.
type batchingSaver struct{ *committingSaver }

func (s batchingSaver) PutBatch(ctx context.Context, cps []*checkpoint.Checkpoint) error {
	s.mu.Lock()
	s.batches = append(s.batches, len(cps))
	s.mu.Unlock()
	return s.commit(ctx, cps)
}

// echoSteps is a script of n echo calls and a final answer.
func echoSteps(n int) *replay.Model {
	var turns []replay.Turn
	for i := range n {
		turns = append(turns, replay.Turn{ToolCalls: []llm.ToolCall{call(fmt.Sprintf("c%d", i), "echo", fmt.Sprintf(`{"text":"%d"}`, i))}})
	}
	return replay.New(append(turns, replay.Turn{Content: "done"})...)
}

// TestDurabilityModes: whatever the mode, the run's end state is saved and
// loads as the run left it, and every checkpoint event names a checkpoint
// already committed, before run_end. Sync and async commit every step;
// exit commits once.
func TestDurabilityModes(t *testing.T) {
	const steps = 6
	for _, tc := range []struct {
		mode        agent.Durability
		checkpoints int
	}{
		{"", steps + 2}, // the prompt, each tool step, the answer
		{agent.DurabilityAsync, steps + 2},
		{agent.DurabilitySync, steps + 2},
		{agent.DurabilityExit, 1},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			saver := &committingSaver{Saver: checkpoint.NewMemorySaver(), delay: time.Millisecond}
			a := newAgent(t, agent.Config{Model: echoSteps(steps), Tools: []tool.Tool{echoTool(t)}, Checkpointer: saver})
			var events []string
			var res *agent.Result
			for e, err := range a.Stream(context.Background(), agent.Input{ThreadID: "t", Durability: tc.mode, Messages: []llm.Message{llm.UserText("go")}}) {
				if err != nil {
					t.Fatal(err)
				}
				if e.Type == agent.EventCheckpoint {
					if !saver.isCommitted(e.CheckpointID) {
						t.Errorf("checkpoint event for %s before its commit", e.CheckpointID)
					}
					events = append(events, e.CheckpointID)
				}
				if e.Type == agent.EventRunEnd {
					res = &agent.Result{Status: e.Status}
				}
			}
			if res == nil || res.Status != agent.StatusCompleted {
				t.Fatalf("run ended %+v", res)
			}
			saver.mu.Lock()
			committed := slices.Clone(saver.committed)
			saver.mu.Unlock()
			if len(committed) != tc.checkpoints || !slices.Equal(events, committed) {
				t.Errorf("committed %d checkpoints %v, events %v; want %d, one event each in order", len(committed), committed, events, tc.checkpoints)
			}
			snap, err := saver.Load(context.Background(), "t", "")
			if err != nil {
				t.Fatal(err)
			}
			if n := len(snap.Messages); n != 2+2*steps {
				t.Errorf("the saved thread has %d messages, want %d", n, 2+2*steps)
			}
		})
	}
}

// TestDurabilityAsyncBatchesAndBounds: with commits slower than steps, the
// waiting steps go in one PutBatch, and the run never gets more than
// MaxPendingCheckpoints steps ahead of its commits.
func TestDurabilityAsyncBatchesAndBounds(t *testing.T) {
	const steps = 80
	saver := &committingSaver{Saver: checkpoint.NewMemorySaver(), delay: 3 * time.Millisecond}
	var ahead, maxAhead int
	var calls int
	m := &countingModel{Model: echoSteps(steps), onCall: func() {
		saver.mu.Lock()
		calls++
		// Each model call but the first follows a step handed to the writer.
		ahead = calls - 1 - (len(saver.committed) - 1)
		maxAhead = max(maxAhead, ahead)
		saver.mu.Unlock()
	}}
	a := newAgent(t, agent.Config{Model: m, Tools: []tool.Tool{echoTool(t)}, Checkpointer: batchingSaver{saver}})
	res, err := a.Invoke(context.Background(), agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}})
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatal(res, err)
	}
	saver.mu.Lock()
	defer saver.mu.Unlock()
	if len(saver.committed) != steps+2 {
		t.Errorf("%d checkpoints committed, want %d", len(saver.committed), steps+2)
	}
	if !slices.ContainsFunc(saver.batches, func(n int) bool { return n > 1 }) {
		t.Errorf("no batch of several checkpoints: %v", saver.batches)
	}
	if maxAhead > agent.MaxPendingCheckpoints+1 {
		t.Errorf("the run got %d steps ahead of its commits, bound %d", maxAhead, agent.MaxPendingCheckpoints)
	}
	if res.CheckpointID != saver.committed[len(saver.committed)-1] {
		t.Errorf("Result.CheckpointID %s is not the last committed", res.CheckpointID)
	}
}

type countingModel struct {
	llm.Model
	onCall func()
}

func (m *countingModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	m.onCall()
	return m.Model.Stream(ctx, req)
}

// TestDurabilityAsyncCommitFails: a failed background commit fails the run
// at its next step with the saver's error; the run's checkpoint is the
// last one committed, the thread loads from it, and nothing is committed
// after the failure. Sync fails at the step itself.
func TestDurabilityAsyncCommitFails(t *testing.T) {
	for _, mode := range []agent.Durability{agent.DurabilityAsync, agent.DurabilitySync} {
		t.Run(string(mode), func(t *testing.T) {
			saver := &committingSaver{Saver: checkpoint.NewMemorySaver(), failAt: 3}
			a := newAgent(t, agent.Config{Model: echoSteps(10), Tools: []tool.Tool{echoTool(t)}, Checkpointer: saver, Durability: mode})
			res, err := a.Invoke(context.Background(), agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}})
			if !errors.Is(err, errDiskFull) {
				t.Fatalf("err = %v, want the saver's", err)
			}
			saver.mu.Lock()
			committed := slices.Clone(saver.committed)
			saver.mu.Unlock()
			if len(committed) != 2 {
				t.Fatalf("committed %v, want the two before the failure", committed)
			}
			if res == nil || res.CheckpointID != committed[1] || res.Status != agent.StatusFailed {
				t.Errorf("result %+v, want failed at checkpoint %s", res, committed[1])
			}
			if snap, err := saver.Load(context.Background(), "t", ""); err != nil || snap.ID != committed[1] {
				t.Errorf("head %v, %v", snap, err)
			}
		})
	}
}

// TestDurabilityAsyncCancel: a cancelled run still commits the steps it
// finished; every step whose checkpoint event was seen loads.
func TestDurabilityAsyncCancel(t *testing.T) {
	saver := &committingSaver{Saver: checkpoint.NewMemorySaver(), delay: 2 * time.Millisecond}
	a := newAgent(t, agent.Config{Model: echoSteps(1000), Tools: []tool.Tool{echoTool(t)}, Checkpointer: saver})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen []string
	for e, err := range a.Stream(ctx, agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}}) {
		if err != nil {
			break
		}
		if e.Type == agent.EventCheckpoint {
			if seen = append(seen, e.CheckpointID); len(seen) == 5 {
				cancel()
			}
		}
	}
	for _, id := range seen {
		if _, err := saver.Load(context.Background(), "t", id); err != nil {
			t.Errorf("checkpoint %s, seen as an event: %v", id, err)
		}
	}
	th, err := saver.Thread(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	saver.mu.Lock()
	defer saver.mu.Unlock()
	if th.Head != saver.committed[len(saver.committed)-1] {
		t.Errorf("head %s is not the last commit", th.Head)
	}
}

func TestUnknownDurability(t *testing.T) {
	if _, err := agent.New(agent.Config{Model: replay.New(), Durability: "eventually"}); !errors.Is(err, agent.ErrDurability) {
		t.Errorf("New: %v", err)
	}
	a := newAgent(t, agent.Config{Model: replay.New(replay.Turn{Content: "x"})})
	if _, err := a.Invoke(context.Background(), agent.Input{Durability: "never", Messages: []llm.Message{llm.UserText("go")}}); !errors.Is(err, agent.ErrDurability) {
		t.Errorf("Invoke: %v", err)
	}
	for s, want := range map[string]agent.Durability{"": agent.DurabilityAsync, "sync": agent.DurabilitySync, "exit": agent.DurabilityExit} {
		if d, err := agent.ParseDurability(s); err != nil || d != want {
			t.Errorf("ParseDurability(%q) = %q, %v", s, d, err)
		}
	}
}

type failingAfter struct{}

func (failingAfter) Name() string { return "failing_after" }
func (failingAfter) AfterAgent(context.Context, *agent.Runtime) error {
	return errors.New("after hook failed")
}

// DurabilityExit saves a run that failed at its very end (an AfterAgent
// hook), as it saves any other failed run.
func TestDurabilityExitSavesAFailedRun(t *testing.T) {
	saver := &committingSaver{Saver: checkpoint.NewMemorySaver()}
	a := newAgent(t, agent.Config{Model: echoSteps(2), Tools: []tool.Tool{echoTool(t)}, Checkpointer: saver,
		Durability: agent.DurabilityExit, Middleware: []agent.Middleware{failingAfter{}}})
	res, err := a.Invoke(context.Background(), agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}})
	if err == nil || res.Status != agent.StatusFailed {
		t.Fatalf("run: %+v, %v", res, err)
	}
	snap, err := saver.Load(context.Background(), "t", "")
	if err != nil || len(snap.Messages) != 6 || res.CheckpointID != snap.ID {
		t.Fatalf("saved: %v, %v; result checkpoint %q", snap, err, res.CheckpointID)
	}
}

// A resumed thread whose first background commit fails reports the head
// it started from, not no checkpoint.
func TestDurabilityAsyncFailureOnAResumedThread(t *testing.T) {
	saver := &committingSaver{Saver: checkpoint.NewMemorySaver()}
	a := newAgent(t, agent.Config{Model: replay.New(replay.Turn{Content: "one"}), Checkpointer: saver})
	first, err := a.Invoke(context.Background(), agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}})
	if err != nil {
		t.Fatal(err)
	}
	saver.mu.Lock()
	saver.failAt = saver.puts + 1
	saver.mu.Unlock()
	a = newAgent(t, agent.Config{Model: echoSteps(3), Tools: []tool.Tool{echoTool(t)}, Checkpointer: saver})
	res, err := a.Invoke(context.Background(), agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("again")}})
	if !errors.Is(err, errDiskFull) || res == nil || res.CheckpointID != first.CheckpointID {
		t.Fatalf("result %+v, %v; want failed at the first run's checkpoint %s", res, err, first.CheckpointID)
	}
}

type panickingSaver struct{ checkpoint.Saver }

func (s panickingSaver) Put(ctx context.Context, cp *checkpoint.Checkpoint) error {
	if cp.Step > 1 {
		panic("saver bug")
	}
	return s.Saver.Put(ctx, cp)
}

// A saver that panics on the writer's goroutine fails the run with
// ErrPanic instead of crashing the program.
func TestDurabilityAsyncSaverPanics(t *testing.T) {
	a := newAgent(t, agent.Config{Model: echoSteps(5), Tools: []tool.Tool{echoTool(t)}, Checkpointer: panickingSaver{checkpoint.NewMemorySaver()}})
	res, err := a.Invoke(context.Background(), agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}})
	if !errors.Is(err, agent.ErrPanic) || res == nil || res.Status != agent.StatusFailed {
		t.Fatalf("result %+v, %v; want ErrPanic", res, err)
	}
}
