package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/todos"
)

func TestRecordThenReplay(t *testing.T) {
	live := replay.NewFromScript(&replay.Script{ContextWindow: 4096, Turns: []replay.Turn{
		{Reasoning: "plan first", Content: "Planning.", ToolCalls: []llm.ToolCall{{ID: "a", Name: "write_todos", Args: json.RawMessage(`{"todos":[{"content":"x","status":"pending"}]}`)}}, Usage: llm.Usage{InputTokens: 10, OutputTokens: 2, CacheReadTokens: 4}},
		{Content: "Done.", Usage: llm.Usage{InputTokens: 20, OutputTokens: 1}},
	}})
	path := filepath.Join(t.TempDir(), "rec.json")
	run := func(m llm.Model, system, prompt string) (*agent.Result, error) {
		plan, err := todos.New(todos.Config{})
		if err != nil {
			t.Fatal(err)
		}
		a, err := agent.New(agent.Config{Model: m, SystemPrompt: system, Middleware: []agent.Middleware{plan}})
		if err != nil {
			t.Fatal(err)
		}
		return a.Invoke(context.Background(), agent.Prompt(prompt))
	}
	rec := replay.NewRecorder(live, path)
	first, err := run(rec, "be brief", "plan it")
	if err != nil {
		t.Fatal(err)
	}
	script, err := replay.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if script.ContextWindow != 4096 || len(script.Turns) != 2 || script.Turns[0].Request == nil || script.Turns[0].Reasoning != "plan first" {
		t.Fatalf("recording = %+v", script)
	}
	again, err := run(replay.NewFromScript(script), "be brief", "plan it")
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if again.Text() != first.Text() || again.Usage != first.Usage {
		t.Errorf("replay differs: %q %+v vs %q %+v", again.Text(), again.Usage, first.Text(), first.Usage)
	}
	for _, c := range []struct{ system, prompt, want string }{
		{"be brief", "plan something else", "the last message is"},
		{"be verbose", "plan it", "the system prompt changed"},
	} {
		_, err := run(replay.NewFromScript(script), c.system, c.prompt)
		if !errors.Is(err, replay.ErrRequestMismatch) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s/%s: err = %v, want a mismatch saying %q", c.system, c.prompt, err, c.want)
		}
	}
}
