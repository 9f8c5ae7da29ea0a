// Package checkpoint defines how a thread's state is saved step by step and
// read back: the [Saver] interface, the [Checkpoint] a step writes, and the
// [Snapshot] a load returns.
//
// A checkpoint stores only what its step changed (a [Delta]): the messages
// it appended, and the files and values it touched. A run of N steps
// therefore stores O(N) bytes, never the whole history per step. Loading
// applies the deltas along a checkpoint's ancestry. Resuming from an older
// checkpoint writes new checkpoints whose parent is that one: a new branch,
// with the old history left intact.
//
// [MemorySaver] is an in-memory Saver; the sqlite and postgres packages hold
// durable ones. Every implementation runs the checkpointtest suite.
package checkpoint

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/thread"
)

// Errors returned by Savers. Test with errors.Is.
var (
	// ErrNotFound: no such thread or checkpoint.
	ErrNotFound = errors.New("checkpoint: not found")
	// ErrBusy: the thread is already running (Acquire).
	ErrBusy = errors.New("checkpoint: thread is already running")
	// ErrCorrupt: stored data could not be decoded.
	ErrCorrupt = errors.New("checkpoint: corrupt or unreadable checkpoint")
	// ErrSchemaVersion: the database was written by an incompatible version.
	ErrSchemaVersion = errors.New("checkpoint: unsupported schema version")
	// ErrConflict: a Put whose parent is not a checkpoint of the thread, or
	// whose ID the thread already has.
	ErrConflict = errors.New("checkpoint: conflicts with the thread's checkpoints")
	// ErrInvalid: a malformed argument (an empty or oversized ID, a Keep
	// beyond the parent's messages, invalid JSON, an unknown status).
	ErrInvalid = errors.New("checkpoint: invalid argument")
)

// Status is a thread's run status.
type Status string

// Thread statuses.
const (
	StatusIdle        Status = "idle"        // no run; the last one completed
	StatusBusy        Status = "busy"        // a run holds the thread
	StatusInterrupted Status = "interrupted" // waiting for human decisions
	StatusError       Status = "error"       // the last run failed
)

// Delta is what one checkpoint changes relative to its parent.
type Delta struct {
	// Keep is how many of the parent's messages the checkpoint keeps, in
	// order; Messages are appended after them. A normal step keeps all of
	// the parent's messages; a step that rewrote history (repairing
	// dangling tool calls, say) keeps fewer and re-appends the rest.
	Keep     int           `json:"keep"`
	Messages []llm.Message `json:"messages,omitempty"`
	// Files holds the files that changed; a nil entry deletes the path.
	Files map[string]*thread.FileData `json:"files,omitempty"`
	// Appends holds files that were only appended to: each entry's
	// Content is the text added to the end of the parent's file (which
	// it creates when the parent has none), its times the file's new
	// times. A path is never in both Files and Appends.
	Appends map[string]thread.FileData `json:"appends,omitempty"`
	// Values holds the custom state keys that changed; a nil entry deletes
	// the key.
	Values map[string]json.RawMessage `json:"values,omitempty"`
}

// Checkpoint is one saved step of a thread.
type Checkpoint struct {
	ThreadID string `json:"thread_id"`
	// ID identifies the checkpoint within its thread. The agent makes IDs
	// that sort in creation order.
	ID string `json:"id"`
	// ParentID is the checkpoint this one follows; "" for a thread's first.
	ParentID  string    `json:"parent_id,omitempty"`
	Step      int       `json:"step"`
	CreatedAt time.Time `json:"created_at"`
	Delta
	// Meta is run information kept with the checkpoint (status, pending
	// interrupts) as a JSON object; opaque to Savers.
	Meta json.RawMessage `json:"meta,omitempty"`
}

// Info describes a checkpoint without its content.
type Info struct {
	ThreadID  string          `json:"thread_id"`
	ID        string          `json:"id"`
	ParentID  string          `json:"parent_id,omitempty"`
	Step      int             `json:"step"`
	CreatedAt time.Time       `json:"created_at"`
	Meta      json.RawMessage `json:"meta,omitempty"`
}

// Snapshot is a thread's state as of one checkpoint: every delta from the
// thread's first checkpoint to this one applied in order.
type Snapshot struct {
	Info
	Messages []llm.Message
	Files    map[string]thread.FileData
	Values   map[string]json.RawMessage
}

// Thread describes a thread.
type Thread struct {
	ID        string          `json:"thread_id"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
	Status    Status          `json:"status"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	// Head is the thread's latest checkpoint, "" when it has none.
	Head string `json:"head,omitempty"`
}

// ListOptions narrows Threads and History.
type ListOptions struct {
	// Limit caps the number of results; zero means no limit.
	Limit int
	// Offset skips that many results first.
	Offset int
	// Status, when set, keeps threads with that status (Threads only).
	Status Status
	// TopLevel leaves out the threads started from another (a subagent's:
	// thread.IsChild), which belong to their parent's (Threads only);
	// Limit and Offset count the threads kept.
	TopLevel bool
}

// Lease is a run's hold on a thread, taken by Saver.Acquire.
type Lease interface {
	// Release ends the hold and records the thread's status.
	Release(ctx context.Context, status Status) error
}

// BatchPutter is implemented by Savers that can save several checkpoints
// in one transaction: a run whose steps come faster than the database
// commits (see agent.DurabilityAsync) then pays one commit for several.
type BatchPutter interface {
	// PutBatch saves cps in order, atomically: when it returns nil all of
	// them are durable, each as Put would have saved it (a checkpoint may
	// be the parent of the next), and each thread's head is its last
	// checkpoint in cps; when it fails none is saved.
	PutBatch(ctx context.Context, cps []*Checkpoint) error
}

// Saver stores checkpoints. Implementations must be safe for concurrent
// use, by several goroutines and, for durable ones, several processes.
//
// A Saver has no Close: a durable one belongs to a database that also
// holds the store (sqlite.DB, postgres.DB, persist.DB), and closing the
// database is its owner's business.
type Saver interface {
	// Put saves a checkpoint atomically and makes it the thread's head,
	// creating the thread if needed. When Put returns nil the checkpoint
	// is durable. A ParentID that is not a checkpoint of the thread is
	// ErrConflict.
	Put(ctx context.Context, cp *Checkpoint) error

	// Load returns the thread's state as of the given checkpoint, or of
	// its head when checkpointID is "". ErrNotFound if either is missing;
	// ErrCorrupt if stored data cannot be decoded.
	Load(ctx context.Context, threadID, checkpointID string) (*Snapshot, error)

	// History lists a thread's checkpoints, newest first.
	History(ctx context.Context, threadID string, opts ListOptions) ([]Info, error)

	// Threads lists threads, most recently updated first.
	Threads(ctx context.Context, opts ListOptions) ([]Thread, error)

	// Thread describes one thread; ErrNotFound if missing.
	Thread(ctx context.Context, threadID string) (*Thread, error)

	// DeleteThread removes a thread and all its checkpoints. Deleting a
	// missing thread is not an error.
	DeleteThread(ctx context.Context, threadID string) error

	// Acquire marks the thread busy for one run, creating it (with
	// metadata, a JSON object or nil) if needed. It fails with ErrBusy
	// while another run, in this process or another, holds it. A hold
	// whose process died is released automatically.
	Acquire(ctx context.Context, threadID string, metadata json.RawMessage) (Lease, error)
}

// NewID returns a checkpoint id that sorts after the ids made before it
// (a nanosecond clock, then random bytes): the ids of a thread's
// checkpoints, whoever writes them.
func NewID() string {
	var b [4]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand.Read never fails
	return fmt.Sprintf("%016x%s", time.Now().UnixNano(), hex.EncodeToString(b[:]))
}
