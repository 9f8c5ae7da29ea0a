package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/middleware/patch"
	"github.com/deepagents-go/deepagents/tool"
)

// recordingSaver remembers every checkpoint it was given.
type recordingSaver struct {
	checkpoint.Saver
	mu  sync.Mutex
	put []checkpoint.Checkpoint
}

func (s *recordingSaver) Put(ctx context.Context, cp *checkpoint.Checkpoint) error {
	s.mu.Lock()
	s.put = append(s.put, *cp)
	s.mu.Unlock()
	return s.Saver.Put(ctx, cp)
}

func texts(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		s := string(m.Role) + ":" + m.Text()
		for _, c := range m.ToolCalls {
			s += " call(" + c.ID + " " + c.Name + ")"
		}
		out = append(out, s)
	}
	return out
}

func TestThreadContinuesFromCheckpoints(t *testing.T) {
	saver := &recordingSaver{Saver: checkpoint.NewMemorySaver()}
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{call("a", "echo", `{"text":"one"}`)}},
		replay.Turn{Content: "first answer"},
		replay.Turn{Content: "second answer", Expect: &replay.Expect{MessagesContain: []string{"first question", "echo: one", "first answer", "second question"}}},
	)
	a := newAgent(t, agent.Config{Model: m, Tools: []tool.Tool{echoTool(t)}, Checkpointer: saver})
	ctx := context.Background()
	var checkpoints []string
	var threadID string
	for e, err := range a.Stream(ctx, agent.Input{ThreadID: "t1", Messages: []llm.Message{llm.UserText("first question")}}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Type == agent.EventCheckpoint {
			checkpoints = append(checkpoints, e.CheckpointID)
			threadID = e.ThreadID
		}
	}
	// The input, each of the two steps.
	if len(checkpoints) != 3 || threadID != "t1" {
		t.Fatalf("checkpoint events %v on thread %q", checkpoints, threadID)
	}
	res, err := a.Invoke(ctx, agent.Input{ThreadID: "t1", Messages: []llm.Message{llm.UserText("second question")}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user:first question", "assistant: call(a echo)", "tool:echo: one", "assistant:first answer", "user:second question", "assistant:second answer"}
	if diff := cmp.Diff(want, texts(res.State.Messages)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	// Every checkpoint keeps its parent's messages and stores only its
	// own step's.
	var counts []int
	total := 0
	for _, cp := range saver.put {
		counts = append(counts, len(cp.Messages))
		if cp.Keep != total {
			t.Errorf("checkpoint %s keeps %d messages of %d", cp.ID, cp.Keep, total)
		}
		total = cp.Keep + len(cp.Messages)
	}
	if diff := cmp.Diff([]int{1, 2, 1, 1, 1}, counts); diff != "" {
		t.Errorf("messages per checkpoint (-want +got):\n%s", diff)
	}
	th, err := saver.Thread(ctx, "t1")
	if err != nil || th.Status != checkpoint.StatusIdle || th.Head != res.CheckpointID {
		t.Errorf("thread = %+v, %v (result checkpoint %s)", th, err, res.CheckpointID)
	}
}

func TestTimeTravelForks(t *testing.T) {
	saver := checkpoint.NewMemorySaver()
	m := replay.New(
		replay.Turn{Content: "answer A"},
		replay.Turn{Content: "answer B"},
		replay.Turn{Content: "answer C", Expect: &replay.Expect{MessagesExclude: []string{"answer B", "question B"}}},
	)
	a := newAgent(t, agent.Config{Model: m, Checkpointer: saver})
	ctx := context.Background()
	r1, err := a.Invoke(ctx, agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("question A")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Invoke(ctx, agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("question B")}}); err != nil {
		t.Fatal(err)
	}
	r3, err := a.Invoke(ctx, agent.Input{ThreadID: "t", CheckpointID: r1.CheckpointID, Messages: []llm.Message{llm.UserText("question C")}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user:question A", "assistant:answer A", "user:question C", "assistant:answer C"}
	if diff := cmp.Diff(want, texts(r3.State.Messages)); diff != "" {
		t.Errorf("forked messages (-want +got):\n%s", diff)
	}
	hist, err := saver.History(ctx, "t", checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 6 {
		t.Errorf("history has %d checkpoints, want 6 (old branch kept)", len(hist))
	}
}

func TestBusyThreadIsRefused(t *testing.T) {
	saver := checkpoint.NewMemorySaver()
	lease, err := saver.Acquire(context.Background(), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(context.Background(), checkpoint.StatusIdle)
	a := newAgent(t, agent.Config{Model: replay.New(replay.Turn{Content: "x"}), Checkpointer: saver})
	_, err = a.Invoke(context.Background(), agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("hi")}})
	if !errors.Is(err, checkpoint.ErrBusy) {
		t.Fatalf("err = %v, want ErrBusy", err)
	}
}

func hitlAgent(t *testing.T, m llm.Model, saver checkpoint.Saver, on map[string]hitl.InterruptOn) *agent.Agent {
	return newAgent(t, agent.Config{
		Model:        m,
		Tools:        []tool.Tool{echoTool(t)},
		Checkpointer: saver,
		Middleware:   []agent.Middleware{newPatch(t), newHITL(t, on)},
	})
}

func TestHumanDecisions(t *testing.T) {
	two := replay.Turn{ToolCalls: []llm.ToolCall{call("a", "echo", `{"text":"guarded"}`), call("b", "other", `{}`)}}
	tests := []struct {
		name     string
		decision agent.Decision
		want     string // result of call a
		wantErr  bool
	}{
		{"approve", agent.Decision{Type: agent.DecisionApprove}, "echo: guarded", false},
		{"edit", agent.Decision{Type: agent.DecisionEdit, Args: json.RawMessage(`{"text":"edited"}`)}, "echo: edited", false},
		{"reject", agent.Decision{Type: agent.DecisionReject, Message: "not today"}, hitl.RejectedToolCall + ": not today", true},
	}
	// The decisions bind to the calls the checkpoint holds, whatever the
	// agent that resumes was built with.
	resumers := map[string]func(t *testing.T, a *agent.Agent, m llm.Model, saver checkpoint.Saver) *agent.Agent{
		"same agent": func(_ *testing.T, a *agent.Agent, _ llm.Model, _ checkpoint.Saver) *agent.Agent { return a },
		"rebuilt with approvals": func(t *testing.T, _ *agent.Agent, m llm.Model, saver checkpoint.Saver) *agent.Agent {
			return hitlAgent(t, m, saver, map[string]hitl.InterruptOn{"echo": {}})
		},
		"rebuilt without approvals": func(t *testing.T, _ *agent.Agent, m llm.Model, saver checkpoint.Saver) *agent.Agent {
			return hitlAgent(t, m, saver, nil)
		},
		"rebuilt without the middleware": func(t *testing.T, _ *agent.Agent, m llm.Model, saver checkpoint.Saver) *agent.Agent {
			return newAgent(t, agent.Config{Model: m, Tools: []tool.Tool{echoTool(t)}, Checkpointer: saver})
		},
	}
	for _, tt := range tests {
		for rname, resumer := range resumers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				saver := checkpoint.NewMemorySaver()
				m := replay.New(two, replay.Turn{Content: "finished"})
				a := hitlAgent(t, m, saver, map[string]hitl.InterruptOn{"echo": {}})
				ctx := context.Background()
				res, err := a.Invoke(ctx, agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}})
				if err != nil {
					t.Fatal(err)
				}
				if res.Status != agent.StatusInterrupted || len(res.Interrupts) != 1 || res.Interrupts[0].ToolCallID != "a" {
					t.Fatalf("result = %+v", res)
				}
				if got := toolResults(res.State.Messages); len(got) != 0 {
					t.Fatalf("tools ran before approval: %v", got)
				}
				if th, _ := saver.Thread(ctx, "t"); th.Status != checkpoint.StatusInterrupted {
					t.Errorf("thread status = %s", th.Status)
				}
				a = resumer(t, a, m, saver)
				res, err = a.Resume(ctx, "t", []agent.Decision{tt.decision})
				if err != nil {
					t.Fatal(err)
				}
				if res.Status != agent.StatusCompleted || res.Text() != "finished" {
					t.Fatalf("after resume: %+v", res)
				}
				var got *llm.Message
				for i, msg := range res.State.Messages {
					if msg.Role == llm.RoleTool && msg.ToolCallID == "a" {
						got = &res.State.Messages[i]
					}
				}
				if got == nil || got.Text() != tt.want || got.IsError != tt.wantErr {
					t.Fatalf("result of a = %+v", got)
				}
				if tt.decision.Type == agent.DecisionEdit {
					if args := string(res.State.Messages[1].ToolCalls[0].Args); args != `{"text":"edited"}` {
						t.Errorf("assistant message keeps args %s, want the edit", args)
					}
					snap, err := saver.Load(ctx, "t", "")
					if err != nil || string(snap.Messages[1].ToolCalls[0].Args) != `{"text":"edited"}` {
						t.Errorf("saved assistant message args = %s (%v)", snap.Messages[1].ToolCalls[0].Args, err)
					}
				}
				// The unguarded call ran once, after the decision, and the
				// guarded one was answered once: the original call of an
				// edit or a rejection never ran.
				all := strings.Join(toolResults(res.State.Messages), "|")
				if n := strings.Count(all, "b="); n != 1 {
					t.Errorf("call b answered %d times", n)
				}
				if n := strings.Count(all, "a="); n != 1 || strings.Contains(all, "echo: guarded") != (tt.decision.Type == agent.DecisionApprove) {
					t.Errorf("call a answered %d times: %s", n, all)
				}
			})
		}
	}
}

func TestDecisionErrors(t *testing.T) {
	ctx := context.Background()
	saver := checkpoint.NewMemorySaver()
	m := replay.New(replay.Turn{ToolCalls: []llm.ToolCall{call("a", "echo", `{"text":"x"}`)}}, replay.Turn{Content: "ok"})
	a := hitlAgent(t, m, saver, map[string]hitl.InterruptOn{"echo": {Allowed: []agent.DecisionType{agent.DecisionApprove, agent.DecisionReject}}})
	if _, err := a.Resume(ctx, "t", []agent.Decision{{Type: agent.DecisionApprove}}); !errors.Is(err, checkpoint.ErrNotFound) && !errors.Is(err, agent.ErrNotInterrupted) {
		t.Errorf("resume of a missing thread: %v", err)
	}
	if _, err := a.Invoke(ctx, agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		decisions []agent.Decision
		want      error
	}{
		{nil, agent.ErrDecisionCount},
		{[]agent.Decision{{Type: agent.DecisionApprove}, {Type: agent.DecisionApprove}}, agent.ErrDecisionCount},
		{[]agent.Decision{{Type: agent.DecisionEdit, Args: json.RawMessage(`{"text":"y"}`)}}, agent.ErrDecisionNotAllow},
	} {
		if _, err := a.Resume(ctx, "t", c.decisions); !errors.Is(err, c.want) {
			t.Errorf("decisions %v: err = %v, want %v", c.decisions, err, c.want)
		}
	}
	// An edit whose arguments do not fit the tool fails the resume, and
	// nothing runs.
	editable := hitlAgent(t, replay.New(replay.Turn{ToolCalls: []llm.ToolCall{call("e", "echo", `{"text":"x"}`)}}), saver, map[string]hitl.InterruptOn{"echo": {}})
	if _, err := editable.Invoke(ctx, agent.Input{ThreadID: "t2", Messages: []llm.Message{llm.UserText("go")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := editable.Resume(ctx, "t2", []agent.Decision{{Type: agent.DecisionEdit, Args: json.RawMessage(`{"text":7}`)}}); !errors.Is(err, agent.ErrDecisionArgs) {
		t.Errorf("edit with arguments of the wrong type: %v, want ErrDecisionArgs", err)
	}
	// A failed resume leaves the thread waiting; a correct one finishes.
	res, err := a.Resume(ctx, "t", []agent.Decision{{Type: agent.DecisionApprove}})
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("resume: %v, %+v", err, res)
	}
	if _, err := a.Resume(ctx, "t", []agent.Decision{{Type: agent.DecisionApprove}}); !errors.Is(err, agent.ErrNotInterrupted) {
		t.Errorf("resume of a finished thread: %v", err)
	}
}

func TestNewMessageOnInterruptedThreadPatchesTheCall(t *testing.T) {
	ctx := context.Background()
	saver := checkpoint.NewMemorySaver()
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{call("a", "echo", `{"text":"x"}`)}},
		replay.Turn{Content: "moved on", Expect: &replay.Expect{MessagesContain: []string{patch.CancelledToolCall, "never mind"}}},
	)
	a := hitlAgent(t, m, saver, map[string]hitl.InterruptOn{"echo": {}})
	if _, err := a.Invoke(ctx, agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}}); err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(ctx, agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("never mind")}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user:go", "assistant: call(a echo)", "tool:" + patch.CancelledToolCall, "user:never mind", "assistant:moved on"}
	if diff := cmp.Diff(want, texts(res.State.Messages)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	snap, err := saver.Load(ctx, "t", "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, texts(snap.Messages)); diff != "" {
		t.Errorf("saved messages (-want +got):\n%s", diff)
	}
}

func TestToolInterruptResumesThatTool(t *testing.T) {
	var calls int
	var mu sync.Mutex
	gated := tool.Must(tool.New("gated", "Ask first.", func(ctx context.Context, _ struct{}) (string, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		if ds, ok := agent.NestedDecisions(ctx); ok {
			return "inner decision: " + string(ds[0].Type), nil
		}
		return "", &agent.InterruptError{Requests: []agent.ActionRequest{{ToolCallID: "inner", Tool: "deep", Namespace: []string{"sub"}}}}
	}))
	ctx := context.Background()
	saver := checkpoint.NewMemorySaver()
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{call("a", "echo", `{"text":"x"}`), call("g", "gated", `{}`)}},
		replay.Turn{Content: "done", Expect: &replay.Expect{MessagesContain: []string{"inner decision: reject", "echo: x"}}},
	)
	a := newAgent(t, agent.Config{Model: m, Tools: []tool.Tool{echoTool(t), gated}, Checkpointer: saver,
		Middleware: []agent.Middleware{newPatch(t), newHITL(t, map[string]hitl.InterruptOn{"gated": {}})}})
	res, err := a.Invoke(ctx, agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}})
	if err != nil || res.Status != agent.StatusInterrupted || res.Interrupts[0].Tool != "gated" {
		t.Fatalf("first stop: %v %+v", err, res)
	}
	res, err = a.Resume(ctx, "t", []agent.Decision{{Type: agent.DecisionApprove}})
	if err != nil || res.Status != agent.StatusInterrupted || res.Interrupts[0].Tool != "deep" {
		t.Fatalf("second stop (the tool's own): %v %+v", err, res)
	}
	// The echo call finished before the tool interrupted; it is kept.
	if got := toolResults(res.State.Messages); len(got) != 1 || got[0] != "a=echo: x" {
		t.Fatalf("results after the tool interrupt: %v", got)
	}
	res, err = a.Resume(ctx, "t", []agent.Decision{{Type: agent.DecisionReject}})
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("final: %v %+v", err, res)
	}
	if calls != 2 {
		t.Errorf("gated tool ran %d times, want 2", calls)
	}
}
