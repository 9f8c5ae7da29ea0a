package langgraph

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ThreadStatus is a thread's status.
type ThreadStatus string

// Thread statuses.
const (
	ThreadIdle        ThreadStatus = "idle"
	ThreadBusy        ThreadStatus = "busy"
	ThreadInterrupted ThreadStatus = "interrupted"
	ThreadError       ThreadStatus = "error"
)

// RunStatus is a run's status.
type RunStatus string

// Run statuses.
const (
	RunPending     RunStatus = "pending"
	RunRunning     RunStatus = "running"
	RunSuccess     RunStatus = "success"
	RunError       RunStatus = "error"
	RunTimeout     RunStatus = "timeout"
	RunInterrupted RunStatus = "interrupted"
)

// Done reports whether a run in this status has ended: it is neither
// pending nor running.
func (s RunStatus) Done() bool { return s != RunPending && s != RunRunning }

// MultitaskStrategy says what a new run does to the run already on its
// thread: reject it (the default), interrupt or roll it back (cancel it,
// keeping or dropping its steps), or enqueue behind it.
type MultitaskStrategy string

// Multitask strategies.
const (
	MultitaskReject    MultitaskStrategy = "reject"
	MultitaskInterrupt MultitaskStrategy = "interrupt"
	MultitaskRollback  MultitaskStrategy = "rollback"
	MultitaskEnqueue   MultitaskStrategy = "enqueue"
	// MultitaskSteer (this server's, not LangGraph's) gives the input's
	// user messages to the run working on the thread, at its next model
	// request, and answers that run; on an idle thread the run starts as
	// any run.
	MultitaskSteer MultitaskStrategy = "steer"
)

// Values of the requests' other enumerations.
const (
	// IfExistsDoNothing (ThreadCreate.IfExists, AssistantCreate.IfExists)
	// answers the existing thread or assistant instead of a conflict.
	IfExistsDoNothing = "do_nothing"
	// IfNotExistsCreate (RunCreate.IfNotExists) creates a missing thread.
	IfNotExistsCreate = "create"
	// OnDisconnectContinue and OnDisconnectCancel (RunCreate.OnDisconnect)
	// say whether a run outlives the client that streams or waits for it.
	OnDisconnectContinue = "continue"
	OnDisconnectCancel   = "cancel"
	// OnCompletionKeep (RunCreate.OnCompletion) keeps the thread of a run
	// without one (POST /runs/stream, /runs/wait).
	OnCompletionKeep = "keep"
	// CancelInterrupt and CancelRollback are the actions of a cancel.
	CancelInterrupt = "interrupt"
	CancelRollback  = "rollback"
)

// Keys of a run's final values (what wait and join answer) and of values
// events.
const (
	// ErrorKey holds a failed run's Failure.
	ErrorKey = "__error__"
	// InterruptKey holds the interrupts a run stopped at.
	InterruptKey = "__interrupt__"
)

// Headers of the API.
const (
	// HeaderAPIKey carries the server's key.
	HeaderAPIKey = "X-Api-Key"
	// HeaderLastEventID says where a rejoined stream resumes.
	HeaderLastEventID = "Last-Event-ID"
	// HeaderPaginationTotal is the number of a search's results.
	HeaderPaginationTotal = "X-Pagination-Total"
)

// Assistant is an agent a server offers: a graph with its configuration.
type Assistant struct {
	AssistantID string         `json:"assistant_id,omitempty"`
	GraphID     string         `json:"graph_id"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Version     int            `json:"version"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

// Thread is a conversation: its state is its graph's values, kept in
// checkpoints.
type Thread struct {
	ThreadID       string         `json:"thread_id"`
	CreatedAt      time.Time      `json:"created_at"`
	UpdatedAt      time.Time      `json:"updated_at"`
	StateUpdatedAt time.Time      `json:"state_updated_at"`
	Metadata       map[string]any `json:"metadata"`
	Status         ThreadStatus   `json:"status"`
	Config         map[string]any `json:"config"`
	// Values is the thread's state, a JSON object (null for a thread
	// without checkpoints). A Client leaves it a json.RawMessage, for the
	// caller to decode into what its graph keeps.
	Values any `json:"values"`
	// Interrupts are the interrupts the thread waits on, by task.
	Interrupts map[string][]Interrupt `json:"interrupts"`
	// Error is the error of the thread's last run, when it failed.
	Error *string `json:"error"`
}

// Interrupt is a pause of a run, waiting for a command to resume it.
type Interrupt struct {
	ID    string `json:"id"`
	Value any    `json:"value"`
}

// Checkpoint names a checkpoint of a thread.
type Checkpoint struct {
	ThreadID      string         `json:"thread_id"`
	CheckpointNS  string         `json:"checkpoint_ns"`
	CheckpointID  string         `json:"checkpoint_id"`
	CheckpointMap map[string]any `json:"checkpoint_map"`
}

// Task is a task of a thread's state that has yet to run: one waiting on
// interrupts, say.
type Task struct {
	ID         string      `json:"id"`
	Name       string      `json:"name"`
	Path       []string    `json:"path"`
	Error      *string     `json:"error"`
	Interrupts []Interrupt `json:"interrupts"`
	Checkpoint *Checkpoint `json:"checkpoint"`
	State      any         `json:"state"`
	Result     any         `json:"result"`
}

// ThreadState is a thread's state as of one checkpoint (GET
// /threads/{thread_id}/state, the items of its history).
type ThreadState struct {
	Values           any            `json:"values"`
	Next             []string       `json:"next"`
	Tasks            []Task         `json:"tasks"`
	Metadata         map[string]any `json:"metadata"`
	CreatedAt        *time.Time     `json:"created_at"`
	Checkpoint       *Checkpoint    `json:"checkpoint"`
	ParentCheckpoint *Checkpoint    `json:"parent_checkpoint"`
}

// Run is one execution of an assistant on a thread.
type Run struct {
	RunID             string            `json:"run_id"`
	ThreadID          string            `json:"thread_id"`
	AssistantID       string            `json:"assistant_id"`
	CreatedAt         time.Time         `json:"created_at"`
	UpdatedAt         time.Time         `json:"updated_at"`
	Status            RunStatus         `json:"status"`
	Metadata          map[string]any    `json:"metadata"`
	MultitaskStrategy MultitaskStrategy `json:"multitask_strategy"`
	Kwargs            map[string]any    `json:"kwargs"`
}

// Failure is what a failed run reports: in its final values under
// ErrorKey, and as the data of an error event of its stream. Error names
// the error's kind (as LangGraph names an exception's class).
type Failure struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// FailureOf returns the Failure in a run's final values (JoinRun's answer),
// or nil when they hold none or are not a JSON object.
func FailureOf(values json.RawMessage) *Failure {
	var v map[string]json.RawMessage
	if json.Unmarshal(values, &v) != nil || v[ErrorKey] == nil {
		return nil
	}
	var e Failure
	if json.Unmarshal(v[ErrorKey], &e) != nil {
		return nil
	}
	return &e
}

// AssistantCreate is the body of POST /assistants.
type AssistantCreate struct {
	Assistant
	IfExists string `json:"if_exists,omitempty"`
}

// AssistantSearch is the body of POST /assistants/search.
type AssistantSearch struct {
	GraphID  string         `json:"graph_id,omitempty"`
	Name     string         `json:"name,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	Limit    *int           `json:"limit,omitempty"`
	Offset   int            `json:"offset,omitempty"`
}

// ThreadCreate is the body of POST /threads.
type ThreadCreate struct {
	ThreadID string `json:"thread_id,omitempty"`
	// Metadata is a JSON object.
	Metadata json.RawMessage `json:"metadata,omitempty"`
	IfExists string          `json:"if_exists,omitempty"`
}

// ThreadPatch is the body of PATCH /threads/{thread_id}: metadata merged
// into the thread's.
type ThreadPatch struct {
	Metadata map[string]any `json:"metadata,omitempty"`
}

// ThreadSearch is the body of POST /threads/search. SortBy is
// "updated_at" (the default) or "created_at", SortOrder "desc" (the
// default) or "asc".
type ThreadSearch struct {
	Metadata  map[string]any `json:"metadata,omitempty"`
	Values    map[string]any `json:"values,omitempty"`
	IDs       []string       `json:"ids,omitempty"`
	Status    ThreadStatus   `json:"status,omitempty"`
	Limit     *int           `json:"limit,omitempty"`
	Offset    int            `json:"offset,omitempty"`
	SortBy    string         `json:"sort_by,omitempty"`
	SortOrder string         `json:"sort_order,omitempty"`
}

// StateUpdate is the body of POST /threads/{thread_id}/state: values
// written over the thread's. CheckpointID or Checkpoint name the
// checkpoint the update applies to: the new checkpoint's parent, a fork
// when it is not the head; without them the update applies to the head.
type StateUpdate struct {
	Values       map[string]json.RawMessage `json:"values,omitempty"`
	CheckpointID string                     `json:"checkpoint_id,omitempty"`
	Checkpoint   *Checkpoint                `json:"checkpoint,omitempty"`
	// AsNode is the node the update is written as, in LangGraph; an
	// agent has no nodes to choose between, so it is accepted and unused.
	AsNode string `json:"as_node,omitempty"`
}

// StateUpdated is the answer to a StateUpdate: the checkpoint it made.
type StateUpdated struct {
	Checkpoint Checkpoint `json:"checkpoint"`
}

// HistoryRequest is the body of POST /threads/{thread_id}/history: the
// states of all the thread's checkpoints (every branch), newest first.
type HistoryRequest struct {
	// Limit caps the states returned; nil means 10, LangGraph's default.
	Limit *int `json:"limit,omitempty"`
	// Before keeps the checkpoints older than the one it names: a client
	// pages by passing the last (oldest) checkpoint of the page before.
	Before *CheckpointRef `json:"before,omitempty"`
	// Metadata keeps the states whose metadata contains it.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Checkpoint, when it names a checkpoint ID, keeps that checkpoint
	// only, as LangGraph's checkpointers filter a listing by the
	// configured checkpoint.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
}

// StateRequest is the body of POST /threads/{thread_id}/state/checkpoint:
// the checkpoint whose state is wanted.
type StateRequest struct {
	Checkpoint Checkpoint `json:"checkpoint"`
	// Subgraphs asks for subgraphs' states too, in LangGraph; an agent's
	// subagents run in threads of their own, so it is accepted and unused.
	Subgraphs bool `json:"subgraphs,omitempty"`
}

// CheckpointRef names a checkpoint in any of the forms LangGraph's clients
// send for one: its ID as a string (the Python SDK; GET history's before
// query parameter), a config ({"configurable":{"checkpoint_id":…}}, the
// JavaScript SDK's before), or a Checkpoint object ({"checkpoint_id":…}).
// It encodes as a config, the form LangGraph's servers read.
type CheckpointRef struct {
	CheckpointID string
	CheckpointNS string
}

// MarshalJSON implements json.Marshaler: a config naming the checkpoint.
func (c CheckpointRef) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]map[string]string{"configurable": {"checkpoint_id": c.CheckpointID, "checkpoint_ns": c.CheckpointNS}})
}

// UnmarshalJSON implements json.Unmarshaler: any of the three forms; null
// and a form that names no checkpoint leave c empty.
func (c *CheckpointRef) UnmarshalJSON(b []byte) error {
	var id string
	if err := json.Unmarshal(b, &id); err == nil {
		*c = CheckpointRef{CheckpointID: id}
		return nil
	}
	type ids struct {
		CheckpointID string `json:"checkpoint_id"`
		CheckpointNS string `json:"checkpoint_ns"`
	}
	var v struct {
		ids
		Configurable *ids `json:"configurable"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("a checkpoint is its ID, a config or a checkpoint object: %w", err)
	}
	if v.Configurable != nil && v.Configurable.CheckpointID != "" {
		v.ids = *v.Configurable
	}
	*c = CheckpointRef{CheckpointID: v.CheckpointID, CheckpointNS: v.CheckpointNS}
	return nil
}

// RunCreate is the body of the run endpoints (POST
// /threads/{thread_id}/runs, .../runs/stream, .../runs/wait, and the
// stateless /runs/stream and /runs/wait).
type RunCreate struct {
	// AssistantID is an assistant's ID or its graph ID.
	AssistantID string         `json:"assistant_id"`
	Input       *Input         `json:"input,omitempty"`
	Command     *Command       `json:"command,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	// StreamMode is a mode or a list of them (StreamModes reads it).
	StreamMode        json.RawMessage   `json:"stream_mode,omitempty"`
	StreamSubgraphs   bool              `json:"stream_subgraphs,omitempty"`
	MultitaskStrategy MultitaskStrategy `json:"multitask_strategy,omitempty"`
	OnDisconnect      string            `json:"on_disconnect,omitempty"`
	OnCompletion      string            `json:"on_completion,omitempty"`
	IfNotExists       string            `json:"if_not_exists,omitempty"`
	// Checkpoint or CheckpointID name the checkpoint the run starts from.
	Checkpoint   *Checkpoint `json:"checkpoint,omitempty"`
	CheckpointID string      `json:"checkpoint_id,omitempty"`
	// Durability is "sync", "async" or "exit"; CheckpointDuring is its
	// older form (true: async, false: exit).
	Durability       string `json:"durability,omitempty"`
	CheckpointDuring *bool  `json:"checkpoint_during,omitempty"`
}

// Command resumes a run from its interrupts.
type Command struct {
	Resume json.RawMessage `json:"resume,omitempty"`
}

// Input is a run's input: the messages it adds to the thread, and the
// other values it names.
type Input struct {
	// Messages are LangChain message dicts.
	Messages []json.RawMessage
	// Values are the input's other keys.
	Values map[string]json.RawMessage
}

// UnmarshalJSON implements json.Unmarshaler.
func (in *Input) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for k, v := range m {
		if k != "messages" {
			if in.Values == nil {
				in.Values = map[string]json.RawMessage{}
			}
			in.Values[k] = v
			continue
		}
		if err := json.Unmarshal(v, &in.Messages); err != nil {
			return err
		}
	}
	return nil
}

// MarshalJSON implements json.Marshaler: the values' keys and messages.
func (in Input) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(in.Values)+1)
	for k, v := range in.Values {
		m[k] = v
	}
	if in.Messages != nil {
		m["messages"] = in.Messages
	}
	return json.Marshal(m)
}

// StreamMode is what a run's stream carries: its events are named after
// their mode.
type StreamMode string

// Stream modes.
const (
	StreamValues        StreamMode = "values"
	StreamMessagesTuple StreamMode = "messages-tuple"
	StreamUpdates       StreamMode = "updates"
	StreamCustom        StreamMode = "custom"
	StreamEvents        StreamMode = "events"
	StreamDebug         StreamMode = "debug"
	StreamMessages      StreamMode = "messages"
	StreamTasks         StreamMode = "tasks"
	StreamCheckpoints   StreamMode = "checkpoints"
	StreamTools         StreamMode = "tools"
)

// StreamModes reads StreamMode: a mode or a list of them; values when it
// is unset. A mode it does not know is an error.
func (q *RunCreate) StreamModes() ([]StreamMode, error) {
	if len(q.StreamMode) == 0 || string(q.StreamMode) == "null" {
		return []StreamMode{StreamValues}, nil
	}
	var one StreamMode
	var many []StreamMode
	switch {
	case json.Unmarshal(q.StreamMode, &one) == nil:
		many = []StreamMode{one}
	case json.Unmarshal(q.StreamMode, &many) == nil:
	default:
		return nil, errors.New("stream_mode must be a string or a list of strings")
	}
	for _, m := range many {
		switch m {
		case StreamValues, StreamMessagesTuple, StreamUpdates, StreamCustom, StreamEvents, StreamDebug, StreamMessages, StreamTasks, StreamCheckpoints, StreamTools:
		default:
			return nil, fmt.Errorf("unknown stream_mode %q", m)
		}
	}
	return many, nil
}
