package agent_test

import (
	"context"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/tool"
)

// TestMessageIDs checks that every message of the conversation has an ID,
// that a message arriving with one keeps it, and that the events name the
// IDs the conversation keeps: a delta its assistant message's, a tool
// result its tool message's.
func TestMessageIDs(t *testing.T) {
	script := func() llm.Model {
		return replay.New(
			replay.Turn{Content: "looking", ToolCalls: []llm.ToolCall{call("c1", "echo", `{"text":"a"}`), call("c2", "echo", `{"text":"b"}`)}},
			replay.Turn{Content: "done"},
		)
	}
	in := agent.Input{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("go")}, ID: "human-1"}}}

	a := newAgent(t, agent.Config{Model: script(), Tools: []tool.Tool{echoTool(t)}})
	res, err := a.Invoke(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, m := range res.State.Messages {
		if m.ID == "" || seen[m.ID] {
			t.Errorf("message %d (%s): ID %q empty or repeated", i, m.Role, m.ID)
		}
		seen[m.ID] = true
	}
	if got := res.State.Messages[0].ID; got != "human-1" {
		t.Errorf("input message ID = %q, want human-1", got)
	}
	if in.Messages[0].ID != "human-1" {
		t.Error("the run changed the caller's message")
	}

	a = newAgent(t, agent.Config{Model: script(), Tools: []tool.Tool{echoTool(t)}})
	deltas := map[string]bool{}
	var messages, results []string
	for e, err := range a.Stream(context.Background(), in) {
		if err != nil {
			t.Fatal(err)
		}
		switch e.Type {
		case agent.EventTextDelta:
			deltas[e.MessageID] = true
		case agent.EventMessage:
			messages = append(messages, e.Message.ID)
		case agent.EventToolResult:
			results = append(results, e.MessageID)
		}
	}
	if len(messages) != 2 || len(deltas) != 2 || !deltas[messages[0]] || !deltas[messages[1]] {
		t.Errorf("delta message IDs %v, message IDs %v", deltas, messages)
	}
	if len(results) != 2 || results[0] == "" || results[0] == results[1] {
		t.Errorf("tool result message IDs %v", results)
	}
}

// Calls that come without an id get one unique in the thread, across runs:
// the same step of two runs must not reuse an id (a subagent's thread is
// named by its call's, and providers pair results with calls by id).
func TestMadeUpCallIDsAreUniqueInTheThread(t *testing.T) {
	turns := func() []replay.Turn {
		return []replay.Turn{
			{ToolCalls: []llm.ToolCall{call("", "echo", `{"text":"a"}`), call("", "echo", `{"text":"b"}`)}},
			{Content: "done"},
		}
	}
	a := newAgent(t, agent.Config{Model: replay.New(append(turns(), turns()...)...), Tools: []tool.Tool{echoTool(t)}, Checkpointer: checkpoint.NewMemorySaver()})
	var res *agent.Result
	for _, p := range []string{"one", "two"} {
		in := agent.Prompt(p)
		in.ThreadID = "t"
		var err error
		if res, err = a.Invoke(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	n := 0
	for _, m := range res.State.Messages {
		for _, c := range m.ToolCalls {
			n++
			if c.ID == "" || seen[c.ID] {
				t.Errorf("call id %q empty or repeated", c.ID)
			}
			seen[c.ID] = true
		}
	}
	if n != 4 {
		t.Errorf("%d calls in the thread, want 4", n)
	}
}
