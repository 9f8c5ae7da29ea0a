package rewind

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/store"
)

// Bounds of what a Tracker records.
const (
	// DefaultMaxFileBytes: a larger file is recorded by its size and time
	// alone, never read, and cannot be put back.
	DefaultMaxFileBytes = 64 << 20
	// DefaultMaxFiles: a folder with more entries is recorded up to this
	// many (in walk order), and the point says the rest was left out.
	DefaultMaxFiles = 100_000
	// DefaultMaxThreadBytes bounds the contents a thread's points add to
	// the store: past it, a file that changes is recorded by its hash,
	// and a rewind leaves it as it is.
	DefaultMaxThreadBytes = 1 << 30
)

// Config configures a Tracker.
type Config struct {
	// Dir is the folder tracked. "" records the turns alone, for
	// threads whose files are in their state: Rewind then forks the
	// conversation, and the files with it.
	Dir string
	// Store keeps the blobs and the points (the thread's database).
	// Required.
	Store store.Store
	// MaxFileBytes, MaxFiles and MaxThreadBytes bound what is recorded;
	// zero means the defaults.
	MaxFileBytes   int64
	MaxFiles       int
	MaxThreadBytes int64
}

// Kind says why a point was recorded.
type Kind string

// The kinds of points.
const (
	// KindTurn: a prompt, before the agent acts on it. What changed since
	// the point before changed outside the agent.
	KindTurn Kind = "turn"
	// KindStep: after a step of the agent that changed the folder.
	KindStep Kind = "step"
	// KindRestore: after a Restore.
	KindRestore Kind = "restore"
	// KindEnd: the folder and the conversation as a Restore found them,
	// before it changed anything: the end of the thread's last turn, a
	// point to go back to (Turns lists it).
	KindEnd Kind = "end"
)

// Entry is a file, folder or symbolic link as a point records it.
type Entry struct {
	// Hash is the SHA-256 of a file's content, hex; "" for a folder.
	Hash string `json:"h,omitempty"`
	Size int64  `json:"s,omitempty"`
	// Mode is the entry's fs.FileMode: its type bits and permissions.
	Mode uint32 `json:"m"`
	// Link is a symbolic link's target.
	Link string `json:"l,omitempty"`
	// Stored says the content is kept: a file over MaxFileBytes, or past
	// the thread's MaxThreadBytes, is not.
	Stored bool `json:"b,omitempty"`
	// Data is a small file's content (up to 512 bytes), kept in the point
	// itself rather than as a blob.
	Data []byte `json:"d,omitempty"`
	// MTime is the modification time seen (Unix nanoseconds): a hint that
	// the content did not change, never compared for equality.
	MTime int64 `json:"t,omitempty"`
}

// same reports whether two entries hold the same thing.
func (e Entry) same(o Entry) bool {
	return e.Hash == o.Hash && e.Mode == o.Mode && e.Link == o.Link
}

// Point is one recorded state of the folder.
type Point struct {
	// Seq numbers the thread's points from 1, in order.
	Seq  int
	Kind Kind
	// Dir is the folder recorded, "" for none.
	Dir string
	// Prompt is a turn point's prompt (its first 16 KiB).
	Prompt string
	// CheckpointID is the conversation's checkpoint the point goes with:
	// for a turn, the thread's head before the prompt.
	CheckpointID string
	CreatedAt    time.Time
	// Changes are the entries that changed since the point before:
	// their new state, or nil for one removed.
	Changes map[string]*Entry
	// Notes say what was left out (files over a bound, entries past
	// MaxFiles).
	Notes []string
	// Bytes are the contents the point added to the store, counted
	// against the thread's MaxThreadBytes.
	Bytes int64
}

// Changed returns the paths the point changed, sorted.
func (p *Point) Changed() []string { return slices.Sorted(maps.Keys(p.Changes)) }

// Tracker records and restores a folder's points for threads. It is safe
// for concurrent use; calls for one thread take turns.
type Tracker struct {
	cfg  Config
	dir  string
	root *os.Root // dir: what is read and written goes through it
	// folder is dir open, for the walks and looks that go down from it
	// one element at a time.
	folder *os.File

	idx   *index
	count counters

	mu      sync.Mutex
	threads map[string]*threadState
}

// threadState is a thread's points as this process knows them.
type threadState struct {
	mu     sync.Mutex
	loaded bool
	points []*Point
	tree   map[string]Entry // as of the last point
	bytes  int64            // the points' Bytes
	gen    int64            // the index's walk or look the tree was last found by
	// dirty are paths the thread's next look stats (true: a folder it
	// walks) besides those logged since gen: what settle could not take
	// for its steps' own.
	dirty map[string]bool

	// The points of steps recorded but not yet in the store, written
	// together (see flush).
	pending        []store.Item
	pendingPoints  int
	pendingBytes   int64
	pendingChanges []map[string]*Entry
}

// A step's point is written with the next ones, in one transaction, when
// a point of another kind comes (a turn, a restore), when this many are
// waiting, and at the end of each run (Flush), as a run commits its
// checkpoints while the next steps go on: a process killed mid-run loses
// at most the last of them, and the files they recorded stay as they are
// (a rewind then takes their changes for changes made outside the agent).
const (
	maxPendingPoints = 32
	maxPendingBytes  = 8 << 20
)

// load sets the thread's points.
func (ts *threadState) load(points []*Point) {
	ts.points, ts.tree, ts.bytes, ts.gen, ts.dirty = points, treeAt(points, len(points)), 0, 0, nil
	for _, p := range points {
		ts.bytes += p.Bytes
	}
}

// New returns a Tracker of cfg.Dir.
func New(cfg Config) (*Tracker, error) {
	if cfg.Store == nil {
		return nil, errors.New("rewind: Config.Store is required")
	}
	cfg.MaxFileBytes = cmp.Or(cfg.MaxFileBytes, DefaultMaxFileBytes)
	cfg.MaxFiles = cmp.Or(cfg.MaxFiles, DefaultMaxFiles)
	cfg.MaxThreadBytes = cmp.Or(cfg.MaxThreadBytes, DefaultMaxThreadBytes)
	t := &Tracker{cfg: cfg, idx: newIndex(), threads: make(map[string]*threadState)}
	if cfg.Dir == "" {
		return t, nil // the turns alone: the files are the thread's state
	}
	var err error
	if t.dir, err = filepath.Abs(cfg.Dir); err != nil {
		return nil, fmt.Errorf("rewind: %w", err)
	}
	if t.root, err = os.OpenRoot(t.dir); err != nil {
		return nil, fmt.Errorf("rewind: %w", err)
	}
	if t.folder, err = os.Open(t.dir); err != nil {
		t.root.Close()
		return nil, fmt.Errorf("rewind: %w", err)
	}
	return t, nil
}

// Close writes the points that wait to be written, and releases the
// folder.
func (t *Tracker) Close() error {
	t.mu.Lock()
	threads := maps.Clone(t.threads)
	t.mu.Unlock()
	var errs []error
	for id, ts := range threads {
		ts.mu.Lock()
		errs = append(errs, t.flush(context.Background(), id, ts))
		ts.mu.Unlock()
	}
	if t.root == nil {
		return errors.Join(errs...)
	}
	t.idx.mu.Lock()
	defer t.idx.mu.Unlock()
	t.idx.watch.close()
	t.idx.watch, t.idx.noWatch = nil, true // a run still going walks, and watches nothing
	return errors.Join(append(errs, t.root.Close(), t.folder.Close())...)
}

// Dir is the folder tracked, "" for none.
func (t *Tracker) Dir() string { return t.dir }

// thread returns the thread's state, locked, its points loaded from the
// store on first use; unlock with ts.mu.Unlock.
func (t *Tracker) thread(ctx context.Context, threadID string) (*threadState, error) {
	t.mu.Lock()
	ts := t.threads[threadID]
	if ts == nil {
		ts = &threadState{}
		t.threads[threadID] = ts
	}
	t.mu.Unlock()
	ts.mu.Lock()
	if ts.loaded {
		return ts, nil
	}
	points, err := t.loadPoints(ctx, threadID)
	if err != nil {
		ts.mu.Unlock()
		return nil, err
	}
	ts.load(points)
	ts.loaded = true
	return ts, nil
}

// treeAt is the folder as of the first n points.
func treeAt(points []*Point, n int) map[string]Entry {
	tree := make(map[string]Entry)
	for _, p := range points[:n] {
		for path, e := range p.Changes {
			if e == nil {
				delete(tree, path)
			} else {
				tree[path] = *e
			}
		}
	}
	return tree
}

// Record records the folder as it is now as a point of the thread: what
// changed since its last point, found by a walk of the whole folder, or,
// on Linux, by a look at the paths inotify noticed since this Tracker's
// last walk or look. A step that changed nothing records nothing (nil,
// nil); a turn or an end is always recorded, to be listed.
func (t *Tracker) Record(ctx context.Context, threadID string, kind Kind, prompt, checkpointID string) (*Point, error) {
	return t.RecordChanges(ctx, threadID, kind, prompt, checkpointID, nil)
}

// RecordChanges is Record for a step whose tools changed the folder only
// through the backends, which reported each change (backend.WithChanges):
// it looks at the paths reported, and walks nothing. nil changes are a
// walk, as Record; so is a thread this Tracker has not walked the folder
// for yet.
func (t *Tracker) RecordChanges(ctx context.Context, threadID string, kind Kind, prompt, checkpointID string, changes []backend.Change) (*Point, error) {
	return t.recordThread(ctx, threadID, kind, prompt, checkpointID, changes, false)
}

// recordThread is RecordChanges; with lazy, a step's point may wait to be
// written with the next ones (see maxPendingPoints).
func (t *Tracker) recordThread(ctx context.Context, threadID string, kind Kind, prompt, checkpointID string, changes []backend.Change, lazy bool) (*Point, error) {
	ts, err := t.thread(ctx, threadID)
	if err != nil {
		return nil, err
	}
	defer ts.mu.Unlock()
	p, err := t.record(ctx, threadID, ts, kind, prompt, checkpointID, changes)
	if err == nil && (!lazy || kind != KindStep || ts.pendingPoints >= maxPendingPoints || ts.pendingBytes >= maxPendingBytes) {
		err = t.flush(ctx, threadID, ts)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// record records a point; the caller flushes it (flush), as soon as it
// needs it in the store.
func (t *Tracker) record(ctx context.Context, threadID string, ts *threadState, kind Kind, prompt, checkpointID string, reported []backend.Change) (*Point, error) {
	// Another process (deepagents rewind, while a session is open) may
	// have recorded points since these were read: read them again, or
	// this one would take the other's number. (Not while points wait to
	// be written: a run holds the thread, and the other process waits.)
	if ts.pendingPoints == 0 {
		if _, err := t.cfg.Store.Get(ctx, pointsOf(threadID), pointKey(len(ts.points)+1)); err == nil {
			points, err := t.loadPoints(ctx, threadID)
			if err != nil {
				return nil, err
			}
			ts.load(points)
			reported = nil // the other process's points say what it saw: walk
		}
	}
	var s *scanned
	var changes map[string]*Entry
	ok := false
	if reported != nil && t.root != nil && len(ts.points) > 0 && ts.points[len(ts.points)-1].Dir == t.dir {
		s, changes, ok = t.reported(ctx, ts.tree, reported)
	}
	if !ok && t.root != nil && len(ts.points) > 0 && ts.points[len(ts.points)-1].Dir == t.dir {
		s, changes, ok = t.noticed(ctx, ts)
	}
	if !ok {
		var err error
		if s, err = t.scan(ctx, ts.tree); err != nil {
			return nil, err
		}
		changes = s.changes
	}
	if s.gen != 0 {
		// Found by a walk or a look: what was left for the thread to see
		// is seen.
		ts.gen, ts.dirty = s.gen, nil
	}
	if len(changes) == 0 && kind != KindTurn && kind != KindEnd {
		if s.reported != nil {
			t.settle(ts, s.reported)
		}
		return nil, nil
	}
	items, bytes, notes, err := t.blobItems(ctx, ts, s, changes)
	if err != nil {
		return nil, err
	}
	p := &Point{Seq: len(ts.points) + 1, Kind: kind, Dir: t.dir, Prompt: clipPrompt(prompt), CheckpointID: checkpointID,
		CreatedAt: time.Now().UTC(), Changes: changes, Notes: append(s.notes, notes...), Bytes: bytes}
	stored := contentBytes(items)
	it, n := pointItem(threadID, p)
	items = append(items, it)
	ts.pending = append(ts.pending, items...)
	ts.pendingPoints++
	ts.pendingBytes += stored + n
	ts.pendingChanges = append(ts.pendingChanges, changes)
	t.count.points.Add(1)
	t.count.storedBytes.Add(stored + n)
	ts.points = append(ts.points, p)
	ts.bytes += bytes
	if ok {
		for path, e := range changes {
			if e == nil {
				delete(ts.tree, path)
			} else {
				ts.tree[path] = *e
			}
		}
	} else {
		ts.tree = s.tree
	}
	if s.reported != nil {
		t.settle(ts, s.reported)
	}
	return p, nil
}

// flush writes the thread's waiting points, with the contents they need,
// in one transaction where the store has them. When that fails, the
// thread's points are read from the store again at its next use.
func (t *Tracker) flush(ctx context.Context, threadID string, ts *threadState) error {
	if ts.pendingPoints == 0 {
		return nil
	}
	items, changes := ts.pending, ts.pendingChanges
	ts.pending, ts.pendingPoints, ts.pendingBytes, ts.pendingChanges = nil, 0, 0, nil
	if err := store.PutAll(context.WithoutCancel(ctx), t.cfg.Store, items); err != nil {
		for _, c := range changes {
			t.forgetContents(c)
		}
		ts.loaded = false
		return fmt.Errorf("rewind: recording the points of %s: %w", threadID, err)
	}
	// Only now may another thread's point take these contents as stored.
	for _, c := range changes {
		t.storedContents(c)
	}
	return nil
}

// Flush writes the thread's points that wait to be written: a step's
// point is written with the next ones (see Middleware), and a program
// that records steps itself flushes when it is done, or closes the
// Tracker.
func (t *Tracker) Flush(ctx context.Context, threadID string) error {
	ts, err := t.thread(ctx, threadID)
	if err != nil {
		return err
	}
	defer ts.mu.Unlock()
	return t.flush(ctx, threadID, ts)
}

func clipPrompt(s string) string {
	const max = 16 << 10
	if len(s) <= max {
		return s
	}
	for i := max; i > 0; i-- {
		if s[i]&0xC0 != 0x80 {
			return s[:i]
		}
	}
	return ""
}

// Points returns the thread's points, oldest first. They are shared:
// do not change them.
func (t *Tracker) Points(ctx context.Context, threadID string) ([]*Point, error) {
	ts, err := t.thread(ctx, threadID)
	if err != nil {
		return nil, err
	}
	defer ts.mu.Unlock()
	return slices.Clone(ts.points), nil
}

// Forget removes the thread's points (its blobs stay until Vacuum).
func (t *Tracker) Forget(ctx context.Context, threadID string) error {
	t.mu.Lock()
	delete(t.threads, threadID)
	t.mu.Unlock()
	return Forget(ctx, t.cfg.Store, threadID)
}
