package thread

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// FileData is one file kept in memory: the unit of a thread's files, of the
// State backend's storage, and of the files in checkpoints.
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
	mu sync.RWMutex
	m  map[string]FileData
	// changed maps each path changed since the last TakeChanges to how:
	// wholly (replaced, created or deleted: rewritten) or only appended
	// to, in which case the value is the content's length before the
	// first append, so the checkpoint stores just the new text.
	changed map[string]change
	// dirs indexes the implicit directories: for each directory holding
	// files ("/" included), its immediate children by full path, with the
	// number of files at or below each. Listing a directory, or asking
	// whether a path is one, then costs what the answer holds, not the
	// number of files in the set.
	dirs map[string]map[string]int
	// tails holds, for files that are appended to, the buffer their
	// content is a view of: an append then adds to the buffer (which
	// grows geometrically) instead of copying the whole file into a new
	// string. Bytes of a buffer below its length are never written again,
	// so the strings already handed out stay as they were.
	tails map[string][]byte
}

// change records how a path changed since the last TakeChanges.
type change int

// rewritten marks a path whose content was replaced or deleted; a value of
// zero or more is the length of the content before it was appended to.
const rewritten change = -1

// NewFiles returns a set holding a copy of m. The copied files do not count
// as changed.
func NewFiles(m map[string]FileData) *Files {
	f := &Files{m: maps.Clone(m)}
	f.reindex()
	return f
}

// reindex rebuilds the directory index from the files.
func (f *Files) reindex() {
	f.dirs = nil
	for p := range f.m {
		f.index(p, 1)
	}
}

// index adds delta to the file counts of p's ancestors.
func (f *Files) index(p string, delta int) {
	if f.dirs == nil {
		f.dirs = make(map[string]map[string]int)
	}
	for c := p; c != "/" && c != ""; {
		d := parentDir(c)
		kids := f.dirs[d]
		if kids == nil {
			kids = make(map[string]int)
			f.dirs[d] = kids
		}
		if kids[c] += delta; kids[c] <= 0 {
			delete(kids, c)
			if len(kids) == 0 {
				delete(f.dirs, d)
			}
		}
		c = d
	}
}

// IsDir reports whether files lie below p ("/" always is a directory).
func (f *Files) IsDir(p string) bool {
	if p == "/" {
		return true
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.dirs[p]) > 0
}

// Entry is one child of a directory in a [Files] set.
type Entry struct {
	Path    string
	IsDir   bool
	Size    int64     // a file's content length
	ModTime time.Time // a file's modification time
}

// List returns the immediate children of the directory dir, sorted by path:
// files with their size and time, directories with IsDir set.
func (f *Files) List(dir string) []Entry {
	f.mu.RLock()
	defer f.mu.RUnlock()
	kids := f.dirs[dir]
	out := make([]Entry, 0, len(kids))
	for c := range kids {
		if len(f.dirs[c]) > 0 {
			out = append(out, Entry{Path: c, IsDir: true})
		} else if d, ok := f.m[c]; ok {
			out = append(out, Entry{Path: c, Size: int64(len(d.Content)), ModTime: d.ModifiedAt})
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Subtree returns a copy of the files at or below p.
func (f *Files) Subtree(p string) map[string]FileData {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if p == "/" {
		return maps.Clone(f.m)
	}
	out := make(map[string]FileData)
	if d, ok := f.m[p]; ok {
		out[p] = d
	}
	var walk func(dir string)
	walk = func(dir string) {
		for c := range f.dirs[dir] {
			if d, ok := f.m[c]; ok {
				out[c] = d
			}
			if len(f.dirs[c]) > 0 {
				walk(c)
			}
		}
	}
	walk(p)
	return out
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
	if _, ok := f.m[path]; !ok {
		f.index(path, 1)
	}
	f.m[path] = d
	delete(f.tails, path)
	f.mark(path, rewritten)
}

// mark records that path changed; an append never downgrades a rewrite.
func (f *Files) mark(path string, c change) {
	if f.changed == nil {
		f.changed = make(map[string]change)
	}
	if old, ok := f.changed[path]; ok && (old == rewritten || c != rewritten) {
		return
	}
	f.changed[path] = c
}

// Append adds text to the end of the file at path, creating it when it does
// not exist, and marks only the new text as changed: a checkpoint then
// stores what was appended, not the whole file again.
func (f *Files) Append(path, text string, t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.m[path]
	if !ok {
		f.put(path, FileData{Content: text, CreatedAt: t, ModifiedAt: t})
		return
	}
	base := len(d.Content)
	buf, ok := f.tails[path]
	if !ok || len(buf) != base || base > 0 && unsafe.SliceData(buf) != unsafe.StringData(d.Content) {
		buf = []byte(d.Content) // the content is not (or no longer) this buffer's
	}
	buf = append(buf, text...)
	if f.tails == nil {
		f.tails = make(map[string][]byte)
	}
	f.tails[path] = buf
	d.Content = unsafe.String(unsafe.SliceData(buf), len(buf))
	d.ModifiedAt = t
	f.m[path] = d
	f.mark(path, change(base))
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
	delete(f.tails, path)
	f.index(path, -1)
	f.mark(path, rewritten)
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

// TakeChanges returns the files changed since the previous call and
// forgets them. Files rewritten (created, replaced or deleted) are in
// rewritten, a nil value marking a deleted path; files only appended to are
// in appended, each holding just the text added since the previous call
// (and the file's current times).
func (f *Files) TakeChanges() (rewritten map[string]*FileData, appended map[string]FileData) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.changed) == 0 {
		return nil, nil
	}
	for p, c := range f.changed {
		d, ok := f.m[p]
		switch {
		case !ok:
			if rewritten == nil {
				rewritten = make(map[string]*FileData, len(f.changed))
			}
			rewritten[p] = nil
		case c >= 0 && int(c) <= len(d.Content):
			if appended == nil {
				appended = make(map[string]FileData)
			}
			d.Content = d.Content[c:]
			appended[p] = d
		default:
			if rewritten == nil {
				rewritten = make(map[string]*FileData, len(f.changed))
			}
			rewritten[p] = &d
		}
	}
	f.changed = nil
	return rewritten, appended
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
				f.index(p, -1)
				f.mark(p, rewritten)
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
	f.reindex()
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

// parentDir returns the directory holding the clean absolute path p ("/"
// for "/").
func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}
