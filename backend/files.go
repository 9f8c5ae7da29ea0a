package backend

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"time"
)

// FileData is one file kept in memory: the State backend's unit of storage,
// and the form in which files travel in checkpoints.
type FileData struct {
	Content    string    `json:"content"`
	CreatedAt  time.Time `json:"created_at"`
	ModifiedAt time.Time `json:"modified_at"`
}

// Files is a thread's in-memory files, safe for concurrent use. It remembers
// which paths changed since the last call to [Files.TakeChanges], so that a
// checkpoint stores only what changed.
//
// The zero value is an empty set ready to use.
type Files struct {
	mu      sync.RWMutex
	m       map[string]FileData
	changed map[string]struct{}
}

// NewFiles returns a set holding a copy of m. The copied files do not count
// as changed.
func NewFiles(m map[string]FileData) *Files {
	return &Files{m: maps.Clone(m)}
}

// Get returns the file at path.
func (f *Files) Get(path string) (FileData, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	d, ok := f.m[path]
	return d, ok
}

// Put stores the file at path and marks it changed.
func (f *Files) Put(path string, d FileData) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.put(path, d)
}

func (f *Files) put(path string, d FileData) {
	if f.m == nil {
		f.m = make(map[string]FileData)
	}
	f.m[path] = d
	if f.changed == nil {
		f.changed = make(map[string]struct{})
	}
	f.changed[path] = struct{}{}
}

// Update runs fn on the file at path (ok false if absent) under the set's
// lock and stores the result when fn returns store true. It lets a
// read-modify-write such as an edit be atomic.
func (f *Files) Update(path string, fn func(d FileData, ok bool) (FileData, bool, error)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.m[path]
	nd, store, err := fn(d, ok)
	if err != nil || !store {
		return err
	}
	f.put(path, nd)
	return nil
}

// Delete removes the file at path and marks it changed.
func (f *Files) Delete(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.m[path]; !ok {
		return
	}
	delete(f.m, path)
	if f.changed == nil {
		f.changed = make(map[string]struct{})
	}
	f.changed[path] = struct{}{}
}

// Len returns the number of files.
func (f *Files) Len() int {
	if f == nil {
		return 0
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.m)
}

// Paths returns every path, sorted.
func (f *Files) Paths() []string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return slices.Sorted(maps.Keys(f.m))
}

// Snapshot returns a copy of all files.
func (f *Files) Snapshot() map[string]FileData {
	if f == nil {
		return nil
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	return maps.Clone(f.m)
}

// Clone returns an independent copy with no pending changes.
func (f *Files) Clone() *Files {
	return NewFiles(f.Snapshot())
}

// HasChanges reports whether any path changed since the last TakeChanges.
func (f *Files) HasChanges() bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.changed) > 0
}

// TakeChanges returns the files changed since the previous call, a nil
// value marking a deleted path, and forgets them.
func (f *Files) TakeChanges() map[string]*FileData {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.changed) == 0 {
		return nil
	}
	out := make(map[string]*FileData, len(f.changed))
	for p := range f.changed {
		if d, ok := f.m[p]; ok {
			out[p] = &d
		} else {
			out[p] = nil
		}
	}
	f.changed = nil
	return out
}

// Apply applies changes as returned by TakeChanges (nil deletes), marking
// them changed here. Subagents' file changes merge back this way.
func (f *Files) Apply(changes map[string]*FileData) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for p, d := range changes {
		if d == nil {
			if _, ok := f.m[p]; ok {
				delete(f.m, p)
				if f.changed == nil {
					f.changed = make(map[string]struct{})
				}
				f.changed[p] = struct{}{}
			}
			continue
		}
		f.put(p, *d)
	}
}

// MarshalJSON encodes the files as an object keyed by path.
func (f *Files) MarshalJSON() ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.m == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(f.m)
}

// UnmarshalJSON replaces the files with those of an object keyed by path.
func (f *Files) UnmarshalJSON(b []byte) error {
	var m map[string]FileData
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.m, f.changed = m, nil
	return nil
}

type filesKey struct{}

// WithFiles returns a context carrying a thread's files, where the State
// backend finds them. The agent loop sets it for every tool call.
func WithFiles(ctx context.Context, f *Files) context.Context {
	return context.WithValue(ctx, filesKey{}, f)
}

// FilesFromContext returns the files set by WithFiles, or nil.
func FilesFromContext(ctx context.Context) *Files {
	f, _ := ctx.Value(filesKey{}).(*Files)
	return f
}

// ChangedPaths returns the paths changed since the last TakeChanges, sorted,
// without forgetting them.
func (f *Files) ChangedPaths() []string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return slices.Sorted(maps.Keys(f.changed))
}
