package rewind

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Plan is what a Restore does (or, with DryRun, would do).
type Plan struct {
	// To is the point restored.
	To *Point
	// Written are the entries put back as they were; Removed those the
	// point did not have.
	Written, Removed []string
	// Kept are the entries changed outside the agent since the point
	// (between its runs, or after its last step), left as they are
	// unless the restore is forced.
	Kept []string
	// Unrestorable are files the restore cannot put back or would lose,
	// left as they are: the point's content, or the one there now, was
	// recorded by its hash alone (over MaxFileBytes, or past the thread's
	// MaxThreadBytes).
	Unrestorable []string
	// NotEmpty are folders the point did not have that still hold what no
	// point records (ignored files, say): left in place, with it.
	NotEmpty []string
}

// RestoreOptions change a Restore.
type RestoreOptions struct {
	// Force puts back what changed outside the agent too.
	Force bool
	// DryRun changes nothing: the Plan says what would change.
	DryRun bool
	// Head is the conversation's checkpoint now, recorded with the point
	// of the folder as the restore finds it (KindEnd): a rewind back to
	// that point puts both back.
	Head string
}

// Restore puts the folder back as it was at the thread's point seq. It
// first records the folder as it finds it (KindEnd: what it changes can
// be put back), then the result (KindRestore). See Plan for what it
// leaves.
func (t *Tracker) Restore(ctx context.Context, threadID string, seq int, opts RestoreOptions) (*Plan, error) {
	ts, err := t.thread(ctx, threadID)
	if err != nil {
		return nil, err
	}
	defer ts.mu.Unlock()
	if seq < 1 || seq > len(ts.points) {
		return nil, fmt.Errorf("rewind: thread %s has no point %d (it has %d)", threadID, seq, len(ts.points))
	}
	// Points of another folder, or of none, say nothing of this one: put
	// back as they say, everything they do not list would go.
	if dir := ts.points[len(ts.points)-1].Dir; dir != t.dir {
		if t.root == nil || dir == "" {
			return &Plan{To: ts.points[seq-1]}, nil // no files recorded: nothing to put back
		}
		return nil, fmt.Errorf("rewind: thread %s's points are of the folder %s, not %s", threadID, dir, t.dir)
	}
	if t.root == nil {
		return &Plan{To: ts.points[seq-1]}, nil // the files are the thread's state
	}
	target := treeAt(ts.points, seq)
	// What changed outside the agent since the point: at the turns after
	// it (between runs), and since the agent's last step, which the end
	// point records (a dry run scans instead).
	outside := make(map[string]bool)
	var cur map[string]Entry
	if opts.DryRun {
		s, err := t.scan(ctx, ts.tree)
		if err != nil {
			return nil, err
		}
		cur = s.tree
		for path := range s.changes {
			outside[path] = true
		}
	} else {
		if _, err := t.record(ctx, threadID, ts, KindEnd, "", opts.Head, nil); err != nil {
			return nil, err
		}
		// Every point the restore may read a content of is in the store.
		if err := t.flush(ctx, threadID, ts); err != nil {
			return nil, err
		}
		cur = ts.tree
	}
	for _, p := range ts.points[seq:] {
		if p.Kind == KindTurn || p.Kind == KindEnd {
			for path := range p.Changes {
				outside[path] = true
			}
		}
	}
	plan := &Plan{To: ts.points[seq-1]}
	var write, remove []string
	for _, p := range slices.Sorted(keysOf(target, cur)) {
		want, inTarget := target[p]
		have, inCur := cur[p]
		if inTarget && !inCur && !opts.Force {
			// The scan did not see it (ignored now, unreadable, past
			// MaxFiles): what is there is not the agent's to replace.
			if _, err := t.root.Lstat(filepath.FromSlash(p)); err == nil {
				outside[p] = true
			}
		}
		switch {
		case inTarget && inCur && want.same(have):
			continue
		case outside[p] && !opts.Force:
			plan.Kept = append(plan.Kept, p)
		case inCur && fs.FileMode(have.Mode).IsRegular() && !have.Stored:
			// What is there could not be put back: it stays.
			plan.Unrestorable = append(plan.Unrestorable, p)
		case !inTarget:
			remove = append(remove, p)
		case fs.FileMode(want.Mode).IsRegular() && !want.Stored:
			plan.Unrestorable = append(plan.Unrestorable, p)
		default:
			write = append(write, p)
		}
	}
	// An entry kept, or not restorable, keeps the folders above it.
	keep := make(map[string]bool)
	for _, p := range slices.Concat(plan.Kept, plan.Unrestorable) {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			keep[d] = true
		}
	}
	remove = slices.DeleteFunc(remove, func(p string) bool { return keep[p] })
	remove, plan.NotEmpty = t.holding(remove, cur)
	plan.Written, plan.Removed = write, remove
	if opts.DryRun {
		return plan, nil
	}
	kept, held, err := t.apply(ctx, target, cur, write, remove)
	if len(kept) > 0 {
		plan.Written = slices.DeleteFunc(plan.Written, func(p string) bool { return slices.Contains(kept, p) })
		plan.Kept = append(plan.Kept, kept...)
		slices.Sort(plan.Kept)
	}
	if len(held) > 0 {
		plan.Removed = slices.DeleteFunc(plan.Removed, func(p string) bool { return slices.Contains(held, p) })
		plan.NotEmpty = append(plan.NotEmpty, held...)
		slices.Sort(plan.NotEmpty)
	}
	// What the folder is now, even after a restore that stopped part
	// way: the next restore starts from it, not from a guess.
	_, rerr := t.record(context.WithoutCancel(ctx), threadID, ts, KindRestore, "", plan.To.CheckpointID, nil)
	if rerr == nil {
		rerr = t.flush(ctx, threadID, ts)
	}
	if err != nil {
		return plan, fmt.Errorf("%w (of %d to put back and %d to remove): %w", ErrPartial, len(plan.Written), len(plan.Removed), err)
	}
	return plan, rerr
}

// ErrPartial marks a restore that stopped part way: the folder holds some
// of the point's entries, and a point records it as it is.
var ErrPartial = errors.New("rewind: the restore stopped part way")

// holding splits the entries to remove: the folders among them that
// would still hold something once the others are gone (what no point
// records: ignored files, say) stay, and are returned apart.
func (t *Tracker) holding(remove []string, cur map[string]Entry) (gone, held []string) {
	going := make(map[string]bool, len(remove))
	for _, p := range remove {
		going[p] = true
	}
	// Deepest first: a folder that stays keeps its parent.
	order := slices.Clone(remove)
	slices.SortFunc(order, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, p := range order {
		if !fs.FileMode(cur[p].Mode).IsDir() {
			continue
		}
		// Without blocking: a FIFO put in the folder's place would hold
		// the restore, and the thread with it.
		f, err := t.root.OpenFile(filepath.FromSlash(p), os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			continue
		}
		names, _ := f.Readdirnames(-1)
		f.Close()
		if slices.ContainsFunc(names, func(n string) bool { return !going[path.Join(p, n)] }) {
			going[p] = false
			held = append(held, p)
		}
	}
	for _, p := range remove {
		if going[p] {
			gone = append(gone, p)
		}
	}
	slices.Sort(held)
	return gone, held
}

// apply removes, deepest first, then writes, shallowest first. A folder
// to replace by a file or a link that still holds entries (kept, ignored,
// not recorded) is left as it is: kept says which; held are the folders
// to remove that still held something.
func (t *Tracker) apply(ctx context.Context, target, cur map[string]Entry, write, remove []string) (kept, held []string, err error) {
	slices.SortFunc(remove, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, p := range remove {
		name := filepath.FromSlash(p)
		if fs.FileMode(cur[p].Mode).IsDir() {
			// A folder goes when what it held went; one that still holds
			// what was not recorded (ignored files) stays.
			err := t.root.Remove(name)
			if isNotEmpty(err) {
				held = append(held, p)
			} else if err != nil && !isNotExist(err) {
				return kept, held, fmt.Errorf("rewind: removing %s: %w", p, err)
			}
			continue
		}
		if err := t.root.Remove(name); err != nil && !isNotExist(err) {
			return kept, held, fmt.Errorf("rewind: removing %s: %w", p, err)
		}
	}
	slices.SortFunc(write, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })
	for _, p := range write {
		if err := ctx.Err(); err != nil {
			return kept, held, err
		}
		err := t.put(ctx, p, target[p], cur)
		if isNotEmpty(err) {
			kept = append(kept, p)
			continue
		}
		if err != nil {
			return kept, held, fmt.Errorf("rewind: restoring %s: %w", p, err)
		}
	}
	return kept, held, nil
}

// put writes one entry as target has it, replacing what is there.
func (t *Tracker) put(ctx context.Context, p string, e Entry, cur map[string]Entry) error {
	name := filepath.FromSlash(p)
	mode := fs.FileMode(e.Mode)
	if have, ok := cur[p]; ok && fs.FileMode(have.Mode).Type() != mode.Type() {
		// A folder goes only empty: what it still holds (kept, ignored)
		// keeps it, and the entry is not put back (ENOTEMPTY).
		if err := t.root.Remove(name); err != nil && !isNotExist(err) {
			return err
		}
	}
	if dir := filepath.Dir(name); dir != "." {
		if err := t.root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	switch {
	case mode.IsDir():
		if err := t.root.MkdirAll(name, mode.Perm()); err != nil {
			return err
		}
		return t.root.Chmod(name, mode.Perm())
	case mode&fs.ModeSymlink != 0:
		if err := t.root.Remove(name); err != nil && !isNotExist(err) {
			return err
		}
		return t.root.Symlink(e.Link, name)
	default:
		data := e.Data
		if data == nil && e.Size > 0 {
			var err error
			if data, err = t.blob(ctx, e.Hash); err != nil {
				return err
			}
		}
		// Written beside it, then renamed over it: a crash leaves the old
		// file or the new one, never half of one, and a link (hard or
		// symbolic) where it was is replaced, not written through.
		tmp := fmt.Sprintf("%s.rewind-%d", name, time.Now().UnixNano())
		if err := t.writeNew(tmp, data, mode.Perm()); err != nil {
			return err
		}
		if err := t.root.Chmod(tmp, mode.Perm()); err != nil {
			t.root.Remove(tmp) //nolint:errcheck // the error reported is the chmod's
			return err
		}
		if err := t.root.Rename(tmp, name); err != nil {
			t.root.Remove(tmp) //nolint:errcheck // the error reported is the rename's
			return err
		}
		return nil
	}
}

// writeNew writes data to a new file at name, never to what is there (a
// link planted at the name, say).
func (t *Tracker) writeNew(name string, data []byte, perm fs.FileMode) error {
	f, err := t.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

func keysOf(a, b map[string]Entry) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range a {
			if !yield(k) {
				return
			}
		}
		for k := range b {
			if _, ok := a[k]; ok {
				continue
			}
			if !yield(k) {
				return
			}
		}
	}
}
