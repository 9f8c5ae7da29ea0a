package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/mcp"
	"github.com/deepagents-go/deepagents/middleware/steer"
	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/tool"
)

// steer_task, called while run_task works on the thread, puts its message
// in the run's very next model request; without a store it is not
// offered.
func TestServeSteerTask(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	gate, err := tool.New("gate", "waits", func(ctx context.Context, _ struct{}) (string, error) {
		close(entered)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "opened", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	model := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{{ID: "g", Name: "gate", Args: json.RawMessage(`{}`)}}},
		replay.Turn{Content: "Done."},
	).Record()
	a, err := deepagents.New(deepagents.Config{Model: model, Checkpointer: checkpoint.NewMemorySaver(), Store: store.NewMemoryStore(), Tools: []tool.Tool{gate}})
	if err != nil {
		t.Fatal(err)
	}
	cs := serve(t, a)
	done := make(chan runTaskOutput, 1)
	go func() {
		_, out := runTask(t, cs, map[string]any{"task": "open the gate", "thread_id": "T"})
		done <- out
	}()
	<-entered
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.SteerTaskTool, Arguments: map[string]any{"thread_id": "T", "message": "STEERMARK use the key"}})
	if err != nil || res.IsError {
		t.Fatalf("steer_task: %+v %v", res, err)
	}
	close(release)
	if out := <-done; out.Status != "completed" || out.Answer != "Done." {
		t.Fatalf("run_task: %+v", out)
	}
	reqs := model.Requests()
	last := reqs[len(reqs)-1].Request.Messages
	if m := last[len(last)-1]; m.Role != llm.RoleUser || m.Text() != steer.Lead+"STEERMARK use the key" {
		t.Errorf("the request after the gate ends with %+v, want the message", m)
	}
	if res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.SteerTaskTool, Arguments: map[string]any{"thread_id": "T", "message": " "}}); err == nil && !res.IsError {
		t.Error("an empty message was taken")
	}

	plain, err := deepagents.New(deepagents.Config{Model: replay.New(), Checkpointer: checkpoint.NewMemorySaver()})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := serve(t, plain).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == mcp.SteerTaskTool {
			t.Error("steer_task is offered by an agent without a store")
		}
	}
}
