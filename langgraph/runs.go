package langgraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Paths of the runs API: on a thread, and stateless.
const (
	PathRuns            = PathThread + "/runs"
	PathRunsStream      = PathRuns + "/stream"
	PathRunsWait        = PathRuns + "/wait"
	PathRun             = PathRuns + "/{run_id}"
	PathRunCancel       = PathRun + "/cancel"
	PathRunJoin         = PathRun + "/join"
	PathRunStream       = PathRun + "/stream"
	PathStatelessStream = "/runs/stream"
	PathStatelessWait   = "/runs/wait"
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

// CreateRun starts a run on a thread in the background.
func (c *Client) CreateRun(ctx context.Context, threadID string, q RunCreate) (*Run, error) {
	var rn Run
	if err := c.Do(ctx, http.MethodPost, c.path(PathRuns, threadID), q, &rn); err != nil {
		return nil, err
	}
	return &rn, nil
}

// GetRun returns a run.
func (c *Client) GetRun(ctx context.Context, threadID, runID string) (*Run, error) {
	var rn Run
	if err := c.Do(ctx, http.MethodGet, c.path(PathRun, threadID, runID), nil, &rn); err != nil {
		return nil, err
	}
	return &rn, nil
}

// JoinRun waits for a run to end and returns its final values: a JSON
// object, with a Failure under ErrorKey when the run failed.
func (c *Client) JoinRun(ctx context.Context, threadID, runID string) (json.RawMessage, error) {
	var v json.RawMessage
	if err := c.Do(ctx, http.MethodGet, c.path(PathRunJoin, threadID, runID), nil, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// CancelRun cancels a run, waiting for it to end when wait is set; action
// is CancelInterrupt, CancelRollback, or "" for the server's default.
func (c *Client) CancelRun(ctx context.Context, threadID, runID string, wait bool, action string) error {
	q := "?wait=0"
	if wait {
		q = "?wait=1"
	}
	if action != "" {
		q += "&action=" + url.QueryEscape(action)
	}
	return c.Do(ctx, http.MethodPost, c.path(PathRunCancel, threadID, runID)+q, nil, nil)
}

// RunList is the query of GET /threads/{thread_id}/runs.
type RunList struct {
	// Limit caps the runs listed; nil means 10.
	Limit  *int
	Offset int
	// Status keeps the runs in that status; "" keeps all.
	Status RunStatus
}

// ListRuns lists a thread's runs, newest first.
func (c *Client) ListRuns(ctx context.Context, threadID string, q RunList) ([]Run, error) {
	qs := url.Values{}
	if q.Limit != nil {
		qs.Set("limit", strconv.Itoa(*q.Limit))
	}
	if q.Offset != 0 {
		qs.Set("offset", strconv.Itoa(q.Offset))
	}
	if q.Status != "" {
		qs.Set("status", string(q.Status))
	}
	query := ""
	if len(qs) > 0 {
		query = "?" + qs.Encode()
	}
	var out []Run
	if err := c.Do(ctx, http.MethodGet, c.path(PathRuns, threadID)+query, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// WaitRun starts a run and waits for it to end, returning its final
// values as JoinRun does: on a thread, or, with threadID "", stateless
// (on a new thread, deleted when the run ends unless q.OnCompletion is
// OnCompletionKeep).
func (c *Client) WaitRun(ctx context.Context, threadID string, q RunCreate) (json.RawMessage, error) {
	var v json.RawMessage
	var err error
	if threadID == "" {
		err = c.Do(ctx, http.MethodPost, PathStatelessWait, q, &v)
	} else {
		err = c.Do(ctx, http.MethodPost, c.path(PathRunsWait, threadID), q, &v)
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

// StreamRun starts a run and yields the events of its stream, in the
// modes q.StreamMode names (values when none): on a thread, or, with
// threadID "", stateless. The first event, metadata, carries the run's
// run_id. Each iteration starts a run anew; stopping the iteration
// closes the stream, which cancels the run unless q.OnDisconnect is
// OnDisconnectContinue. The iteration ends with the stream, or with an
// error: the connection's or ctx's, or an *Error.
func (c *Client) StreamRun(ctx context.Context, threadID string, q RunCreate) iter.Seq2[Event, error] {
	if threadID == "" {
		return c.stream(ctx, http.MethodPost, PathStatelessStream, q)
	}
	return c.stream(ctx, http.MethodPost, c.path(PathRunsStream, threadID), q)
}

// JoinStream yields the events of a run's stream while the run goes on:
// those after the event whose ID is lastEventID ("" or "-1" for all of
// them), then the new ones until the run ends. A run that has ended
// yields none. Stopping the iteration closes the stream (the run goes
// on); it ends as StreamRun's does.
func (c *Client) JoinStream(ctx context.Context, threadID, runID, lastEventID string) iter.Seq2[Event, error] {
	var hdr []string
	if lastEventID != "" {
		hdr = []string{HeaderLastEventID, lastEventID}
	}
	return c.stream(ctx, http.MethodGet, c.path(PathRunStream, threadID, runID), nil, hdr...)
}
