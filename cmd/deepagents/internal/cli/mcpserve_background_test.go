package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepagents-go/deepagents/mcp"
)

// mcpBackground starts deepagents mcp-serve in a parkWorld's folder and
// connects an MCP client to it.
func mcpBackground(t *testing.T) (*world, *sdk.ClientSession) {
	t.Helper()
	w := parkWorld(t, "")
	cmd := exec.Command(binary(t), "mcp-serve", "--db", w.db, "--dir", w.dir, "--model", "replay:inline")
	cmd.Env = w.env()
	cmd.Stderr = os.Stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "test-host", Version: "1"}, nil)
	sess, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return w, sess
}

// callTool calls tool with args and decodes its structured result into out;
// it returns the result's text.
func callTool(t *testing.T, sess *sdk.ClientSession, tool string, args map[string]any, out any) string {
	t.Helper()
	res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	if res.IsError {
		t.Fatalf("%s failed: %s", tool, strings.Join(text, "\n"))
	}
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("%s's result %s: %v", tool, data, err)
	}
	return strings.Join(text, "\n")
}

// parkOverMCP runs a task on a new thread that starts writer on script
// and ends; it waits until list_background_approvals lists the writer's
// request, checks what it says, and returns the thread and the task.
func parkOverMCP(t *testing.T, sess *sdk.ClientSession, script string) (string, string) {
	t.Helper()
	var run mcp.RunTaskOutput
	callTool(t, sess, mcp.RunTaskTool, map[string]any{"task": `{"turns":[` + startWriter(script) + `,{"content":"started"}]}`}, &run)
	if run.Status != "completed" || run.ThreadID == "" {
		t.Fatalf("run_task: %+v", run)
	}
	var list mcp.ListBackgroundApprovalsOutput
	waitUntil(t, "the writer to park", func() bool {
		callTool(t, sess, mcp.ListBackgroundApprovalsTool, map[string]any{"thread_id": run.ThreadID}, &list)
		return len(list.Approvals) > 0
	})
	a := list.Approvals[0]
	if len(list.Approvals) != 1 || a.Subagent != "writer" || a.TaskID == "" || len(a.Pending) != 1 || a.Pending[0].Tool != "write_file" || a.Pending[0].Args["file_path"] != "/note.txt" {
		t.Fatalf("list_background_approvals: %+v", list)
	}
	// A later run of the thread lists it in its result, in the structure
	// and in the text.
	text := callTool(t, sess, mcp.RunTaskTool, map[string]any{"thread_id": run.ThreadID, "task": `{"turns":[{"content":"still here"}]}`}, &run)
	if len(run.BackgroundApprovals) != 1 || run.BackgroundApprovals[0].TaskID != a.TaskID {
		t.Errorf("run_task's background_approvals: %+v", run.BackgroundApprovals)
	}
	if want := "Background task " + a.TaskID + " (subagent writer) waits for approval of write_file: call answer_background_approval with thread_id " + run.ThreadID + ", task_id " + a.TaskID; !strings.Contains(text, want) {
		t.Errorf("run_task's text lacks %q:\n%s", want, text)
	}
	return run.ThreadID, a.TaskID
}

// mcp-serve: a background task's write parks; the host finds it listed
// (list_background_approvals, run_task's result), approves it with
// answer_background_approval, the write happens, and the thread's next
// run_task collects the task's result. The tools are offered only to an
// agent with background subagents.
func TestMCPServeBackgroundApproval(t *testing.T) {
	w, sess := mcpBackground(t)
	tools, err := sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{mcp.ListBackgroundApprovalsTool, mcp.AnswerBackgroundApprovalTool} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	thread, task := parkOverMCP(t, sess, writerScript(`{"content":"note written"}`))
	if _, err := os.Stat(filepath.Join(w.dir, "note.txt")); err == nil {
		t.Fatal("note.txt was written before it was approved")
	}

	var ans mcp.AnswerBackgroundApprovalOutput
	callTool(t, sess, mcp.AnswerBackgroundApprovalTool, map[string]any{"thread_id": thread, "task_id": task, "decision": "approve"}, &ans)
	if ans.Status != "running" || ans.TaskID != task {
		t.Errorf("answer_background_approval: %+v", ans)
	}
	var run mcp.RunTaskOutput
	callTool(t, sess, mcp.RunTaskTool, map[string]any{"thread_id": thread, "task": waitScript(task, "note written")}, &run)
	if run.Status != "completed" || run.Answer != "collected" || len(run.BackgroundApprovals) != 0 {
		t.Errorf("the collecting run: %+v", run)
	}
	if b, err := os.ReadFile(filepath.Join(w.dir, "note.txt")); err != nil || string(b) != "hello from the writer\n" {
		t.Errorf("note.txt: %q, %v", b, err)
	}

	// Answering a task that waits no more fails.
	res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.AnswerBackgroundApprovalTool, Arguments: map[string]any{"thread_id": thread, "task_id": task, "decision": "approve"}})
	if err != nil || !res.IsError {
		t.Errorf("answering a task that waits no more: %+v %v", res, err)
	}
}

// A rejection's message reaches the subagent's next model request (its
// script's expectation fails its run otherwise); the write does not
// happen; a decision other than approve or reject is refused.
func TestMCPServeBackgroundApprovalRejected(t *testing.T) {
	w, sess := mcpBackground(t)
	thread, task := parkOverMCP(t, sess, writerScript(`{"content":"I did not write it","expect":{"last_message_contains":["not in this folder"]}}`))
	res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.AnswerBackgroundApprovalTool, Arguments: map[string]any{"thread_id": thread, "task_id": task, "decision": "maybe"}})
	if err != nil || !res.IsError {
		t.Errorf("decision maybe: %+v %v", res, err)
	}
	var ans mcp.AnswerBackgroundApprovalOutput
	callTool(t, sess, mcp.AnswerBackgroundApprovalTool, map[string]any{"thread_id": thread, "task_id": task, "decision": "reject", "message": "not in this folder"}, &ans)
	var run mcp.RunTaskOutput
	callTool(t, sess, mcp.RunTaskTool, map[string]any{"thread_id": thread, "task": waitScript(task, "I did not write it")}, &run)
	if run.Status != "completed" {
		t.Errorf("the collecting run: %+v", run)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "note.txt")); err == nil {
		t.Error("note.txt was written though rejected")
	}
}
