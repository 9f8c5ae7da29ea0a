package isolate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/deepagents-go/deepagents/backend"
)

// Report is what a Merge did: the paths are the folder's, slash-separated
// and relative to it.
type Report struct {
	// Kind is how the workspace was made.
	Kind Kind
	// Applied are the files only the subagent changed (or made), as it
	// left them; Removed those it removed.
	Applied, Removed []string
	// Merged are files the folder changed too since the fork, merged
	// line by line without a conflict.
	Merged []string
	// Conflicts are the files that could not be merged.
	Conflicts []Conflict
	// Skipped are links and special files the subagent made or changed:
	// never carried back.
	Skipped []string
	// Errors are the files a write failed for; the workspace is kept
	// then, at Kept.
	Errors []string
	// Kept is the workspace's folder when it was not removed (something
	// in it could not be brought back); "" once removed.
	Kept string
}

// Conflict is a file the subagent and the folder both changed, in a way
// no merge can combine.
type Conflict struct {
	Path string
	// Hunks are the regions both changed differently, a text file's:
	// the file now holds both versions of each between conflict markers
	// (<<<<<<< the folder's, ======= then the subagent's, >>>>>>>).
	Hunks []Hunk
	// SavedAs is where the subagent's version was saved, beside the
	// file, when the file could not hold both (a binary file, one the
	// folder removed, or one that is not a regular file there); the file
	// is then as the folder has it.
	SavedAs string
	// Reason says why, in a few words.
	Reason string
}

// Changed reports whether the merge changed the folder.
func (r *Report) Changed() bool {
	if len(r.Applied)+len(r.Removed)+len(r.Merged) > 0 {
		return true
	}
	for _, c := range r.Conflicts {
		if len(c.Hunks) > 0 || c.SavedAs != "" {
			return true
		}
	}
	return false
}

// Paths returns the paths the merge wrote or removed in the folder.
func (r *Report) Paths() []string {
	out := slices.Concat(r.Applied, r.Removed, r.Merged)
	for _, c := range r.Conflicts {
		if len(c.Hunks) > 0 {
			out = append(out, c.Path)
		}
		if c.SavedAs != "" {
			out = append(out, c.SavedAs)
		}
	}
	slices.Sort(out)
	return out
}

// merging serialises the merges into each folder.
var merging sync.Map // folder -> *sync.Mutex

// Merge brings the workspace's changes back into the folder, as the
// package comment says, and removes the workspace when nothing was left
// in it (Report.Kept says where it is otherwise). Merges into one folder
// run one at a time. The writes go through os.Root (never through a link
// out of the folder), and each is reported to ctx's observer
// (backend.WithChanges).
func (w *Workspace) Merge(ctx context.Context) (*Report, error) {
	mu, _ := merging.LoadOrStore(w.Dir, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	rep := &Report{Kind: w.Kind}
	theirs, err := walk(w.Root, 0, 0)
	if err != nil {
		rep.Kept = w.Root
		return rep, fmt.Errorf("isolate: the workspace: %w", err)
	}
	root, err := os.OpenRoot(w.Dir)
	if err != nil {
		rep.Kept = w.Root
		return rep, fmt.Errorf("isolate: %w", err)
	}
	defer root.Close()
	var paths []string
	for p, e := range theirs {
		if b, ok := w.baseList[p]; !ok || b.key != e.key {
			paths = append(paths, p)
		}
	}
	for p := range w.baseList {
		if _, ok := theirs[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			rep.Kept = w.Root
			return rep, err
		}
		// The folder's file is read and replaced under its lock: an
		// agent's edit of it meanwhile (a background task merges while
		// the main agent works) comes before or after, never between.
		unlock := backend.LockHostFile(filepath.Join(w.Dir, filepath.FromSlash(p)))
		err := w.mergeOne(ctx, root, rep, p, theirs)
		unlock()
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %v", p, err))
		}
	}
	if len(rep.Errors) > 0 {
		rep.Kept = w.Root
		return rep, nil
	}
	if err := w.Remove(); err != nil {
		rep.Kept = w.Root
		w.log.Warn("isolate: the workspace could not be removed", "dir", w.temp, "err", err)
	}
	return rep, nil
}

// mergeOne merges the path p the subagent changed.
func (w *Workspace) mergeOne(ctx context.Context, root *os.Root, rep *Report, p string, theirs map[string]entry) error {
	te, inTheirs := theirs[p]
	if inTheirs && !te.mode.IsRegular() {
		rep.Skipped = append(rep.Skipped, p)
		return nil
	}
	var tb []byte
	if inTheirs {
		var err error
		if tb, err = readRegular(w.Root + "/" + p); err != nil {
			return err
		}
	}
	bb, inBase, err := w.base.read(ctx, p)
	if err != nil {
		return err
	}
	if inBase == inTheirs && bytes.Equal(bb, tb) {
		return nil // touched, not changed
	}
	ob, inOurs, oursMode, err := readOurs(root, p)
	if err != nil {
		if errors.Is(err, errNotRegular) {
			return w.saveBeside(ctx, root, rep, p, tb, te.mode.Perm(), "it is no longer a regular file in the folder")
		}
		return err
	}
	switch {
	case inOurs == inBase && bytes.Equal(ob, bb): // only the subagent changed it
		if !inTheirs {
			if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			backend.Report(ctx, backend.Change{Path: w.Dir + "/" + p})
			rep.Removed = append(rep.Removed, p)
			return nil
		}
		if err := writeFile(ctx, root, w.Dir, p, tb, te.mode.Perm()); err != nil {
			return err
		}
		rep.Applied = append(rep.Applied, p)
		return nil
	case inOurs == inTheirs && bytes.Equal(ob, tb): // both the same way
		return nil
	case !inTheirs:
		rep.Conflicts = append(rep.Conflicts, Conflict{Path: p, Reason: "the subagent removed it, and the folder changed it since: kept as the folder has it"})
		return nil
	case !inOurs:
		return w.saveBeside(ctx, root, rep, p, tb, te.mode.Perm(), "the folder removed it since the subagent started, and the subagent changed it")
	case binary(bb) || binary(ob) || binary(tb):
		return w.saveBeside(ctx, root, rep, p, tb, te.mode.Perm(), "a binary file both changed")
	}
	merged, hunks := merge3(splitLines(bb), splitLines(ob), splitLines(tb), "the folder", w.label)
	if err := writeFile(ctx, root, w.Dir, p, []byte(strings.Join(merged, "")), oursMode); err != nil {
		return err
	}
	if len(hunks) == 0 {
		rep.Merged = append(rep.Merged, p)
		return nil
	}
	rep.Conflicts = append(rep.Conflicts, Conflict{Path: p, Hunks: hunks, Reason: "both changed the same lines"})
	return nil
}

// saveBeside saves the subagent's version of p beside it, as
// p.subagent-LABEL (a number after it when that exists), and records the
// conflict.
func (w *Workspace) saveBeside(ctx context.Context, root *os.Root, rep *Report, p string, content []byte, perm fs.FileMode, reason string) error {
	name := p + "." + safeLabel(w.label)
	for i := 2; ; i++ {
		if _, err := root.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			break
		}
		name = fmt.Sprintf("%s.%s-%d", p, safeLabel(w.label), i)
	}
	if err := writeFile(ctx, root, w.Dir, name, content, perm); err != nil {
		return err
	}
	rep.Conflicts = append(rep.Conflicts, Conflict{Path: p, SavedAs: name, Reason: reason})
	return nil
}

var unsafeLabel = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeLabel(l string) string {
	l = strings.Trim(unsafeLabel.ReplaceAllString(l, "-"), "-.")
	if l == "" {
		l = "subagent"
	}
	if len(l) > 60 {
		l = l[:60]
	}
	if !strings.HasPrefix(l, "subagent") {
		l = "subagent-" + l
	}
	return l
}

var errNotRegular = errors.New("not a regular file")

// readOurs reads the folder's file at p: absent, or a regular file (its
// content and permissions); errNotRegular for anything else.
func readOurs(root *os.Root, p string) ([]byte, bool, fs.FileMode, error) {
	st, err := root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, 0, nil
	}
	if err != nil {
		return nil, false, 0, err
	}
	if !st.Mode().IsRegular() {
		return nil, false, 0, errNotRegular
	}
	b, err := root.ReadFile(p)
	return b, err == nil, st.Mode().Perm(), err
}

// writeFile replaces the folder's file p with content, atomically (a
// temporary file renamed over it), making its folders.
func writeFile(ctx context.Context, root *os.Root, dir, p string, content []byte, perm fs.FileMode) error {
	if perm == 0 {
		perm = 0o644
	}
	if d := path.Dir(p); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	tmp := fmt.Sprintf("%s.deepagents-merge-%d", p, os.Getpid())
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		_ = root.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	if err := root.Rename(tmp, p); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	backend.Report(ctx, backend.Change{Path: dir + "/" + p, Content: content})
	return nil
}

// binary reports whether b looks binary: a NUL byte in its first 8 KiB.
func binary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8<<10)], 0) >= 0
}
