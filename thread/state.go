package thread

import (
	"encoding/json"

	"github.com/deepagents-go/deepagents/llm"
)

// TodoStatus is the progress of one todo.
type TodoStatus string

// Todo statuses.
const (
	TodoPending    TodoStatus = "pending"
	TodoInProgress TodoStatus = "in_progress"
	TodoCompleted  TodoStatus = "completed"
)

// Todo is one item of the agent's plan (the write_todos tool).
type Todo struct {
	Content string     `json:"content"`
	Status  TodoStatus `json:"status"`
	// ActiveForm is how the item reads while in progress ("Running the
	// tests"), the optional field of the JavaScript reference and Claude
	// Code; it is kept and shown as given.
	ActiveForm string `json:"activeForm,omitempty"`
}

// State is a thread's state: the conversation, the plan, the in-memory
// files and custom values kept by middleware.
//
// A run owns its State; read it from the run's result after the run, or
// through the agent's runtime during one.
type State struct {
	Messages []llm.Message `json:"messages"`
	Todos    []Todo        `json:"todos"`
	// Files are the files of the State backend. Never nil in a State the
	// agent returns.
	Files *Files `json:"files"`
	// Values holds custom state keys, each a JSON value.
	Values map[string]json.RawMessage `json:"values,omitempty"`

	// journal records what changed since the last checkpoint (journal.go):
	// change the State through its methods for a run to save the change.
	journal journal
}

// NewState returns an empty state.
func NewState() *State {
	return &State{Files: NewFiles(nil)}
}
