package todos_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/todos"
)

func todosCall(id, list string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: todos.WriteTodosTool, Args: json.RawMessage(`{"todos":` + list + `}`)}
}

// newTodos returns the todos middleware with the default configuration.
func newTodos(t *testing.T) *todos.Middleware {
	t.Helper()
	m, err := todos.New(todos.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestWriteTodos(t *testing.T) {
	first := `[{"content":"read the code","status":"completed"},{"content":"write tests","status":"in_progress"}]`
	firstRepr := `[{'content': 'read the code', 'status': 'completed'}, {'content': 'write tests', 'status': 'in_progress'}]`
	tests := []struct {
		name      string
		turns     [][]llm.ToolCall
		want      []todos.Todo
		wantTexts []string // tool result texts, in order
		wantError []bool
	}{
		{
			name:      "replaces the whole list",
			turns:     [][]llm.ToolCall{{todosCall("a", `[{"content":"x","status":"pending"}]`)}, {todosCall("b", first)}},
			want:      []todos.Todo{{Content: "read the code", Status: todos.Completed}, {Content: "write tests", Status: todos.InProgress}},
			wantTexts: []string{`Updated todo list to [{'content': 'x', 'status': 'pending'}]`, "Updated todo list to " + firstRepr},
			wantError: []bool{false, false},
		},
		{
			name:      "empty list clears",
			turns:     [][]llm.ToolCall{{todosCall("a", first)}, {todosCall("b", `[]`)}},
			want:      []todos.Todo{},
			wantTexts: []string{"Updated todo list to " + firstRepr, "Updated todo list to []"},
			wantError: []bool{false, false},
		},
		{
			name:      "two calls in one turn are both rejected",
			turns:     [][]llm.ToolCall{{todosCall("a", first)}, {todosCall("b", `[]`), todosCall("c", `[{"content":"y","status":"pending"}]`)}},
			want:      []todos.Todo{{Content: "read the code", Status: todos.Completed}, {Content: "write tests", Status: todos.InProgress}},
			wantTexts: []string{"Updated todo list to " + firstRepr, "should never be called multiple times in parallel", "should never be called multiple times in parallel"},
			wantError: []bool{false, true, true},
		},
		{
			name:      "activeForm is kept, other fields dropped",
			turns:     [][]llm.ToolCall{{todosCall("a", `[{"content":"Run the tests","status":"in_progress","activeForm":"Running the tests","id":"1","priority":"high"}]`)}},
			want:      []todos.Todo{{Content: "Run the tests", Status: todos.InProgress, ActiveForm: "Running the tests"}},
			wantTexts: []string{`Updated todo list to [{'content': 'Run the tests', 'status': 'in_progress', 'activeForm': 'Running the tests'}]`},
			wantError: []bool{false},
		},
		{
			name:      "unknown status is refused by the schema",
			turns:     [][]llm.ToolCall{{todosCall("a", `[{"content":"x","status":"done"}]`)}},
			want:      nil,
			wantTexts: []string{`field "todos[0].status": got "done", want one of "pending", "in_progress", "completed"`},
			wantError: []bool{true},
		},
		{
			name:      "missing content is refused",
			turns:     [][]llm.ToolCall{{todosCall("a", `[{"status":"pending"}]`)}},
			want:      nil,
			wantTexts: []string{`field "todos[0].content": missing required field`},
			wantError: []bool{true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var turns []replay.Turn
			for _, calls := range tt.turns {
				turns = append(turns, replay.Turn{ToolCalls: calls})
			}
			turns = append(turns, replay.Turn{Content: "done"})
			a, err := agent.New(agent.Config{Model: replay.New(turns...), Middleware: []agent.Middleware{newTodos(t)}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Invoke(context.Background(), agent.Prompt("plan"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := todos.Of(res.State.Values)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("todos (-want +got):\n%s", diff)
			}
			var texts []string
			var errs []bool
			for _, m := range res.State.Messages {
				if m.Role == llm.RoleTool {
					texts = append(texts, m.Text())
					errs = append(errs, m.IsError)
				}
			}
			if len(texts) != len(tt.wantTexts) {
				t.Fatalf("results = %q", texts)
			}
			for i, want := range tt.wantTexts {
				if !strings.Contains(texts[i], want) {
					t.Errorf("result %d = %q, want it to contain %q", i, texts[i], want)
				}
			}
			if diff := cmp.Diff(tt.wantError, errs); diff != "" {
				t.Errorf("is_error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTodosPromptAndSchema(t *testing.T) {
	m := replay.New(replay.Turn{Content: "ok", Expect: &replay.Expect{SystemContains: []string{"write_todos"}, ToolsInclude: []string{"write_todos"}}})
	a, err := agent.New(agent.Config{Model: m, Middleware: []agent.Middleware{newTodos(t)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Invoke(context.Background(), agent.Prompt("hi")); err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Todos struct {
				Type  string `json:"type"`
				Items struct {
					Required   []string `json:"required"`
					Properties struct {
						Status struct {
							Enum []string `json:"enum"`
						} `json:"status"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"todos"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(a.ToolSpecs()[0].Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Properties.Todos.Type != "array" ||
		!cmp.Equal(schema.Properties.Todos.Items.Properties.Status.Enum, []string{"pending", "in_progress", "completed"}) ||
		!cmp.Equal(schema.Required, []string{"todos"}) ||
		!cmp.Equal(schema.Properties.Todos.Items.Required, []string{"content", "status"}) {
		t.Errorf("schema = %s", a.ToolSpecs()[0].Parameters)
	}
}
