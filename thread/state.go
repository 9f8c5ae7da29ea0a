package thread

import (
	"encoding/json"

	"github.com/deepagents-go/deepagents/llm"
)

// State is a thread's state: the conversation, the in-memory files and
// the values kept by middleware (a plan, say).
//
// A run owns its State; read it from the run's result after the run, or
// through the agent's runtime during one.
type State struct {
	Messages []llm.Message `json:"messages"`
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
