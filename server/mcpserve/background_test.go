package mcpserve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/mcp"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
)

// withWriter gives the fixture's agent a background subagent, writer,
// that asks before write_file; its tasks are task-1, task-2, ...
func withWriter(c *deepagents.Config) {
	var n atomic.Int64
	c.AsyncSubagents = []deepagents.AsyncSubagent{{Subagent: deepagents.Subagent{
		Name: "writer", Description: "Writes notes in the background.", SystemPrompt: "You write notes.",
		InterruptOn: map[string]deepagents.InterruptOn{"write_file": {}},
	}}}
	c.Async = deepagents.AsyncOptions{NewTaskID: func() string { return fmt.Sprintf("task-%d", n.Add(1)) }}
}

// TestMCPBackgroundApprovals: over the server's /mcp, a run whose
// background task parks lists the request in its result; the host
// lists it again and answers it (a rejection, whose message reaches the
// subagent), and a later run collects the task's result. The tools'
// names are taken before an assistant's.
func TestMCPBackgroundApprovals(t *testing.T) {
	f := newFixture(t, servertest.Options{Agent: withWriter, Graphs: []string{"deepagent", mcp.AnswerBackgroundApprovalTool}},
		replay.Turn{ToolCalls: []llm.ToolCall{servertest.Call("s", "start_async_task", `{"description":"write the note","subagent_type":"writer"}`)}},
		replay.Turn{ToolCalls: []llm.ToolCall{servertest.Call("w", "wait_async_task", `{"task_id":"task-1"}`)}},
		replay.Turn{Content: "the writer waits for your approval", Expect: &replay.Expect{LastMessageContains: []string{`"status":"awaiting_approval"`}}},
		replay.Turn{Agent: "writer", ToolCalls: []llm.ToolCall{servertest.Call("wf", "write_file", `{"file_path":"/note.txt","content":"hello"}`)}},
		replay.Turn{Agent: "writer", Content: "not written", Expect: &replay.Expect{LastMessageContains: []string{"not today"}}},
		replay.Turn{ToolCalls: []llm.ToolCall{servertest.Call("w2", "wait_async_task", `{"task_id":"task-1"}`)}},
		replay.Turn{Content: "The writer was told no.", Expect: &replay.Expect{LastMessageContains: []string{`"status":"success"`, "not written"}}},
	)
	c := mustConnectMCP(t, f, "2025-06-18")
	ctx := context.Background()
	tools, err := c.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = true
	}
	if !names[mcp.ListBackgroundApprovalsTool] || !names[mcp.AnswerBackgroundApprovalTool] || !names["deepagent"] || len(names) != 4 {
		t.Fatalf("tools %v: want the two background tools, deepagent, and the assistant named %s under another name", names, mcp.AnswerBackgroundApprovalTool)
	}

	structured := func(res *sdk.CallToolResult) map[string]any {
		t.Helper()
		b, _ := json.Marshal(res.StructuredContent)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("structured content %s: %v", b, err)
		}
		return m
	}
	res, text, out := callTool(ctx, t, c, "deepagent", map[string]any{"task": "write a note"})
	bg, _ := structured(res)["background_approvals"].([]any)
	if out.Status != "completed" || len(bg) != 1 || bg[0].(map[string]any)["task_id"] != "task-1" || bg[0].(map[string]any)["subagent"] != "writer" {
		t.Fatalf("run_task's result: %s %+v", text, structured(res))
	}
	var all strings.Builder
	for _, c := range res.Content {
		all.WriteString(c.(*sdk.TextContent).Text)
	}
	if !strings.Contains(all.String(), "Background task task-1 (subagent writer) waits for approval of write_file: call "+mcp.AnswerBackgroundApprovalTool) {
		t.Errorf("run_task's text does not say how to answer: %s", all.String())
	}

	res, text, _ = callTool(ctx, t, c, mcp.ListBackgroundApprovalsTool, map[string]any{"thread_id": out.ThreadID})
	if res.IsError || !strings.Contains(text, "task-1") {
		t.Fatalf("list_background_approvals: %s", text)
	}
	if res, text, _ = callTool(ctx, t, c, mcp.AnswerBackgroundApprovalTool, map[string]any{"thread_id": "another", "task_id": "task-1", "decision": "approve"}); !res.IsError {
		t.Errorf("a task answered on another thread: %s", text)
	}
	if res, text, _ = callTool(ctx, t, c, mcp.AnswerBackgroundApprovalTool, map[string]any{"thread_id": out.ThreadID, "task_id": "task-1", "decision": "reject", "message": "not today"}); res.IsError {
		t.Fatalf("answer_background_approval: %s", text)
	}
	if res, text, _ = callTool(ctx, t, c, mcp.AnswerBackgroundApprovalTool, map[string]any{"thread_id": out.ThreadID, "task_id": "task-1", "decision": "reject"}); !res.IsError {
		t.Errorf("a second answer: %s", text)
	}
	_, text, out = callTool(ctx, t, c, "deepagent", map[string]any{"task": "is it done?", "thread_id": out.ThreadID})
	if out.Status != "completed" || out.Answer != "The writer was told no." {
		t.Errorf("the next run: %s %+v", text, out)
	}
}
