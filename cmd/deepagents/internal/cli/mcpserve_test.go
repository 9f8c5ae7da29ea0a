package cli

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPServe drives `deepagents mcp-serve` with the official Go SDK's
// client, as an MCP host would: it lists the tools, runs a scripted task
// while reading its progress, reads the thread's todos and files, and
// cancels a long task.
func TestMCPServe(t *testing.T) {
	w := newWorld(t)
	cmd := exec.Command(binary(t), "mcp-serve", "--db", w.db, "--model", "replay:inline")
	cmd.Env = w.env()
	var mu sync.Mutex
	var progress []string
	client := sdk.NewClient(&sdk.Implementation{Name: "test-host", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Message)
			mu.Unlock()
		},
	})
	ctx := context.Background()
	sess, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()

	tools, err := sess.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "get_todos,list_thread_files,read_thread_file,run_task,steer_task" {
		t.Fatalf("tools: %v", names)
	}

	script := `{"turns":[
		{"tool_calls":[{"name":"write_todos","args":{"todos":[{"content":"Write the report","status":"in_progress"}]}}]},
		{"tool_calls":[{"name":"write_file","args":{"file_path":"/report.md","content":"# Report\nAll good."}}]},
		{"content":"The report is in /report.md."}]}`
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "run_task", Arguments: map[string]any{"task": script}, Meta: sdk.Meta{"progressToken": "p1"}})
	if err != nil || res.IsError {
		t.Fatalf("run_task: %v %+v", err, res)
	}
	var out struct {
		ThreadID string `json:"thread_id"`
		Status   string `json:"status"`
		Answer   string `json:"answer"`
	}
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, &out); err != nil || out.Status != "completed" || out.Answer != "The report is in /report.md." || out.ThreadID == "" {
		t.Fatalf("run_task result %s (%v)", data, err)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(text, out.Answer) || !strings.Contains(text, out.ThreadID) {
		t.Errorf("run_task text %q", text)
	}
	// The client handles notifications on goroutines of their own: the
	// last may be handled after the result.
	for _, want := range []string{"calling write_todos", "todos: 0 of 1 done", "calling write_file"} {
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			mu.Lock()
			got := strings.Join(progress, "\n")
			mu.Unlock()
			if strings.Contains(got, want) {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("progress %q lacks %q", got, want)
				break
			}
		}
	}

	text := func(name string, args map[string]any) string {
		t.Helper()
		res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		return res.Content[0].(*sdk.TextContent).Text
	}
	if todos := text("get_todos", map[string]any{"thread_id": out.ThreadID}); !strings.Contains(todos, "Write the report") {
		t.Errorf("get_todos: %s", todos)
	}
	if files := text("list_thread_files", map[string]any{"thread_id": out.ThreadID}); !strings.Contains(files, "/report.md") {
		t.Errorf("list_thread_files: %s", files)
	}
	if body := text("read_thread_file", map[string]any{"thread_id": out.ThreadID, "path": "/report.md"}); body != "# Report\nAll good." {
		t.Errorf("read_thread_file: %q", body)
	}
	if res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "get_todos", Arguments: map[string]any{"thread_id": "no-such-thread"}}); err != nil || !res.IsError {
		t.Errorf("an unknown thread: %v %+v", err, res)
	}

	// Cancelling the request stops the run; the thread is free for the
	// next task at once.
	slow := `{"turns":[{"content":"Thinking for a long time...","delay_ms":60000}]}`
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := sess.CallTool(cctx, &sdk.CallToolParams{Name: "run_task", Arguments: map[string]any{"task": slow, "thread_id": out.ThreadID}})
		done <- err
	}()
	time.Sleep(time.Second)
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the cancelled call returned no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	next := `{"turns":[{"content":"Still here."}]}`
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "run_task", Arguments: map[string]any{"task": next, "thread_id": out.ThreadID}})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError {
			if s := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(s, "Still here.") {
				t.Errorf("after the cancel: %q", s)
			}
			break
		}
		// The run may take a moment to let go of the thread.
		if time.Now().After(deadline) {
			t.Fatalf("the thread stayed busy after the cancel (%s): %+v", time.Since(start), res.Content[0])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestMCPServeHTTP reaches `deepagents mcp-serve --http` over streamable
// HTTP.
func TestMCPServeHTTP(t *testing.T) {
	w := newWorld(t)
	p := w.startListening("MCP server stopped", "mcp-serve", "--db", w.db, "--model", "replay:inline", "--http", "127.0.0.1:0")
	client := sdk.NewClient(&sdk.Implementation{Name: "test-host", Version: "1"}, nil)
	ctx := context.Background()
	sess, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: p.url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "run_task", Arguments: map[string]any{"task": `{"turns":[{"content":"Over HTTP."}]}`}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "Over HTTP.") {
		t.Fatalf("run_task: %v %+v", err, res)
	}
}

// TestMCPServeApproval: a run of `deepagents mcp-serve --interrupt-on`
// that stops for approval answers with the call that waits, and the
// host's decision resumes it to its end, over stdio with the Go SDK's
// client.
func TestMCPServeApproval(t *testing.T) {
	w := newWorld(t)
	cmd := exec.Command(binary(t), "mcp-serve", "--db", w.db, "--model", "replay:inline", "--interrupt-on", "write_file")
	cmd.Env = w.env()
	client := sdk.NewClient(&sdk.Implementation{Name: "test-host", Version: "1"}, nil)
	ctx := context.Background()
	sess, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	type output struct {
		ThreadID string `json:"thread_id"`
		Status   string `json:"status"`
		Answer   string `json:"answer"`
		Pending  []struct {
			Tool string         `json:"tool"`
			Args map[string]any `json:"args"`
		} `json:"pending"`
	}
	runTask := func(args map[string]any) output {
		t.Helper()
		res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "run_task", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("run_task %v: %v %+v", args, err, res)
		}
		var out output
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatalf("run_task result %s: %v", data, err)
		}
		return out
	}
	script := `{"turns":[
		{"tool_calls":[{"name":"write_file","args":{"file_path":"/note.md","content":"approved"}}]},
		{"content":"Wrote it."}]}`
	out := runTask(map[string]any{"task": script})
	if out.Status != "interrupted" || len(out.Pending) != 1 || out.Pending[0].Tool != "write_file" || out.Pending[0].Args["file_path"] != "/note.md" {
		t.Fatalf("the run that stops: %+v", out)
	}
	end := runTask(map[string]any{"thread_id": out.ThreadID, "decision": "approve"})
	if end.Status != "completed" || end.Answer != "Wrote it." {
		t.Fatalf("after the approval: %+v", end)
	}
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "read_thread_file", Arguments: map[string]any{"thread_id": out.ThreadID, "path": "/note.md"}})
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "approved" {
		t.Errorf("the approved write: %v %+v", err, res)
	}
}
