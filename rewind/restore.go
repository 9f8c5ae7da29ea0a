package rewind

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
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
	// Unrestorable are files recorded by their hash alone (too large, or
	// binary) that differ now: left as they are.
	Unrestorable []string
}

// RestoreOptions change a Restore.
type RestoreOptions struct {
	// Force puts back what changed outside the agent too.
	Force bool
	// DryRun changes nothing: the Plan says what would change.
	DryRun bool
}

// Restore puts the folder back as it was at the thread's point seq, and
// records the result as a point. See Plan for what it leaves.
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
	cur, err := t.scan(ctx, ts.tree)
	if err != nil {
		return nil, err
	}
	// What changed outside the agent since the point: at the turns after
	// it (between runs), and since the agent's last step.
	outside := make(map[string]bool)
	for _, p := range ts.points[seq:] {
		if p.Kind == KindTurn {
			for path := range p.Changes {
				outside[path] = true
			}
		}
	}
	for path := range diff(ts.tree, cur.tree) {
		outside[path] = true
	}
	plan := &Plan{To: ts.points[seq-1]}
	var write, remove []string
	for _, p := range slices.Sorted(keysOf(target, cur.tree)) {
		want, inTarget := target[p]
		have, inCur := cur.tree[p]
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
	plan.Written, plan.Removed = write, remove
	if opts.DryRun {
		return plan, nil
	}
	kept, err := t.apply(ctx, target, cur.tree, write, remove)
	if len(kept) > 0 {
		plan.Written = slices.DeleteFunc(plan.Written, func(p string) bool { return slices.Contains(kept, p) })
		plan.Kept = append(plan.Kept, kept...)
		slices.Sort(plan.Kept)
	}
	// What the folder is now, even after a restore that stopped part
	// way: the next restore starts from it, not from a guess.
	_, rerr := t.record(context.WithoutCancel(ctx), threadID, ts, KindRestore, "", plan.To.CheckpointID)
	if err != nil {
		return plan, fmt.Errorf("%w (of %d to put back and %d to remove): %w", ErrPartial, len(plan.Written), len(plan.Removed), err)
	}
	return plan, rerr
}

// ErrPartial marks a restore that stopped part way: the folder holds some
// of the point's entries, and a point records it as it is.
var ErrPartial = errors.New("rewind: the restore stopped part way")

// apply removes, deepest first, then writes, shallowest first. A folder
// to replace by a file or a link that still holds entries (kept, ignored,
// not recorded) is left as it is: kept says which.
func (t *Tracker) apply(ctx context.Context, target, cur map[string]Entry, write, remove []string) (kept []string, err error) {
	slices.SortFunc(remove, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, p := range remove {
		name := filepath.FromSlash(p)
		if fs.FileMode(cur[p].Mode).IsDir() {
			// A folder goes when what it held went; one that still holds
			// what was not recorded (ignored files) stays.
			if err := t.root.Remove(name); err != nil && !isNotEmpty(err) && !isNotExist(err) {
				return kept, fmt.Errorf("rewind: removing %s: %w", p, err)
			}
			continue
		}
		if err := t.root.Remove(name); err != nil && !isNotExist(err) {
			return kept, fmt.Errorf("rewind: removing %s: %w", p, err)
		}
	}
	slices.SortFunc(write, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })
	for _, p := range write {
		if err := ctx.Err(); err != nil {
			return kept, err
		}
		err := t.put(ctx, p, target[p], cur)
		if isNotEmpty(err) {
			kept = append(kept, p)
			continue
		}
		if err != nil {
			return kept, fmt.Errorf("rewind: restoring %s: %w", p, err)
		}
	}
	return kept, nil
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
		data, err := t.blob(ctx, e.Hash)
		if err != nil {
			return err
		}
		// Written beside it, then renamed over it: a crash leaves the old
		// file or the new one, never half of one, and a link (hard or
		// symbolic) where it was is replaced, not written through.
		tmp := fmt.Sprintf("%s.rewind-%d", name, time.Now().UnixNano())
		if err := t.root.WriteFile(tmp, data, mode.Perm()); err != nil {
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
