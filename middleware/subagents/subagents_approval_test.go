package subagents_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/middleware/subagents"
	"github.com/deepagents-go/deepagents/tool"
)

// TestCompiledSubagentApprovalResumes: a compiled subagent (an
// *agent.Agent with its own approvals and Saver) that stops for approval
// gets its decision on resume, in the thread it stopped in, instead of
// starting over and asking again.
func TestCompiledSubagentApprovalResumes(t *testing.T) {
	ctx := context.Background()
	saver := checkpoint.NewMemorySaver()
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{taskCall("t", "compiled", "write a note")}},
		replay.Turn{Agent: "compiled", ToolCalls: []llm.ToolCall{{ID: "n", Name: "note", Args: json.RawMessage(`{"path":"/c.md","content":"c"}`)}}},
		replay.Turn{Agent: "compiled", Content: "noted it", Expect: &replay.Expect{LastMessageContains: []string{"noted"}}},
		replay.Turn{Content: "ok", Expect: &replay.Expect{LastMessageContains: []string{"noted it"}}},
	)
	sub, err := agent.New(agent.Config{Name: "compiled", Model: m, Tools: []tool.Tool{noteTool()}, Checkpointer: saver,
		Middleware: []agent.Middleware{newHITL(t, map[string]hitl.InterruptOn{"note": {}})}})
	if err != nil {
		t.Fatal(err)
	}
	subs, err := subagents.New(subagents.Config{NoGeneralPurpose: true,
		Subagents: []subagents.Subagent{{Name: "compiled", Description: "compiled", Runnable: sub}}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Model: m, Checkpointer: saver, Middleware: []agent.Middleware{subs}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(ctx, agent.Input{ThreadID: "main", Messages: []llm.Message{llm.UserText("go")}})
	if err != nil || res.Status != agent.StatusInterrupted {
		t.Fatalf("%v %+v", err, res)
	}
	if ns := res.Interrupts[0].Namespace; len(ns) != 1 || ns[0] != "compiled:t" {
		t.Errorf("namespace %v", ns)
	}
	res, err = a.Resume(ctx, "main", []agent.Decision{{Type: agent.DecisionApprove}})
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("after resume: %v %+v", err, res)
	}
	if _, ok := res.State.Files.Get("/c.md"); !ok {
		t.Error("the approved note is missing")
	}
}

// TestParallelSubagentsAskAndFail: in one turn two subagents ask for
// approval and a third fails. The run stops with both requests, each
// naming its subagent, in call order; the failure is answered and stays
// answered; on resume each decision reaches its own subagent.
func TestParallelSubagentsAskAndFail(t *testing.T) {
	ctx := context.Background()
	saver := checkpoint.NewMemorySaver()
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{
			taskCall("p", "painter", "paint"),
			taskCall("x", "flaky", "fail"),
			taskCall("w", "writer", "write"),
		}},
		replay.Turn{Agent: "painter", ToolCalls: []llm.ToolCall{{ID: "pn", Name: "note", Args: json.RawMessage(`{"path":"/paint.md","content":"red"}`)}}},
		replay.Turn{Agent: "flaky", Error: "provider down"},
		replay.Turn{Agent: "writer", ToolCalls: []llm.ToolCall{{ID: "wn", Name: "note", Args: json.RawMessage(`{"path":"/text.md","content":"words"}`)}}},
		replay.Turn{Agent: "painter", Content: "painted", Expect: &replay.Expect{LastMessageContains: []string{"noted"}}},
		replay.Turn{Agent: "writer", Content: "not written", Expect: &replay.Expect{LastMessageContains: []string{"no words"}}},
		replay.Turn{Content: "done", Expect: &replay.Expect{MessagesContain: []string{"painted", "not written", "provider down"}}},
	)
	ask := map[string]hitl.InterruptOn{"note": {}}
	subs, err := subagents.New(subagents.Config{
		Parent: subagents.Parent{Agent: agent.Config{Model: m, Tools: []tool.Tool{noteTool()}, Checkpointer: saver}}, NoGeneralPurpose: true,
		Subagents: []subagents.Subagent{
			{Name: "painter", Description: "paints", InterruptOn: ask},
			{Name: "flaky", Description: "fails"},
			{Name: "writer", Description: "writes", InterruptOn: ask},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Model: m, Checkpointer: saver, Middleware: []agent.Middleware{subs}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(ctx, agent.Input{ThreadID: "main", Messages: []llm.Message{llm.UserText("go")}})
	if err != nil || res.Status != agent.StatusInterrupted {
		t.Fatalf("%v %+v", err, res)
	}
	var who []string
	for _, r := range res.Interrupts {
		who = append(who, strings.Join(r.Namespace, "/")+" "+r.Tool)
	}
	if got := strings.Join(who, ", "); got != "painter:p note, writer:w note" {
		t.Errorf("requests: %s", got)
	}
	if r := resultsByID(res.State.Messages)["x"]; !r.IsError || !strings.Contains(r.Text(), "provider down") {
		t.Errorf("the failed call's result before the resume: %+v", r)
	}
	res, err = a.Resume(ctx, "main", []agent.Decision{{Type: agent.DecisionApprove}, {Type: agent.DecisionReject, Message: "no words"}})
	if err != nil || res.Status != agent.StatusCompleted || res.Text() != "done" {
		t.Fatalf("after resume: %v %+v", err, res)
	}
	if _, ok := res.State.Files.Get("/paint.md"); !ok {
		t.Error("the approved note is missing")
	}
	if _, ok := res.State.Files.Get("/text.md"); ok {
		t.Error("the rejected note was written")
	}
	if m.Remaining() != 0 {
		t.Errorf("%d turns unplayed", m.Remaining())
	}
}
