package checkpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/thread"
)

// MemorySaver is an in-memory [Saver]: threads live as long as the process. It
// serves runs that need checkpoints (human approval, resuming within a
// process) when no durable Saver is configured, and tests.
//
// Checkpoints are copied in and snapshots copied out, so callers may keep
// changing what they passed or received. The zero value is ready to use.
type MemorySaver struct {
	mu      sync.RWMutex
	threads map[string]*memThread
	seq     uint64 // last checkpoint sequence number and lease token
	now     func() time.Time
}

type memThread struct {
	meta      json.RawMessage
	status    Status
	createdAt time.Time
	updatedAt time.Time
	head      *memCheckpoint
	byID      map[string]*memCheckpoint
	order     []*memCheckpoint // in Put order
	lease     uint64           // token of the lease holding the thread, 0 if none
}

type memCheckpoint struct {
	cp       Checkpoint // deep copy of what was Put
	parent   *memCheckpoint
	msgCount int // messages in the state as of this checkpoint
}

// NewMemorySaver returns an empty in-memory Saver.
func NewMemorySaver() *MemorySaver { return &MemorySaver{} }

var _ Saver = (*MemorySaver)(nil)

func (m *MemorySaver) clock() time.Time {
	if m.now != nil {
		return m.now()
	}
	return time.Now().UTC()
}

// Put implements [Saver]. A zero cp.CreatedAt is set to the current time.
func (m *MemorySaver) Put(ctx context.Context, cp *Checkpoint) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := cp.Validate(); err != nil {
		return err
	}
	now := m.clock()
	if cp.CreatedAt.IsZero() {
		cp.CreatedAt = now
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[cp.ThreadID]
	var parent *memCheckpoint
	if cp.ParentID != "" {
		if t != nil {
			parent = t.byID[cp.ParentID]
		}
		if parent == nil {
			return fmt.Errorf("%w: thread %q has no checkpoint %q", ErrConflict, cp.ThreadID, cp.ParentID)
		}
		if cp.Keep > parent.msgCount {
			return fmt.Errorf("%w: keep %d but parent %q has %d messages", ErrInvalid, cp.Keep, cp.ParentID, parent.msgCount)
		}
	}
	if t != nil && t.byID[cp.ID] != nil {
		return fmt.Errorf("%w: thread %q already has checkpoint %q", ErrConflict, cp.ThreadID, cp.ID)
	}
	if t == nil {
		t = m.newThread(cp.ThreadID, nil, now)
	}
	mc := &memCheckpoint{cp: cloneCheckpoint(cp), parent: parent, msgCount: cp.Keep + len(cp.Messages)}
	mc.cp.CreatedAt = mc.cp.CreatedAt.UTC()
	t.byID[cp.ID] = mc
	t.order = append(t.order, mc)
	t.head = mc
	t.updatedAt = now
	return nil
}

// newThread creates a thread; m.mu must be held for writing.
func (m *MemorySaver) newThread(id string, meta json.RawMessage, now time.Time) *memThread {
	if m.threads == nil {
		m.threads = make(map[string]*memThread)
	}
	t := &memThread{meta: cloneRaw(meta), status: StatusIdle, createdAt: now, updatedAt: now, byID: make(map[string]*memCheckpoint)}
	m.threads[id] = t
	return t
}

// Load implements [Saver].
func (m *MemorySaver) Load(ctx context.Context, threadID, checkpointID string) (*Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	t := m.threads[threadID]
	if t == nil {
		return nil, fmt.Errorf("%w: thread %q", ErrNotFound, threadID)
	}
	target := t.head
	if checkpointID != "" {
		target = t.byID[checkpointID]
	}
	if target == nil {
		if checkpointID == "" {
			return nil, fmt.Errorf("%w: thread %q has no checkpoints", ErrNotFound, threadID)
		}
		return nil, fmt.Errorf("%w: thread %q has no checkpoint %q", ErrNotFound, threadID, checkpointID)
	}
	return assemble(target), nil
}

// assemble builds the state as of target from its ancestry. Each message
// position is written exactly once, by the newest checkpoint in the chain
// that wrote it and that no later checkpoint truncated (its limit); files,
// and values are applied oldest first.
func assemble(target *memCheckpoint) *Snapshot {
	type link struct {
		c     *memCheckpoint
		limit int
	}
	var chain []link
	limit := target.msgCount
	for c := target; c != nil; c = c.parent {
		chain = append(chain, link{c, limit})
		limit = min(limit, c.cp.Keep)
	}
	s := &Snapshot{
		Info:     infoOf(&target.cp),
		Messages: make([]llm.Message, target.msgCount),
		Files:    map[string]thread.FileData{},
		Values:   map[string]json.RawMessage{},
	}
	for i := len(chain) - 1; i >= 0; i-- {
		l := chain[i]
		cp := &l.c.cp
		for j := range cp.Messages {
			if p := cp.Keep + j; p < l.limit {
				s.Messages[p] = cp.Messages[j].Clone()
			}
		}
		for p, f := range cp.Files {
			if f == nil {
				delete(s.Files, p)
			} else {
				s.Files[p] = *f
			}
		}
		for p, f := range cp.Appends {
			old, ok := s.Files[p]
			s.Files[p] = appendFile(old, ok, f)
		}
		for k, v := range cp.Values {
			if v == nil {
				delete(s.Values, k)
			} else {
				s.Values[k] = v
			}
		}
	}
	// Values were shared while applying; copy the survivors.
	for k, v := range s.Values {
		s.Values[k] = cloneRaw(v)
	}
	return s
}

func infoOf(cp *Checkpoint) Info {
	return Info{
		ThreadID:  cp.ThreadID,
		ID:        cp.ID,
		ParentID:  cp.ParentID,
		Step:      cp.Step,
		CreatedAt: cp.CreatedAt,
		Meta:      cloneRaw(cp.Meta),
	}
}

// History implements [Saver].
func (m *MemorySaver) History(ctx context.Context, threadID string, opts ListOptions) ([]Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	t := m.threads[threadID]
	if t == nil {
		return nil, fmt.Errorf("%w: thread %q", ErrNotFound, threadID)
	}
	lo, hi := window(len(t.order), opts.Offset, opts.Limit)
	out := make([]Info, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, infoOf(&t.order[len(t.order)-1-i].cp))
	}
	return out, nil
}

// window returns the half-open range [lo, hi) of n results that offset and
// limit select: a negative offset counts as zero and a limit of zero or less
// means no limit.
func window(n, offset, limit int) (lo, hi int) {
	lo = min(max(offset, 0), n)
	hi = n
	if limit > 0 && limit < hi-lo {
		hi = lo + limit
	}
	return lo, hi
}

// Threads implements [Saver].
func (m *MemorySaver) Threads(ctx context.Context, opts ListOptions) ([]Thread, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	out := make([]Thread, 0, len(m.threads))
	for id, t := range m.threads {
		if opts.Status != "" && t.status != opts.Status || opts.TopLevel && thread.IsChild(id) {
			continue
		}
		out = append(out, t.describe(id))
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b Thread) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	lo, hi := window(len(out), opts.Offset, opts.Limit)
	return out[lo:hi:hi], nil
}

func (t *memThread) describe(id string) Thread {
	th := Thread{ID: id, Metadata: cloneRaw(t.meta), Status: t.status, CreatedAt: t.createdAt, UpdatedAt: t.updatedAt}
	if t.head != nil {
		th.Head = t.head.cp.ID
	}
	return th
}

// Thread implements [Saver].
func (m *MemorySaver) Thread(ctx context.Context, threadID string) (*Thread, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	t := m.threads[threadID]
	if t == nil {
		return nil, fmt.Errorf("%w: thread %q", ErrNotFound, threadID)
	}
	th := t.describe(threadID)
	return &th, nil
}

// DeleteThread implements [Saver]. A lease on the deleted thread stays
// valid; its Release then changes nothing.
func (m *MemorySaver) DeleteThread(ctx context.Context, threadID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.threads, threadID)
	return nil
}

// Acquire implements [Saver]. Metadata is recorded only when the thread is
// created.
func (m *MemorySaver) Acquire(ctx context.Context, threadID string, metadata json.RawMessage) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := ValidateID("thread id", threadID); err != nil {
		return nil, err
	}
	if err := ValidateMetadata(metadata); err != nil {
		return nil, err
	}
	now := m.clock()
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[threadID]
	if t == nil {
		t = m.newThread(threadID, metadata, now)
	}
	if t.lease != 0 {
		return nil, fmt.Errorf("%w: thread %q", ErrBusy, threadID)
	}
	m.seq++
	t.lease = m.seq
	t.status = StatusBusy
	t.updatedAt = now
	return &memLease{m: m, threadID: threadID, token: m.seq}, nil
}

type memLease struct {
	m        *MemorySaver
	threadID string
	token    uint64
	once     sync.Mutex
	done     bool
}

// Release implements [Lease].
func (l *memLease) Release(ctx context.Context, status Status) error {
	if err := ValidateRelease(status); err != nil {
		return err
	}
	l.once.Lock()
	defer l.once.Unlock()
	if l.done {
		return nil
	}
	m := l.m
	now := m.clock()
	m.mu.Lock()
	defer m.mu.Unlock()
	l.done = true
	t := m.threads[l.threadID]
	if t == nil || t.lease == 0 {
		return nil // deleted (and perhaps re-created) meanwhile
	}
	if t.lease != l.token {
		return fmt.Errorf("%w: thread %q: the lease was taken over by another run", ErrBusy, l.threadID)
	}
	t.lease = 0
	t.status = status
	t.updatedAt = now
	return nil
}

// cloneCheckpoint deep-copies cp.
func cloneCheckpoint(cp *Checkpoint) Checkpoint {
	c := *cp
	if cp.Messages != nil {
		c.Messages = make([]llm.Message, len(cp.Messages))
		for i := range cp.Messages {
			c.Messages[i] = cp.Messages[i].Clone()
		}
	}
	c.Meta = cloneRaw(cp.Meta)
	// File contents are copied too, although strings are immutable: the
	// text of an append is a substring of the whole file's buffer (see
	// thread.Files.Append), and keeping it would keep that buffer, of
	// every version of the file, alive for as long as the checkpoint.
	if cp.Files != nil {
		c.Files = make(map[string]*thread.FileData, len(cp.Files))
		for p, f := range cp.Files {
			if f != nil {
				f2 := *f
				f2.Content = strings.Clone(f.Content)
				f = &f2
			}
			c.Files[p] = f
		}
	}
	if cp.Appends != nil {
		c.Appends = make(map[string]thread.FileData, len(cp.Appends))
		for p, f := range cp.Appends {
			f.Content = strings.Clone(f.Content)
			c.Appends[p] = f
		}
	}
	if cp.Values != nil {
		c.Values = maps.Clone(cp.Values)
		for k, v := range c.Values {
			c.Values[k] = cloneRaw(v)
		}
	}
	return c
}
