package agent

import (
	"encoding/json"

	"github.com/deepagents-go/deepagents/llm"
)

// EventVersion is the version of the event format described in
// docs/EVENTS.md. It changes only when an existing field changes meaning or
// disappears; new event types and fields may appear in the same version.
const EventVersion = 1

// EventType names the kind of an [Event].
type EventType string

// Event types, in the order a run typically produces them.
const (
	EventRunStart       EventType = "run_start"       // ThreadID
	EventTextDelta      EventType = "text_delta"      // Delta
	EventReasoningDelta EventType = "reasoning_delta" // Delta
	EventMessage        EventType = "message"         // Message: a complete assistant message
	EventToolCall       EventType = "tool_call"       // ToolCallID, Name, Args
	EventToolResult     EventType = "tool_result"     // ToolCallID, Name, Content, IsError
	EventState          EventType = "state"           // Values (the public values a middleware reported), Files (paths that changed)
	EventUsage          EventType = "usage"           // Usage of one model call; Name: the model, as provider:model; Context: what filled its window
	EventCheckpoint     EventType = "checkpoint"      // ThreadID, CheckpointID: the step is durable
	EventInterrupt      EventType = "interrupt"       // Interrupts awaiting decisions
	EventNotice         EventType = "notice"          // Name (what), Content (a line for people), Error
	EventError          EventType = "error"           // Error
	EventRunEnd         EventType = "run_end"         // Status, Usage (whole run), Error, Interrupts, EndCode and EndReason
)

// NoticeModelRetry names the notice of a model call that failed and is
// being retried by its provider.
const NoticeModelRetry = "model_retry"

// EndCode says why a middleware ended a run early; the run's status is
// completed.
type EndCode string

// The codes of the harness's own guards.
const (
	// EndLoop: the agent repeated itself past the loop guard's limit
	// (package middleware/loops).
	EndLoop EndCode = "loop"
	// EndBudget: the run spent one of its budgets.
	EndBudget EndCode = "budget"
)

// RunStatus is how a run ended.
type RunStatus string

// Run statuses.
const (
	StatusCompleted   RunStatus = "completed"
	StatusInterrupted RunStatus = "interrupted"
	StatusFailed      RunStatus = "failed"
)

// Event is one thing that happened during a run. Which fields are set
// depends on Type (see the constants). Namespace is the path of the agent
// that produced it: empty for the main agent, one element per subagent
// level below it.
type Event struct {
	Type      EventType
	Namespace []string
	Step      int

	ThreadID     string
	CheckpointID string

	Delta string
	// MessageID is, on a delta, the ID of the assistant message the delta
	// belongs to (the Message of the message event that follows).
	MessageID string
	Message   *llm.Message

	ToolCallID string
	Name       string
	Args       json.RawMessage
	Content    string
	IsError    bool

	// Values are, on a state event, state values that changed, each as
	// its new JSON: the middleware that owns a value reports it (a
	// planning middleware its whole new plan, say). In the event's JSON
	// each is a field of its own, named by its key, after is_error; keys
	// that name one of the event's own fields, and empty values, are left
	// out.
	Values map[string]json.RawMessage
	Files  []string

	Usage *llm.Usage
	// Context is, on a usage event of a model call, what filled that
	// call's context window.
	Context    *ContextWindow
	Interrupts []ActionRequest
	Status     RunStatus
	Error      string
	// EndCode and EndReason say, on run_end, why a middleware ended the
	// run early (Runtime.EndRunWith).
	EndCode   EndCode
	EndReason string
}

// wireEvent is the JSON form of an Event: flat, with fields that belong to
// the event's type present even when zero (tool_result's content and
// is_error, for instance).
type wireEvent struct {
	V            int             `json:"v"`
	Type         EventType       `json:"type"`
	Namespace    []string        `json:"namespace"`
	Step         int             `json:"step,omitempty"`
	ThreadID     string          `json:"thread_id,omitempty"`
	CheckpointID string          `json:"checkpoint_id,omitempty"`
	Delta        *string         `json:"delta,omitempty"`
	MessageID    string          `json:"message_id,omitempty"`
	Message      *llm.Message    `json:"message,omitempty"`
	ToolCallID   string          `json:"tool_call_id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Args         json.RawMessage `json:"args,omitempty"`
	Content      *string         `json:"content,omitempty"`
	IsError      *bool           `json:"is_error,omitempty"`
	// Values' keys are fields of their own (see eventFields).
	Files      []string        `json:"files,omitempty"`
	Usage      *llm.Usage      `json:"usage,omitempty"`
	Context    *ContextWindow  `json:"context,omitempty"`
	Interrupts []ActionRequest `json:"interrupts,omitempty"`
	Status     RunStatus       `json:"status,omitempty"`
	Error      string          `json:"error,omitempty"`
	EndCode    EndCode         `json:"end_code,omitempty"`
	EndReason  string          `json:"end_reason,omitempty"`
}

// MarshalJSON encodes the event in the format of docs/EVENTS.md.
func (e Event) MarshalJSON() ([]byte, error) {
	return appendEvent(make([]byte, 0, 256), &e)
}

// AppendJSON appends the event's JSON encoding (MarshalJSON's) to b.
func (e *Event) AppendJSON(b []byte) ([]byte, error) {
	return appendEvent(b, e)
}

// UnmarshalJSON decodes an event written by MarshalJSON.
func (e *Event) UnmarshalJSON(b []byte) error {
	var w wireEvent
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Event{
		Type: w.Type, Namespace: w.Namespace, Step: w.Step, ThreadID: w.ThreadID,
		CheckpointID: w.CheckpointID, MessageID: w.MessageID, Message: w.Message, ToolCallID: w.ToolCallID,
		Name: w.Name, Args: w.Args, Files: w.Files, Usage: w.Usage, Context: w.Context,
		Interrupts: w.Interrupts, Status: w.Status, Error: w.Error, EndCode: w.EndCode, EndReason: w.EndReason,
	}
	if w.Delta != nil {
		e.Delta = *w.Delta
	}
	if w.Content != nil {
		e.Content = *w.Content
	}
	if w.IsError != nil {
		e.IsError = *w.IsError
	}
	if w.Type == EventState {
		// The fields that are not the event's own are its values.
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(b, &fields); err != nil {
			return err
		}
		for k, v := range fields {
			if eventFields[k] {
				continue
			}
			if e.Values == nil {
				e.Values = make(map[string]json.RawMessage)
			}
			e.Values[k] = v
		}
	}
	return nil
}

// eventFields are the names of wireEvent's fields: an event value by one
// of these names would be ambiguous, and is not encoded.
var eventFields = map[string]bool{
	"v": true, "type": true, "namespace": true, "step": true, "thread_id": true, "checkpoint_id": true,
	"delta": true, "message_id": true, "message": true, "tool_call_id": true, "name": true, "args": true,
	"content": true, "is_error": true, "files": true, "usage": true, "interrupts": true, "status": true, "error": true,
	"end_code": true, "end_reason": true,
}
