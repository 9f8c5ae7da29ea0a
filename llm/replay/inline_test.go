package replay_test

import (
	"context"
	"errors"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
)

// TestInline plays the script of the last user message that is one, turn by turn,
// counting the assistant messages after it.
func TestInline(t *testing.T) {
	script := `{"turns":[{"content":"one","tool_calls":[{"name":"ls","args":{"path":"/"}}]},{"content":"two"}]}`
	convo := []llm.Message{llm.UserText("earlier"), llm.AssistantText("old"), llm.UserText(script)}
	m := replay.Inline{}
	ctx := context.Background()
	res, err := llm.Generate(ctx, m, &llm.Request{Messages: convo})
	if err != nil {
		t.Fatal(err)
	}
	if res.Message.Text() != "one" || len(res.Message.ToolCalls) != 1 || res.Message.ToolCalls[0].ID == "" {
		t.Fatalf("first turn %+v", res.Message)
	}
	// A user message that is not a script (one sent while the agent
	// worked) is part of the script's conversation.
	convo = append(convo, res.Message, llm.ToolResult(res.Message.ToolCalls[0].ID, "ls", "x", false), llm.UserText("a hint"))
	if res, err = llm.Generate(ctx, m, &llm.Request{Messages: convo}); err != nil || res.Message.Text() != "two" {
		t.Fatalf("second turn %+v %v", res, err)
	}
	convo = append(convo, res.Message)
	if _, err := llm.Generate(ctx, m, &llm.Request{Messages: convo}); !errors.Is(err, replay.ErrExhausted) {
		t.Errorf("past the script: %v", err)
	}
	if _, err := llm.Generate(ctx, m, &llm.Request{Messages: []llm.Message{llm.UserText("hello")}}); !errors.Is(err, replay.ErrNoInlineScript) {
		t.Errorf("no script: %v", err)
	}
	r := &llm.Registry{}
	replay.Register(r)
	if got, err := r.New(ctx, "replay:inline"); err != nil || got != (replay.Inline{}) {
		t.Errorf("replay:inline = %v, %v", got, err)
	}
}

// TestDelay checks that a delayed turn streams its text, waits, and ends
// early when cancelled.
func TestDelay(t *testing.T) {
	m := replay.New(replay.Turn{Content: "slow", DelayMS: 60_000})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got string
	var err error
	for c, e := range m.Stream(ctx, &llm.Request{}) {
		if e != nil {
			err = e
			break
		}
		got += c.Text
		cancel()
	}
	if got != "slow" || !errors.Is(err, context.Canceled) {
		t.Errorf("text %q, error %v", got, err)
	}
}
