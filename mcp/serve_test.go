package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepagents-go/deepagents"
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
