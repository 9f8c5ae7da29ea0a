package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/tool"
)

type closer struct {
	name   string
	closed *[]string
	err    error
}

func (c closer) Name() string { return c.name }
func (c closer) Close() error {
	*c.closed = append(*c.closed, c.name)
	return c.err
}

type plain struct{}

func (plain) Name() string { return "plain" }

// Close closes the middleware that are io.Closers, innermost first, and
// joins their errors.
func TestCloseClosesMiddleware(t *testing.T) {
	var closed []string
	boom := errors.New("boom")
	a, err := agent.New(agent.Config{Model: replay.New(), Middleware: []agent.Middleware{
		closer{name: "outer", closed: &closed}, plain{}, closer{name: "inner", closed: &closed, err: boom},
	}})
	if err != nil {
		t.Fatal(err)
	}
	err = a.Close()
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "inner") {
		t.Errorf("err = %v", err)
	}
	if strings.Join(closed, ",") != "inner,outer" {
		t.Errorf("closed %v", closed)
	}
	if err := (&agent.Agent{}).Close(); err != nil {
		t.Errorf("an agent without middleware: %v", err)
	}
}

// A Runtime kept past its run (by a background goroutine) emits nothing:
// no event follows run_end, and the emitter neither blocks nor panics.
func TestEmitAfterTheRunIsANoOp(t *testing.T) {
	var kept *agent.Runtime
	keep := tool.Must(tool.New("keep", "keeps the runtime", func(ctx context.Context, _ struct{}) (string, error) {
		kept = agent.RuntimeFromContext(ctx)
		return "kept", nil
	}))
	a, err := agent.New(agent.Config{Tools: []tool.Tool{keep}, Model: replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{{ID: "k", Name: "keep"}}},
		replay.Turn{Content: "done"},
	)})
	if err != nil {
		t.Fatal(err)
	}
	var events []agent.Event
	for e, err := range a.Stream(context.Background(), agent.Prompt("go")) {
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	if events[len(events)-1].Type != agent.EventRunEnd {
		t.Fatalf("last event %s", events[len(events)-1].Type)
	}
	for range 1000 { // more than the stream's queue holds
		kept.Emit(agent.Event{Type: agent.EventNotice, Content: "late"})
	}

	// With Input.Events, the caller's function is not called after
	// Invoke returned.
	a2, err := agent.New(agent.Config{Tools: []tool.Tool{keep}, Model: replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{{ID: "k", Name: "keep"}}},
		replay.Turn{Content: "done"},
	)})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	ended, late := false, 0
	if _, err := a2.Invoke(context.Background(), agent.Input{Messages: []llm.Message{llm.UserText("go")}, Events: func(e agent.Event) {
		mu.Lock()
		defer mu.Unlock()
		if ended {
			late++
		}
		if e.Type == agent.EventRunEnd {
			ended = true
		}
	}}); err != nil {
		t.Fatal(err)
	}
	kept.Emit(agent.Event{Type: agent.EventNotice, Content: "late"})
	mu.Lock()
	defer mu.Unlock()
	if late != 0 {
		t.Errorf("%d events after run_end", late)
	}
}
