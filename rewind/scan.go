package rewind

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/internal/gitignore"
)

// scanned is the folder as a scan found it: its entries, what changed
// since the tree it was scanned against, the contents read (files that
// changed, to be stored), and notes.
type scanned struct {
	tree     map[string]Entry
	changes  map[string]*Entry // nil for an entry gone
	contents map[string][]byte // by hash
	bytes    int               // of contents
	notes    []string
	gen      int64 // the index's walk or look that found it; 0 for neither
	// reported are the paths the backends reported (reported's), which
	// the notices of the same changes need not make anyone look at again.
	reported map[string]backend.Change
}

// newScanned is a look to come, or with walk a walk, whose tree it makes
// room for size entries in.
func newScanned(walk bool, size int) *scanned {
	s := &scanned{changes: make(map[string]*Entry), contents: make(map[string][]byte)}
	if walk {
		s.tree = make(map[string]Entry, size)
	}
	return s
}

// maxGitignore bounds a .gitignore read: a hostile repository's costs the
// scan, every time it changes.
const maxGitignore = 256 << 10

// maxPointBytes bounds the contents one point reads and stores (its first,
// the whole folder, above all): past it, files are recorded by hash.
const maxPointBytes = 256 << 20

// scan walks the whole folder: folders, files and links, .gitignore
// honoured, .git left out; a file whose stat is the one its hash was
// recorded with is not read.
func (t *Tracker) scan(ctx context.Context, prev map[string]Entry) (*scanned, error) {
	s := newScanned(true, len(prev))
	if t.root == nil {
		for p := range prev {
			s.changes[p] = nil
		}
		return s, nil // no folder: nothing to record
	}
	t.idx.mu.Lock()
	defer t.idx.mu.Unlock()
	if err := t.walk(ctx, prev, s); err != nil {
		return nil, fmt.Errorf("rewind: scanning %s: %w", t.dir, err)
	}
	return s, nil
}

// reported returns what the changes the backends reported changed in the
// folder, from prev (the thread's tree as of its last point), by looking
// at those paths alone: a stat each, and each folder above one that prev
// does not have. ok is false when only a walk can tell: the folder was
// never walked by this Tracker, a .gitignore changed, or prev is at
// MaxFiles.
func (t *Tracker) reported(ctx context.Context, prev map[string]Entry, changes []backend.Change) (s *scanned, out map[string]*Entry, ok bool) {
	t.idx.mu.Lock()
	defer t.idx.mu.Unlock()
	if !t.idx.scanned || len(prev) >= t.cfg.MaxFiles {
		return nil, nil, false
	}
	s, out = newScanned(false, 0), make(map[string]*Entry)
	var paths []string
	infos := make(map[string]backend.Change)
	for _, c := range changes {
		rel, inside := t.rel(c.Path)
		if !inside || rel == "." {
			continue // another backend's folder
		}
		if path.Base(rel) == ".gitignore" {
			return nil, nil, false // what is ignored changed
		}
		if _, seen := infos[rel]; !seen {
			paths = append(paths, rel)
		}
		infos[rel] = c
		if c.Content != nil {
			t.seed(rel, c, s)
		}
	}
	ign := t.ignoring()
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, nil, false
		}
		if ignoredPath(ign, p, infos[p].Info != nil && infos[p].Info.IsDir()) {
			continue
		}
		// The folders above it that the last point did not have: made by
		// the write (reported), or by something else since.
		var above []string
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if _, known := prev[d]; known {
				break
			}
			if _, known := out[d]; known {
				break
			}
			above = append(above, d)
		}
		for i := len(above) - 1; i >= 0; i-- {
			t.look(above[i], infos[above[i]], prev, s, out)
		}
		t.look(p, infos[p], prev, s, out)
	}
	s.reported = infos
	return s, out, true
}

// look records into out what the entry at p is now, if it is not what
// prev has: as the backend reported it (c), or as a stat finds it when
// the report does not tell.
func (t *Tracker) look(p string, c backend.Change, prev map[string]Entry, s *scanned, out map[string]*Entry) {
	old, had := prev[p]
	e, ok := t.told(p, c, s)
	var err error
	if !ok {
		e, ok, err = t.statEntry(p, s, old)
	}
	switch {
	case err != nil && had:
		out[p] = nil // gone
	case err != nil || !ok:
	case !had || !old.same(e):
		out[p] = &e
	}
}

// seed records a reported file's content (the observer's copy) in the
// index under the stat the backend reported, so that the look after it
// reads nothing when the file is still as written.
func (t *Tracker) seed(p string, c backend.Change, s *scanned) {
	sg, ok := reportedSig(c.Info)
	if !ok || int64(len(c.Content)) != sg.size || sg.size > t.cfg.MaxFileBytes {
		return
	}
	var e Entry
	t.content(p, &e, sg, c.Content, s)
}

// inlineBytes is the largest content a point keeps in itself (Entry.Data)
// rather than as a blob of its own.
const inlineBytes = 512

// content records data as the content of the file at p, whose stat is sg:
// its hash, and the content itself, in the entry when it is small, in s
// otherwise, to be stored with the point.
func (t *Tracker) content(p string, e *Entry, sg sig, data []byte, s *scanned) {
	sum := sha256.Sum256(data)
	e.Hash = hex.EncodeToString(sum[:])
	if len(data) <= inlineBytes {
		e.Data, e.Stored = data, true
		t.idx.files[p] = known{sig: sg, hash: e.Hash, stored: true, inline: data}
		return
	}
	t.idx.files[p] = known{sig: sg, hash: e.Hash}
	if _, ok := s.contents[e.Hash]; ok {
		e.Stored = true
		return
	}
	if s.bytes+len(data) > maxPointBytes {
		t.idx.files[p] = known{sig: sg, hash: e.Hash, refused: true}
		s.notes = append(s.notes, fmt.Sprintf("%s: the point's contents passed %d MiB: recorded by its hash, not restorable", p, maxPointBytes>>20))
		return
	}
	e.Stored = true
	s.contents[e.Hash] = data
	s.bytes += len(data)
}

// bigFile records a file over MaxFileBytes: not read at all, however
// large, and known by its size and time, which tell a change as a hash
// would.
func (t *Tracker) bigFile(p string, e *Entry, sg sig, s *scanned) {
	e.Hash = fmt.Sprintf("stat:%d:%d", e.Size, e.MTime)
	t.idx.files[p] = known{sig: sg, hash: e.Hash, refused: true}
	s.notes = append(s.notes, fmt.Sprintf("%s (%d bytes) is over %d bytes: recorded by its size and time, not restorable", p, e.Size, t.cfg.MaxFileBytes))
}

// rel is the host path p relative to the folder, slash-separated; inside
// is false for a path outside it.
func (t *Tracker) rel(p string) (string, bool) {
	rel, err := filepath.Rel(t.dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// ignoring is a matcher of every .gitignore the last walk read, in the
// walk's order (a folder's before those below it, which override it),
// made once per walk.
func (t *Tracker) ignoring() *gitignore.Matcher {
	if t.idx.matcher != nil {
		return t.idx.matcher
	}
	bases := slices.SortedFunc(maps.Keys(t.idx.ignores), func(a, b string) int {
		return cmp.Or(cmp.Compare(depth(a), depth(b)), strings.Compare(a, b))
	})
	m := new(gitignore.Matcher)
	for _, base := range bases {
		if g := t.idx.ignores[base]; g.file != nil {
			m.AddFile(g.file)
		}
	}
	t.idx.matcher = m
	return m
}

// depth is how many folders down the folder base is ("" for the root).
func depth(base string) int {
	if base == "" {
		return 0
	}
	return strings.Count(base, "/") + 1
}

// ignoredPath reports whether a walk would leave p out: it, or a folder
// above it, is .git or ignored; isDir says p is a folder.
func ignoredPath(ign *gitignore.Matcher, p string, isDir bool) bool {
	for start := 0; ; {
		end := strings.IndexByte(p[start:], '/')
		last := end < 0
		if last {
			end = len(p)
		} else {
			end += start
		}
		if p[start:end] == ".git" || ign.Ignored(p[:end], isDir || !last) {
			return true
		}
		if last {
			return false
		}
		start = end + 1
	}
}
