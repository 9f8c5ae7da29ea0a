package subagents

import (
	"encoding/json"
	"log/slog"
	"reflect"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/middleware/todos"
	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/tool"
)

// TestSubagentInheritsEveryOption: a declarative subagent is configured
// from the main agent's agent.Config, so every option reaches it unless it
// is one the subagent overrides. A field added to agent.Config fails this
// test until it is set below and, if a subagent must not inherit it,
// listed as overridden.
func TestSubagentInheritsEveryOption(t *testing.T) {
	saver := checkpoint.NewMemorySaver()
	plan, err := todos.New(todos.Config{})
	if err != nil {
		t.Fatal(err)
	}
	base := agent.Config{
		Name:             "main",
		Model:            replay.New(),
		SystemPrompt:     "main prompt",
		Tools:            []tool.Tool{plan.Tools()[0]},
		AllowedTools:     []string{"write_todos"},
		ToolDescriptions: map[string]string{"write_todos": "plan"},
		Middleware:       []agent.Middleware{plan},
		MaxSteps:         7,
		MaxParallelTools: 3,
		Checkpointer:     saver,
		Durability:       agent.DurabilitySync,
		Store:            store.NewMemoryStore(),
		ResponseSchema:   json.RawMessage(`{"type":"object"}`),
		Logger:           slog.New(slog.DiscardHandler),
	}
	bv := reflect.ValueOf(base)
	for i := range bv.NumField() {
		if bv.Field(i).IsZero() {
			t.Fatalf("agent.Config.%s is not set in this test: set it, and decide whether a subagent inherits it", bv.Type().Field(i).Name)
		}
	}
	own := replay.New()
	sa := Subagent{Name: "sub", SystemPrompt: "sub prompt", Model: own, AllowedTools: []string{"x"}, InterruptOn: map[string]hitl.InterruptOn{"x": {}}}
	c, durable, err := subagentConfig(Parent{Agent: base}, sa)
	if err != nil {
		t.Fatal(err)
	}
	if !durable {
		t.Error("a subagent with InterruptOn is not durable")
	}
	overridden := map[string]any{
		"Name":           "sub",
		"SystemPrompt":   "sub prompt",
		"Model":          own,
		"AllowedTools":   []string{"x"},
		"ResponseSchema": json.RawMessage(nil), // its final message is its report
		"Checkpointer":   saver,                // kept only because it can stop for approval
	}
	cv := reflect.ValueOf(c)
	for i := range cv.NumField() {
		name := cv.Type().Field(i).Name
		switch want, ok := overridden[name]; {
		case name == "Middleware":
			if n := len(c.Middleware); n != 1 || c.Middleware[0].Name() != "human_in_the_loop" {
				t.Errorf("Middleware: %d middleware, want the default stack (none here) and approvals", n)
			}
		case ok:
			if !reflect.DeepEqual(cv.Field(i).Interface(), want) {
				t.Errorf("%s = %v, want the subagent's %v", name, cv.Field(i).Interface(), want)
			}
		case !reflect.DeepEqual(cv.Field(i).Interface(), bv.Field(i).Interface()):
			t.Errorf("%s is not inherited: %v, want %v", name, cv.Field(i).Interface(), bv.Field(i).Interface())
		}
	}
	// Without approvals a subagent keeps no checkpoints, and what it does
	// not set is the main agent's.
	c, durable, err = subagentConfig(Parent{Agent: base}, Subagent{Name: "plain"})
	if err != nil {
		t.Fatal(err)
	}
	if durable || c.Checkpointer != nil || c.Model != base.Model || len(c.Tools) != 1 {
		t.Errorf("plain subagent: durable %v, checkpointer %v, model inherited %v, %d tools", durable, c.Checkpointer, c.Model == base.Model, len(c.Tools))
	}
}
