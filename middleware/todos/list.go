package todos

import (
	"encoding/json"
	"fmt"

	"github.com/deepagents-go/deepagents/agent"
)

// Value is the state value that holds the plan: a JSON array of [Todo],
// as write_todos last wrote it. Clients of the thread's state (the
// LangGraph API's values.todos, the CLI) read it under this name.
const Value = "todos"

// Status is the progress of one todo.
type Status string

// Todo statuses.
const (
	Pending    Status = "pending"
	InProgress Status = "in_progress"
	Completed  Status = "completed"
)

// Todo is one item of the agent's plan (the write_todos tool).
type Todo struct {
	Content string `json:"content"`
	Status  Status `json:"status"`
	// ActiveForm is how the item reads while in progress ("Running the
	// tests"), the optional field of the JavaScript reference and Claude
	// Code; it is kept and shown as given.
	ActiveForm string `json:"activeForm,omitempty"`
}

// Marshal returns the JSON of list as the state value holds it; a nil
// list is the empty array.
func Marshal(list []Todo) json.RawMessage {
	if list == nil {
		list = []Todo{}
	}
	// A []Todo always encodes: it holds only strings.
	b, _ := json.Marshal(list)
	return b
}

// Parse decodes a plan's JSON, as Marshal wrote it. Nothing (no value, or
// JSON null) is no plan: a nil list and no error.
func Parse(raw json.RawMessage) ([]Todo, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []Todo
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("todos: the %q value is not a todo list: %w", Value, err)
	}
	return list, nil
}

// Of returns the plan held in a state's values (a checkpoint's snapshot,
// a run's result), nil when there is none.
func Of(values map[string]json.RawMessage) ([]Todo, error) {
	return Parse(values[Value])
}

// Get returns a copy of the run's plan. A value that is not a todo list
// (written by something other than this package) reads as no plan.
func Get(rt *agent.Runtime) []Todo {
	raw, _ := rt.Value(Value)
	list, err := Parse(raw)
	if err != nil {
		return nil
	}
	return list
}

// Set replaces the run's plan, and reports the change as a state event
// carrying the whole new list (see [FromEvent]).
func Set(rt *agent.Runtime, list []Todo) {
	raw := Marshal(list)
	rt.SetValue(Value, raw)
	rt.Emit(agent.Event{Type: agent.EventState, Values: map[string]json.RawMessage{Value: raw}})
}

// Done is how many of list's todos are completed.
func Done(list []Todo) int {
	n := 0
	for _, t := range list {
		if t.Status == Completed {
			n++
		}
	}
	return n
}

// FromEvent returns the new plan a state event carries, and whether it
// carries one (a possibly empty list). Events of other types, and lists
// that do not decode, carry none.
func FromEvent(e agent.Event) ([]Todo, bool) {
	raw := e.Values[Value]
	if e.Type != agent.EventState || len(raw) == 0 || string(raw) == "null" {
		return nil, false
	}
	list, err := Parse(raw)
	if err != nil {
		return nil, false
	}
	if list == nil {
		list = []Todo{}
	}
	return list, true
}
