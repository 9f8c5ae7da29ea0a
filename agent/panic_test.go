package agent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/tool"
)

// panicky panics in its model wrapper on the second model call.
type panicky struct{ calls int }

func (p *panicky) Name() string { return "panicky" }

func (p *panicky) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	if p.calls++; p.calls == 2 {
		panic("middleware bug")
	}
	return next(ctx, req)
}

// TestPanicFailsTheRun checks that a panicking middleware fails the run
// with ErrPanic instead of crashing the program, that the thread is left
// failed, not busy, and that the step checkpointed before stays.
func TestPanicFailsTheRun(t *testing.T) {
	saver := checkpoint.NewMemorySaver()
	a := newAgent(t, agent.Config{
		Model:        replay.New(replay.Turn{ToolCalls: []llm.ToolCall{call("c1", "echo", `{"text":"a"}`)}}, replay.Turn{Content: "done"}),
		Tools:        []tool.Tool{echoTool(t)},
		Middleware:   []agent.Middleware{&panicky{}},
		Checkpointer: saver,
		Logger:       newDiscardLogger(),
	})
	_, err := a.Invoke(context.Background(), agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}})
	if !errors.Is(err, agent.ErrPanic) {
		t.Fatalf("error %v, want ErrPanic", err)
	}
	th, err := saver.Thread(context.Background(), "t")
	if err != nil || th.Status != checkpoint.StatusError {
		t.Fatalf("thread %+v %v, want status error", th, err)
	}
	snap, err := saver.Load(context.Background(), "t", "")
	if err != nil || len(snap.Messages) != 3 {
		t.Errorf("kept %d messages (%v), want the first step's 3", len(snap.Messages), err)
	}
}
