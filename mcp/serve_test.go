package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/mcp"
)

// serve connects a client of the official SDK, in memory, to NewServer(a).
func serve(t *testing.T, a *deepagents.Agent) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	serverSide, clientSide := sdk.NewInMemoryTransports()
	ss, err := mcp.NewServer(a, mcp.ServeOptions{}).Connect(ctx, serverSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// runTaskOutput is run_task's structured result as a host reads it.
type runTaskOutput struct {
	ThreadID string `json:"thread_id"`
	Status   string `json:"status"`
	Answer   string `json:"answer"`
	Pending  []struct {
		Tool string         `json:"tool"`
		Args map[string]any `json:"args"`
	} `json:"pending"`
}

// runTask calls run_task and decodes its structured result.
func runTask(t *testing.T, cs *sdk.ClientSession, args map[string]any) (*sdk.CallToolResult, runTaskOutput) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.RunTaskTool, Arguments: args})
	if err != nil {
		t.Fatalf("run_task %v: %v", args, err)
	}
	if res.IsError {
		t.Fatalf("run_task %v: %+v", args, res.Content[0])
	}
	var out runTaskOutput
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("run_task result %s: %v", data, err)
	}
	return res, out
}

// A run that stops for approval answers with the calls that wait, as its
// output schema says (their arguments an object), and the host's decision
// resumes it to its end: approved, the tool runs; rejected, it does not.
func TestServeApprovalRoundTrip(t *testing.T) {
	for _, decision := range []string{"approve", "reject"} {
		t.Run(decision, func(t *testing.T) {
			model := replay.New(
				replay.Turn{ToolCalls: []llm.ToolCall{call("1", "write_file", `{"file_path":"/a.txt","content":"hello"}`)}},
				replay.Turn{Content: "Done."},
			)
			a, err := deepagents.New(deepagents.Config{
				Model:        model,
				Checkpointer: checkpoint.NewMemorySaver(),
				InterruptOn:  map[string]deepagents.InterruptOn{"write_file": {}},
			})
			if err != nil {
				t.Fatal(err)
			}
			cs := serve(t, a)

			// The schema the host validates against takes the arguments as
			// an object.
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range tools.Tools {
				if tl.Name != mcp.RunTaskTool {
					continue
				}
				data, _ := json.Marshal(tl.OutputSchema)
				var schema struct {
					Properties struct {
						Pending struct {
							Items struct {
								Properties struct {
									Args struct {
										Type any `json:"type"`
									} `json:"args"`
								} `json:"properties"`
							} `json:"items"`
						} `json:"pending"`
					} `json:"properties"`
				}
				if err := json.Unmarshal(data, &schema); err != nil || schema.Properties.Pending.Items.Properties.Args.Type != "object" {
					t.Errorf("run_task output schema: %s", data)
				}
			}

			res, out := runTask(t, cs, map[string]any{"task": "write a.txt"})
			if out.Status != "interrupted" || out.ThreadID == "" || len(out.Pending) != 1 {
				t.Fatalf("first call: %+v", out)
			}
			if p := out.Pending[0]; p.Tool != "write_file" || p.Args["file_path"] != "/a.txt" || p.Args["content"] != "hello" {
				t.Errorf("pending: %+v", p)
			}
			if text := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(text, "write_file") || !strings.Contains(text, out.ThreadID) {
				t.Errorf("text: %q", text)
			}

			_, end := runTask(t, cs, map[string]any{"thread_id": out.ThreadID, "decision": decision, "message": "not now"})
			if end.Status != "completed" || end.Answer != "Done." || end.ThreadID != out.ThreadID || len(end.Pending) != 0 {
				t.Fatalf("after %s: %+v", decision, end)
			}
			files, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ListFilesTool, Arguments: map[string]any{"thread_id": out.ThreadID}})
			if err != nil {
				t.Fatal(err)
			}
			wrote := strings.Contains(files.Content[0].(*sdk.TextContent).Text, "/a.txt")
			if wrote != (decision == "approve") {
				t.Errorf("%s: /a.txt written: %v", decision, wrote)
			}
			// A thread that waits on nothing refuses a decision.
			if res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.RunTaskTool, Arguments: map[string]any{"thread_id": out.ThreadID, "decision": "approve"}}); err != nil || !res.IsError {
				t.Errorf("a decision on a thread that waits on nothing: %v %+v", err, res)
			}
		})
	}
}

// Decide tells a new task from a decision, and refuses what is neither,
// for run_task and the LangGraph API server's /mcp alike.
func TestRunTaskInputDecide(t *testing.T) {
	tests := []struct {
		name string
		in   mcp.RunTaskInput
		want *agent.Decision // nil: a new task
		err  string          // "": no error
	}{
		{"a task", mcp.RunTaskInput{Task: "write it"}, nil, ""},
		{"a task on a thread", mcp.RunTaskInput{Task: "more", ThreadID: "t"}, nil, ""},
		{"no task", mcp.RunTaskInput{Task: "  "}, nil, "task is empty"},
		{"approve", mcp.RunTaskInput{ThreadID: "t", Decision: "approve", Message: "ignored"}, &agent.Decision{Type: agent.DecisionApprove}, ""},
		{"reject", mcp.RunTaskInput{ThreadID: "t", Decision: "reject", Message: "not now"}, &agent.Decision{Type: agent.DecisionReject, Message: "not now"}, ""},
		{"a decision without a thread", mcp.RunTaskInput{Decision: "approve"}, nil, "goes with the thread_id"},
		{"a decision and a task", mcp.RunTaskInput{ThreadID: "t", Decision: "approve", Task: "x"}, nil, "goes with the thread_id"},
		{"an unknown decision", mcp.RunTaskInput{ThreadID: "t", Decision: "edit"}, nil, `not "edit"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.in.Decide()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (d == nil) != (tt.want == nil) || (d != nil && (d.Type != tt.want.Type || d.Message != tt.want.Message || d.Args != nil)) {
				t.Errorf("decision %+v, want %+v", d, tt.want)
			}
		})
	}
}

// A run's end reads as one contract: the answer with its thread, the calls
// that wait (arguments as objects, the tool to call again named), or the
// failure as an error result.
func TestTaskEndResult(t *testing.T) {
	tests := []struct {
		name    string
		end     mcp.TaskEnd
		isError bool
		text    []string // what the text result contains
		pending int
	}{
		{"completed", mcp.TaskEnd{ThreadID: "t1", Status: agent.StatusCompleted, Answer: "Done."}, false, []string{"Done.", "[thread_id: t1]"}, 0},
		{"interrupted", mcp.TaskEnd{ThreadID: "t1", Status: agent.StatusInterrupted, Pending: []agent.ActionRequest{{Tool: "write_file", Args: json.RawMessage(`{"file_path":"/a"}`)}}},
			false, []string{"thread t1", "call writer with", `- write_file {"file_path":"/a"}`}, 1},
		{"failed", mcp.TaskEnd{ThreadID: "t1", Status: agent.StatusFailed, Error: "boom"}, true, []string{"The run on thread t1 failed: boom"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, out := tt.end.Result("writer")
			if res.IsError != tt.isError || out.ThreadID != "t1" || out.Status != string(tt.end.Status) || out.Answer != tt.end.Answer || len(out.Pending) != tt.pending {
				t.Fatalf("result %+v, output %+v", res, out)
			}
			text := res.Content[0].(*sdk.TextContent).Text
			for _, want := range tt.text {
				if !strings.Contains(text, want) {
					t.Errorf("text %q lacks %q", text, want)
				}
			}
			if tt.pending > 0 && out.Pending[0].Args["file_path"] != "/a" {
				t.Errorf("pending %+v", out.Pending)
			}
		})
	}
}
