package subagents_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/subagents"
	"github.com/deepagents-go/deepagents/tool"
)

// brokenTool fails: with an error, or with a panic.
func brokenTool(name string, panics bool) tool.Tool {
	return tool.Must(tool.New(name, "Fails.", func(context.Context, struct{}) (string, error) {
		if panics {
			panic("disk on fire")
		}
		return "", errors.New("disk full")
	}))
}

// panicModel is a subagent middleware whose model hook panics: the
// subagent's run fails with agent.ErrPanic.
type panicModel struct{}

func (panicModel) Name() string { return "panic_model" }

func (panicModel) WrapModel(context.Context, *agent.ModelRequest, agent.ModelHandler) (*llm.Response, error) {
	panic("middleware bug")
}

// ownTimeout is a compiled subagent with a deadline of its own: its
// context ends, its caller's does not.
type ownTimeout struct {
	a *agent.Agent
	d time.Duration
}

func (o ownTimeout) Invoke(ctx context.Context, in agent.Input) (*agent.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, o.d)
	defer cancel()
	return o.a.Invoke(ctx, in)
}

// TestParallelSubagentFailureIsolation runs three subagents in one turn,
// one of which fails in each way a subagent can: the other two finish, and
// the parent's next model request holds all three outcomes as tool
// results.
func TestParallelSubagentFailureIsolation(t *testing.T) {
	ok := []replay.Turn{
		{ToolCalls: []llm.ToolCall{
			taskCall("a", "alpha", "part A"),
			taskCall("x", "failing", "part X"),
			taskCall("b", "beta", "part B"),
		}},
		{Agent: "alpha", Content: "alpha report", DelayMS: 20},
		{Agent: "beta", Content: "beta report", DelayMS: 20},
	}
	tests := []struct {
		name string
		// failing is the failing subagent and its turns.
		failing subagents.Subagent
		turns   []replay.Turn
		// outcome is in the failing call's result; isErr says whether
		// that result is an error (a subagent that recovers from its
		// tool's failure reports normally).
		outcome []string
		isErr   bool
	}{
		{
			name:    "its model fails",
			failing: subagents.Subagent{Name: "failing", Description: "fails"},
			turns:   []replay.Turn{{Agent: "failing", Error: "provider down"}},
			outcome: []string{"Error: subagent failing failed", "provider down"},
			isErr:   true,
		},
		{
			name:    "its tool returns an error",
			failing: subagents.Subagent{Name: "failing", Description: "fails", Tools: []tool.Tool{brokenTool("broken", false)}},
			turns: []replay.Turn{
				{Agent: "failing", ToolCalls: []llm.ToolCall{{ID: "f1", Name: "broken", Args: json.RawMessage(`{}`)}}},
				{Agent: "failing", Content: "could not finish: the tool said disk full", Expect: &replay.Expect{LastMessageContains: []string{"disk full"}}},
			},
			outcome: []string{"could not finish: the tool said disk full"},
		},
		{
			name:    "its tool panics",
			failing: subagents.Subagent{Name: "failing", Description: "fails", Tools: []tool.Tool{brokenTool("broken", true)}},
			turns: []replay.Turn{
				{Agent: "failing", ToolCalls: []llm.ToolCall{{ID: "f1", Name: "broken", Args: json.RawMessage(`{}`)}}},
				{Agent: "failing", Content: "the tool crashed", Expect: &replay.Expect{LastMessageContains: []string{"failed unexpectedly", "disk on fire"}}},
			},
			outcome: []string{"the tool crashed"},
		},
		{
			name:    "its middleware panics",
			failing: subagents.Subagent{Name: "failing", Description: "fails", Middleware: []agent.Middleware{panicModel{}}},
			outcome: []string{"Error: subagent failing failed", "the run panicked", "middleware bug"},
			isErr:   true,
		},
		{
			name:    "it reaches its step limit",
			failing: subagents.Subagent{Name: "failing", Description: "fails", Tools: []tool.Tool{noteTool()}},
			turns: []replay.Turn{
				{Agent: "failing", ToolCalls: []llm.ToolCall{{ID: "n1", Name: "note", Args: json.RawMessage(`{"path":"/1","content":"1"}`)}}},
				{Agent: "failing", ToolCalls: []llm.ToolCall{{ID: "n2", Name: "note", Args: json.RawMessage(`{"path":"/2","content":"2"}`)}}},
				{Agent: "failing", ToolCalls: []llm.ToolCall{{ID: "n3", Name: "note", Args: json.RawMessage(`{"path":"/3","content":"3"}`)}}},
			},
			outcome: []string{"Error: subagent failing failed", "step limit reached", "3 model calls"},
			isErr:   true,
		},
		{
			name: "its own context times out",
			// failing.Runnable is set below: it needs the model.
			failing: subagents.Subagent{Name: "failing", Description: "fails"},
			turns:   []replay.Turn{{Agent: "failing", Content: "never finished", DelayMS: 60_000}},
			outcome: []string{"Error: subagent failing failed", "context deadline exceeded"},
			isErr:   true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns := append(append(append([]replay.Turn(nil), ok...), tt.turns...), replay.Turn{
				Content: "merged",
				Expect:  &replay.Expect{MessagesContain: append([]string{"alpha report", "beta report"}, tt.outcome...)},
			})
			m := replay.New(turns...)
			failing := tt.failing
			if tt.name == "its own context times out" {
				slow, err := agent.New(agent.Config{Name: "failing", Model: m})
				if err != nil {
					t.Fatal(err)
				}
				failing.Runnable = ownTimeout{slow, 50 * time.Millisecond}
			}
			a := newMain(t, m, subagents.Config{
				Parent:           subagents.Parent{Agent: agent.Config{MaxSteps: 3}},
				NoGeneralPurpose: true,
				Subagents: []subagents.Subagent{
					{Name: "alpha", Description: "works"},
					failing,
					{Name: "beta", Description: "works"},
				},
			})
			start := time.Now()
			res, err := a.Invoke(context.Background(), agent.Prompt("go"))
			if err != nil {
				t.Fatal(err)
			}
			if time.Since(start) > 30*time.Second {
				t.Errorf("the run took %v", time.Since(start))
			}
			if res.Status != agent.StatusCompleted || res.Text() != "merged" {
				t.Fatalf("result %s %q", res.Status, res.Text())
			}
			got := resultsByID(res.State.Messages)
			for id, want := range map[string]string{"a": "alpha report", "b": "beta report"} {
				if r := got[id]; r.Text() != want || r.IsError {
					t.Errorf("%s: %q (error %v), want %q", id, r.Text(), r.IsError, want)
				}
			}
			x := got["x"]
			for _, s := range tt.outcome {
				if !strings.Contains(x.Text(), s) {
					t.Errorf("failing call's result %q lacks %q", x.Text(), s)
				}
			}
			if x.IsError != tt.isErr {
				t.Errorf("failing call's result is an error: %v, want %v", x.IsError, tt.isErr)
			}
			if m.Remaining() != 0 {
				t.Errorf("%d turns unplayed", m.Remaining())
			}
		})
	}
}

// TestParentCancellationCancelsEverySubagent: cancelling the parent's run
// stops all its running subagents, and the run ends with the
// cancellation.
func TestParentCancellationCancelsEverySubagent(t *testing.T) {
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{
			taskCall("a", "alpha", "part A"),
			taskCall("b", "beta", "part B"),
			taskCall("c", "gamma", "part C"),
		}},
		replay.Turn{Agent: "alpha", Content: "a", DelayMS: 60_000},
		replay.Turn{Agent: "beta", Content: "b", DelayMS: 60_000},
		replay.Turn{Agent: "gamma", Content: "c", DelayMS: 60_000},
	)
	a := newMain(t, m, subagents.Config{
		NoGeneralPurpose: true,
		Subagents: []subagents.Subagent{
			{Name: "alpha", Description: "slow"}, {Name: "beta", Description: "slow"}, {Name: "gamma", Description: "slow"},
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	started := map[string]bool{}
	ended := map[string]agent.RunStatus{}
	in := agent.Prompt("go")
	in.Events = func(e agent.Event) {
		if len(e.Namespace) != 1 {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch e.Type {
		case agent.EventTextDelta: // each is in its model call
			started[e.Namespace[0]] = true
			if len(started) == 3 {
				cancel()
			}
		case agent.EventRunEnd:
			ended[e.Namespace[0]] = e.Status
		}
	}
	start := time.Now()
	_, err := a.Invoke(ctx, in)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want the cancellation", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the run took %v: the subagents were not cancelled", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ended) != 3 {
		t.Errorf("subagent runs ended: %v, want all three", ended)
	}
	for ns, st := range ended {
		if st != agent.StatusFailed {
			t.Errorf("%s ended %s", ns, st)
		}
	}
}
