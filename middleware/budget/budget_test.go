package budget_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/budget"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/tool"
)

// Each scripted turn costs $0.01 at this price: 1,000 input tokens at $10
// a million.
var (
	price = map[string]llm.Price{"replay:script": {Input: 10, Output: 10}}
	usage = llm.Usage{InputTokens: 1000}
)

var echo = tool.Must(tool.New("echo", "echoes", func(_ context.Context, in struct {
	N int `json:"n"`
}) (string, error) {
	return fmt.Sprint("echo ", in.N), nil
}))

// script is n tool turns then an answer, and the summary turn a spent
// budget asks for (it must come without tools).
func script(n int) []replay.Turn {
	var turns []replay.Turn
	for i := range n {
		turns = append(turns, replay.Turn{ToolCalls: []llm.ToolCall{{ID: fmt.Sprint("c", i), Name: "echo", Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}}, Usage: usage})
	}
	return append(turns, replay.Turn{Content: "done", Usage: usage})
}

func run(t *testing.T, cfg budget.Config, turns []replay.Turn) (*agent.Result, []llm.Message) {
	t.Helper()
	b, err := budget.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Model: replay.New(turns...), Tools: []tool.Tool{echo}, Middleware: []agent.Middleware{b}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(context.Background(), agent.Prompt("go"))
	if err != nil {
		t.Fatal(err)
	}
	return res, res.State.Messages
}

// A budget of $0.05 on a run that would cost $0.11: the model is told when
// $0.01 is left, the sixth call is the last, without tools, and asks for
// the final answer; the run ends completed with the code budget.
func TestDollars(t *testing.T) {
	no := true
	turns := script(10)[:5]
	turns = append(turns, replay.Turn{Content: "Summary: echoed 0 to 4; 5 to 9 are left.", Usage: usage,
		Expect: &replay.Expect{NoToolCalls: &no, LastMessageContains: []string{"The budget of this task is spent (dollars: $0.0500 of $0.0500)"}}})
	res, msgs := run(t, budget.Config{Dollars: 0.05, Prices: price}, turns)
	if res.Status != agent.StatusCompleted || res.EndCode != agent.EndBudget || !strings.Contains(res.EndReason, "dollars") {
		t.Fatalf("status %s, end %q %q", res.Status, res.EndCode, res.EndReason)
	}
	if last := res.LastMessage(); last.Text() != "Summary: echoed 0 to 4; 5 to 9 are left." {
		t.Errorf("the last message %q", last.Text())
	}
	var notes []string
	for _, m := range msgs {
		if m.Role == llm.RoleTool && strings.Contains(m.Text(), "Budget: ") {
			notes = append(notes, m.ToolCallID)
		}
	}
	if fmt.Sprint(notes) != "[c3]" {
		t.Errorf("budget notes on %v, want one, once 20%% is left (after the fourth call)", notes)
	}
}

// Each kind of budget ends the run at the call past it; a run within its
// budgets runs to its answer.
func TestKinds(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(0, 0)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(10 * time.Second) // each look at the clock is ten seconds later
		return now
	}
	for _, tt := range []struct {
		name string
		cfg  budget.Config
		want string // the end reason; "" for none
	}{
		{"steps", budget.Config{Steps: 3}, "model calls: 3 of 3"},
		{"tokens", budget.Config{Tokens: 2500}, "tokens: 3000 of 2500"},
		{"time", budget.Config{Time: time.Minute, Now: clock}, "time: "},
		{"within", budget.Config{Steps: 20, Dollars: 1, Prices: price}, ""},
		{"unknown price", budget.Config{Dollars: 0.01}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			turns := script(8)
			if tt.want != "" {
				turns = append(script(8)[:8], replay.Turn{Content: "summary"})
			}
			b, err := budget.New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			m := replay.New(turns...)
			a, err := agent.New(agent.Config{Model: m, Tools: []tool.Tool{echo}, Middleware: []agent.Middleware{b}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Invoke(context.Background(), agent.Prompt("go"))
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if res.EndCode != "" || res.LastMessage().Text() != "done" {
					t.Errorf("ended %q %q, last %q", res.EndCode, res.EndReason, res.LastMessage().Text())
				}
				return
			}
			if res.EndCode != agent.EndBudget || !strings.Contains(res.EndReason, tt.want) {
				t.Errorf("ended %q %q, want %q", res.EndCode, res.EndReason, tt.want)
			}
			// The last turn's calls, which the model made anyway, did not run.
			last := res.State.Messages[len(res.State.Messages)-1]
			if last.Role == llm.RoleTool && !strings.Contains(last.Text(), "budget is spent; this call was not run") {
				t.Errorf("a call after the budget: %q", last.Text())
			}
		})
	}
}

func TestConfig(t *testing.T) {
	for _, c := range []budget.Config{{Steps: -1}, {Dollars: -1}, {Low: 1}, {Low: -0.1}} {
		if _, err := budget.New(c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if !(budget.Config{}).IsZero() || (budget.Config{Time: time.Second}).IsZero() {
		t.Error("IsZero")
	}
}

// A task stopped for approval goes on with the same ledger when it is
// resumed: approvals do not renew its budget.
func TestResumeKeepsTheLedger(t *testing.T) {
	no := true
	b, err := budget.New(budget.Config{Steps: 2})
	if err != nil {
		t.Fatal(err)
	}
	ask, err := hitl.New(hitl.Config{On: map[string]hitl.InterruptOn{"echo": {}}})
	if err != nil {
		t.Fatal(err)
	}
	turns := script(3)[:2]
	turns = append(turns, replay.Turn{Content: "summary", Expect: &replay.Expect{NoToolCalls: &no}})
	a, err := agent.New(agent.Config{Model: replay.New(turns...), Tools: []tool.Tool{echo}, Checkpointer: checkpoint.NewMemorySaver(),
		Middleware: []agent.Middleware{b, ask}})
	if err != nil {
		t.Fatal(err)
	}
	in := agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}}
	for range 3 {
		res, err := a.Invoke(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != agent.StatusInterrupted {
			if res.EndCode != agent.EndBudget || res.LastMessage().Text() != "summary" {
				t.Fatalf("ended %q %q, last %q", res.EndCode, res.EndReason, res.LastMessage().Text())
			}
			return
		}
		in = agent.Input{ThreadID: "t", Decisions: []agent.Decision{{Type: agent.DecisionApprove}}}
	}
	t.Fatal("the run never ended")
}
