package langgraph

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Paths of the threads API: threads, their state and history.
const (
	PathThreads       = "/threads"
	PathThreadSearch  = PathThreads + "/search"
	PathThreadCount   = PathThreads + "/count" // POST a ThreadSearch's filters
	PathThread        = PathThreads + "/{thread_id}"
	PathThreadCopy    = PathThread + "/copy"
	PathThreadState   = PathThread + "/state"
	PathThreadStateAt = PathThreadState + "/{checkpoint_id}"
	PathThreadStateOf = PathThreadState + "/checkpoint" // POST a StateRequest
	PathThreadHistory = PathThread + "/history"
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
// /threads/{thread_id}/state, the items of its history). Values is a JSON
// object; a Client leaves it a json.RawMessage.
type ThreadState struct {
	Values           any            `json:"values"`
	Next             []string       `json:"next"`
	Tasks            []Task         `json:"tasks"`
	Metadata         map[string]any `json:"metadata"`
	CreatedAt        *time.Time     `json:"created_at"`
	Checkpoint       *Checkpoint    `json:"checkpoint"`
	ParentCheckpoint *Checkpoint    `json:"parent_checkpoint"`
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

// CreateThread creates a thread.
func (c *Client) CreateThread(ctx context.Context, q ThreadCreate) (*Thread, error) {
	return c.thread(ctx, http.MethodPost, PathThreads, q)
}

// GetThread returns a thread, its values a json.RawMessage.
func (c *Client) GetThread(ctx context.Context, threadID string) (*Thread, error) {
	return c.thread(ctx, http.MethodGet, c.path(PathThread, threadID), nil)
}

// thread answers a thread, leaving its values as they came.
func (c *Client) thread(ctx context.Context, method, path string, body any) (*Thread, error) {
	var t rawThread
	if err := c.Do(ctx, method, path, body, &t); err != nil {
		return nil, err
	}
	th := t.thread()
	return &th, nil
}

// rawThread decodes a Thread, leaving its values as they came.
type rawThread struct {
	Thread
	Values json.RawMessage `json:"values"` // over Thread's
}

func (t *rawThread) thread() Thread {
	th := t.Thread
	if len(t.Values) > 0 && string(t.Values) != "null" {
		th.Values = t.Values
	}
	return th
}

// SearchThreads lists the threads a search finds, a page of them, their
// values each a json.RawMessage.
func (c *Client) SearchThreads(ctx context.Context, q ThreadSearch) ([]Thread, error) {
	var raw []rawThread
	if err := c.Do(ctx, http.MethodPost, PathThreadSearch, q, &raw); err != nil {
		return nil, err
	}
	out := make([]Thread, len(raw))
	for i := range raw {
		out[i] = raw[i].thread()
	}
	return out, nil
}

// UpdateThread merges metadata into a thread's and returns the thread.
func (c *Client) UpdateThread(ctx context.Context, threadID string, q ThreadPatch) (*Thread, error) {
	return c.thread(ctx, http.MethodPatch, c.path(PathThread, threadID), q)
}

// CopyThread makes a new thread holding a thread's state as of its head,
// and its metadata, and returns it.
func (c *Client) CopyThread(ctx context.Context, threadID string) (*Thread, error) {
	return c.thread(ctx, http.MethodPost, c.path(PathThreadCopy, threadID), nil)
}

// GetState returns a thread's state as of its head, or, when
// checkpointID is not "", as of that checkpoint; its values a
// json.RawMessage.
func (c *Client) GetState(ctx context.Context, threadID, checkpointID string) (*ThreadState, error) {
	if checkpointID == "" {
		return c.state(ctx, http.MethodGet, c.path(PathThreadState, threadID), nil)
	}
	return c.state(ctx, http.MethodGet, c.path(PathThreadStateAt, threadID, checkpointID), nil)
}

// StateAt returns a thread's state as of the checkpoint q names (its
// head when it names none), as GetState does.
func (c *Client) StateAt(ctx context.Context, threadID string, q StateRequest) (*ThreadState, error) {
	return c.state(ctx, http.MethodPost, c.path(PathThreadStateOf, threadID), q)
}

// state answers a thread's state, leaving its values as they came.
func (c *Client) state(ctx context.Context, method, path string, body any) (*ThreadState, error) {
	var st rawState
	if err := c.Do(ctx, method, path, body, &st); err != nil {
		return nil, err
	}
	out := st.state()
	return &out, nil
}

// rawState decodes a ThreadState, leaving its values as they came.
type rawState struct {
	ThreadState
	Values json.RawMessage `json:"values"` // over ThreadState's
}

func (st *rawState) state() ThreadState {
	out := st.ThreadState
	if len(st.Values) > 0 && string(st.Values) != "null" {
		out.Values = st.Values
	}
	return out
}

// UpdateState writes values over a thread's state as a new checkpoint,
// whose parent is the head or the checkpoint q names (a fork), and
// returns that checkpoint.
func (c *Client) UpdateState(ctx context.Context, threadID string, q StateUpdate) (*StateUpdated, error) {
	var out StateUpdated
	if err := c.Do(ctx, http.MethodPost, c.path(PathThreadState, threadID), q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// History lists a thread's states newest first, every branch's (POST
// /threads/{thread_id}/history, which reads all of a HistoryRequest;
// GET, with limit and before only, answers the same), their values each a
// json.RawMessage.
func (c *Client) History(ctx context.Context, threadID string, q HistoryRequest) ([]ThreadState, error) {
	var raw []rawState
	if err := c.Do(ctx, http.MethodPost, c.path(PathThreadHistory, threadID), q, &raw); err != nil {
		return nil, err
	}
	out := make([]ThreadState, len(raw))
	for i := range raw {
		out[i] = raw[i].state()
	}
	return out, nil
}

// DeleteThread deletes a thread, cancelling its runs.
func (c *Client) DeleteThread(ctx context.Context, threadID string) error {
	return c.Do(ctx, http.MethodDelete, c.path(PathThread, threadID), nil, nil)
}

// CountThreads counts the threads a search's filters (Metadata, Values,
// IDs, Status) find.
func (c *Client) CountThreads(ctx context.Context, q ThreadSearch) (int, error) {
	var n int
	if err := c.Do(ctx, http.MethodPost, PathThreadCount, q, &n); err != nil {
		return 0, err
	}
	return n, nil
}
