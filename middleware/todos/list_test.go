package todos_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/todos"
	"github.com/deepagents-go/deepagents/tool"
)

func TestParseAndMarshal(t *testing.T) {
	list := []todos.Todo{{Content: "a <b> & c\u2028", Status: todos.Pending}, {Content: "run", Status: todos.InProgress, ActiveForm: "Running"}}
	raw := todos.Marshal(list)
	if want := `[{"content":"a \u003cb\u003e \u0026 c\u2028","status":"pending"},{"content":"run","status":"in_progress","activeForm":"Running"}]`; string(raw) != want {
		t.Errorf("Marshal = %s, want %s", raw, want)
	}
	if got, err := todos.Parse(raw); err != nil || !cmp.Equal(got, list) {
		t.Errorf("Parse = %v, %v", got, err)
	}
	if string(todos.Marshal(nil)) != "[]" {
		t.Errorf("Marshal(nil) = %s", todos.Marshal(nil))
	}
	for _, none := range []string{"", "null"} {
		if got, err := todos.Parse(json.RawMessage(none)); got != nil || err != nil {
			t.Errorf("Parse(%q) = %v, %v", none, got, err)
		}
	}
	if _, err := todos.Parse(json.RawMessage(`{"a":1}`)); err == nil {
		t.Error("Parse of an object: no error")
	}
	if got, err := todos.Of(map[string]json.RawMessage{"other": json.RawMessage(`1`)}); got != nil || err != nil {
		t.Errorf("Of without the value = %v, %v", got, err)
	}
}

// The state event of a plan is what it was when the plan was a field of
// the event: "todos" and the list, byte for byte.
func TestStateEventJSON(t *testing.T) {
	list := []todos.Todo{{Content: "<x> & \xff", Status: todos.Completed}, {Content: "y", Status: todos.InProgress, ActiveForm: "Doing y"}}
	e := agent.Event{Type: agent.EventState, Step: 2, Values: map[string]json.RawMessage{todos.Value: todos.Marshal(list)}}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"type":"state","namespace":[],"step":2,"todos":[{"content":"\u003cx\u003e \u0026 \ufffd","status":"completed"},{"content":"y","status":"in_progress","activeForm":"Doing y"}]}`
	if string(b) != want {
		t.Errorf("event JSON\n got %s\nwant %s", b, want)
	}
	var back agent.Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got, ok := todos.FromEvent(back)
	list[0].Content = "<x> & \ufffd"
	if !ok || !cmp.Equal(got, list) {
		t.Errorf("FromEvent = %v, %v", got, ok)
	}
	if _, ok := todos.FromEvent(agent.Event{Type: agent.EventState, Files: []string{"/a"}}); ok {
		t.Error("FromEvent of a files event found a plan")
	}
	if got, ok := todos.FromEvent(agent.Event{Type: agent.EventState, Values: map[string]json.RawMessage{todos.Value: json.RawMessage(`[]`)}}); !ok || got == nil || len(got) != 0 {
		t.Errorf("FromEvent of an emptied plan = %#v, %v", got, ok)
	}
}

// Set writes the value and reports it; Get reads it back, a copy.
func TestSetGet(t *testing.T) {
	var seen []todos.Todo
	probe := tool.Must(tool.New("probe", "Set the plan.", func(ctx context.Context, _ struct{}) (string, error) {
		rt := agent.RuntimeFromContext(ctx)
		todos.Set(rt, []todos.Todo{{Content: "a", Status: todos.Pending}})
		seen = todos.Get(rt)
		seen[0].Content = "changed"
		if got := todos.Get(rt); got[0].Content != "a" {
			t.Errorf("Get shares memory: %v", got)
		}
		return "ok", nil
	}))
	m := replay.New(replay.Turn{ToolCalls: []llm.ToolCall{{ID: "1", Name: "probe", Args: json.RawMessage(`{}`)}}}, replay.Turn{Content: "done"})
	a, err := agent.New(agent.Config{Model: m, Tools: []tool.Tool{probe}})
	if err != nil {
		t.Fatal(err)
	}
	var events int
	for e, err := range a.Stream(context.Background(), agent.Prompt("go")) {
		if err != nil {
			t.Fatal(err)
		}
		if plan, ok := todos.FromEvent(e); ok {
			events++
			if len(plan) != 1 || plan[0].Content != "a" {
				t.Errorf("event plan = %v", plan)
			}
		}
	}
	if events != 1 || len(seen) != 1 {
		t.Errorf("%d plan events, Get = %v", events, seen)
	}
}

func TestDone(t *testing.T) {
	for _, tt := range []struct {
		list []todos.Todo
		want int
	}{
		{nil, 0},
		{[]todos.Todo{{Content: "a", Status: todos.Completed}, {Content: "b", Status: todos.InProgress}, {Content: "c", Status: todos.Pending}, {Content: "d", Status: todos.Completed}}, 2},
	} {
		if got := todos.Done(tt.list); got != tt.want {
			t.Errorf("Done(%v) = %d, want %d", tt.list, got, tt.want)
		}
	}
}
