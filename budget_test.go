package deepagents_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/budget"
)

// A subagent with a budget of its own stops at it, with its last turn
// asked without tools, and what it spent counts to its task's budget: the
// task's own last turn comes sooner for it.
func TestSubagentBudget(t *testing.T) {
	no := true
	ls := func(id string) []llm.ToolCall {
		return []llm.ToolCall{{ID: id, Name: "ls", Args: json.RawMessage(`{"path":"/"}`)}}
	}
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{{ID: "t", Name: "task", Args: json.RawMessage(`{"description":"look","subagent_type":"scout"}`)}}},
		replay.Turn{Agent: "scout", ToolCalls: ls("s1")},
		replay.Turn{Agent: "scout", ToolCalls: ls("s2")},
		replay.Turn{Agent: "scout", Content: "Looked twice; stopped at my budget.", Expect: &replay.Expect{NoToolCalls: &no}},
		// The task's budget is 4 calls: 1 of its own and 3 of the scout's
		// are spent, so this one is its last, without tools.
		replay.Turn{Content: "The scout looked; that is all.", Expect: &replay.Expect{NoToolCalls: &no, MessagesContain: []string{"Looked twice"}}},
	)
	a, err := deepagents.New(deepagents.Config{Model: m, Budget: budget.Config{Steps: 4},
		Subagents: []deepagents.Subagent{{Name: "scout", Description: "looks", SystemPrompt: "You look.", Budget: &budget.Config{Steps: 2}}}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(context.Background(), agent.Prompt("go"))
	if err != nil {
		t.Fatal(err)
	}
	if res.EndCode != agent.EndBudget || !strings.Contains(res.EndReason, "model calls: 4 of 4") || res.LastMessage().Text() != "The scout looked; that is all." {
		t.Errorf("ended %q %q, last %q", res.EndCode, res.EndReason, res.LastMessage().Text())
	}
}

// A subagent the loop guard stops reports that it was stopped, not the
// result of the call it repeated.
func TestSubagentStoppedByTheLoopGuard(t *testing.T) {
	turns := []replay.Turn{{ToolCalls: []llm.ToolCall{{ID: "t", Name: "task", Args: json.RawMessage(`{"description":"look","subagent_type":"general-purpose"}`)}}}}
	for i := range 8 {
		turns = append(turns, replay.Turn{Agent: "general-purpose", Content: map[bool]string{true: "Looking again."}[i == 0],
			ToolCalls: []llm.ToolCall{{ID: "s" + string(rune('a'+i)), Name: "ls", Args: json.RawMessage(`{"path":"/"}`)}}})
	}
	turns = append(turns, replay.Turn{Content: "done", Expect: &replay.Expect{MessagesContain: []string{
		"The subagent was stopped (loop): ls repeated 8 times with the same arguments and result. Its last words:\nLooking again."}}})
	a, err := deepagents.New(deepagents.Config{Model: replay.New(turns...)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(context.Background(), agent.Prompt("go"))
	if err != nil {
		t.Fatal(err)
	}
	if res.EndCode != "" || res.LastMessage().Text() != "done" {
		t.Errorf("the caller ended %q %q", res.EndCode, res.LastMessage().Text())
	}
}
