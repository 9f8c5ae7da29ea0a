package isolate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/deepagents-go/deepagents/backend"
)

// Mode says whether, and how, a subagent gets a workspace of its own.
type Mode string

// Modes.
const (
	// Auto isolates a subagent when it runs beside others (parallel
	// task calls), in a git worktree where the folder is a
	// repository's top level, in a copy elsewhere; a subagent that runs
	// alone shares its caller's folder. It is the default ("").
	Auto Mode = "auto"
	// None shares the caller's folder, always.
	None Mode = "none"
	// Worktree isolates the subagent always: in a git worktree where
	// the folder is a repository's top level, in a copy elsewhere.
	Worktree Mode = "worktree"
	// Copy isolates the subagent always, in a copy of the folder.
	Copy Mode = "copy"
)

// ErrMode is returned by ParseMode for a name that is no Mode.
var ErrMode = errors.New("isolate: unknown isolation mode")

// ErrTooLarge is returned by Fork for a folder that holds more than
// Options allow a copy to hold.
var ErrTooLarge = errors.New("isolate: the folder is too large to copy")

// ParseMode returns the Mode named s ("" is Auto).
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return Auto, nil
	case Auto, None, Worktree, Copy:
		return m, nil
	}
	return "", fmt.Errorf("%w %q (want none, auto, worktree or copy)", ErrMode, s)
}

// Defaults of Options.
const (
	DefaultMaxFiles       = 50_000
	DefaultMaxBytes int64 = 1 << 30
)

// Options configures Fork.
type Options struct {
	// TempDir is where workspaces are made; empty means os.TempDir().
	// It must not be below the folder.
	TempDir string
	// Label names the workspace in conflict markers and in the names
	// of the files saved beside a conflict ("subagent-" + Label): the
	// subagent and its call, say. Empty means "subagent".
	Label string
	// MaxFiles and MaxBytes bound what a copy holds, and what of the
	// folder a git worktree's snapshot adds to the repository's objects
	// (its untracked files, not ignored): Fork fails with ErrTooLarge
	// past them. Zero means DefaultMaxFiles and DefaultMaxBytes.
	MaxFiles int
	MaxBytes int64
	// Logger receives what failed while a workspace was removed; nil
	// is slog.Default().
	Logger *slog.Logger
	// Group, when set, makes the git worktrees of its forks start from
	// one commit: the folder as the group's first fork found it, so that
	// siblings that start while one of them already merged back still
	// start where it did (a turn's parallel task calls). A copy starts
	// from the folder as it is.
	Group *Group
}

// Group is forks of one folder that start from one state of it (see
// Options.Group). Its zero value is ready; it is safe for concurrent use.
type Group struct {
	mu     sync.Mutex
	commit string // the base of its worktrees, once the first is made
}

// Kind is how a Workspace holds its copy of the folder.
type Kind string

// Kinds.
const (
	KindWorktree Kind = "git worktree"
	KindCopy     Kind = "copy"
)

// Workspace is a subagent's copy of a folder: Root is where its tools
// work (give the subagent's run Redirect's context), Merge brings its
// changes back.
type Workspace struct {
	// Dir is the folder forked; Root the workspace's folder.
	Dir, Root string
	// Kind is how Root was made.
	Kind Kind

	label    string
	temp     string // the folder made under TempDir, holding Root (and the base of a copy)
	base     base
	baseList map[string]entry // the workspace's files as they were made
	redirect *backend.Redirect
	git      string // the repository's top level, for a worktree
	log      *slog.Logger
}

// Fork makes a workspace of dir as mode says (Worktree, Copy, or Auto,
// which is Worktree here).
func Fork(ctx context.Context, dir string, mode Mode, opts Options) (*Workspace, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("isolate: %w", err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("isolate: %s is not a folder (%v)", dir, err)
	}
	tmp := opts.TempDir
	if tmp == "" {
		tmp = os.TempDir()
	}
	if rel, err := filepath.Rel(realPath(dir), realPath(tmp)); err == nil && filepath.IsLocal(rel) || rel == "." {
		return nil, fmt.Errorf("isolate: the workspaces' folder %s is below %s", tmp, dir)
	}
	temp, err := os.MkdirTemp(tmp, "deepagents-isolate-")
	if err != nil {
		return nil, fmt.Errorf("isolate: %w", err)
	}
	w := &Workspace{Dir: dir, label: cmpOr(opts.Label, "subagent"), temp: temp, log: opts.Logger}
	if w.log == nil {
		w.log = slog.Default()
	}
	ok := false
	defer func() {
		if !ok {
			w.removeAll()
		}
	}()
	made := false
	if mode != Copy {
		if top, ok := gitTop(ctx, dir); ok {
			err := w.forkGit(ctx, top, opts)
			switch {
			case errors.Is(err, ErrTooLarge):
				return nil, err // a copy would hold more still
			case err != nil:
				w.log.Debug("isolate: no git worktree; copying instead", "dir", dir, "err", err)
			default:
				made = true
			}
		}
	}
	if !made {
		if err := w.forkCopy(opts); err != nil {
			return nil, err
		}
	}
	if w.baseList, err = walk(w.Root, 0, 0); err != nil {
		return nil, fmt.Errorf("isolate: the workspace: %w", err)
	}
	if w.redirect, err = backend.NewRedirect(dir, w.Root); err != nil {
		return nil, err
	}
	ok = true
	return w, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// limits are MaxFiles and MaxBytes, their defaults for zero.
func (o Options) limits() (int, int64) {
	maxFiles, maxBytes := o.MaxFiles, o.MaxBytes
	if maxFiles <= 0 {
		maxFiles = DefaultMaxFiles
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return maxFiles, maxBytes
}

// forkCopy copies the folder to temp/work, and again to temp/base, the
// merge's base.
func (w *Workspace) forkCopy(opts Options) error {
	maxFiles, maxBytes := opts.limits()
	// It is copied twice (the workspace and the merge's base).
	ents, err := walk(w.Dir, maxFiles, maxBytes/2)
	if errors.Is(err, errLimit) {
		return fmt.Errorf("%w (more than %d files or %d bytes, the most a copy holds)", ErrTooLarge, maxFiles, maxBytes/2)
	}
	if err != nil {
		return fmt.Errorf("isolate: %w", err)
	}
	// The base is copied from the folder, which may change meanwhile, and
	// the workspace from the base: both are the same snapshot, so the
	// merge sees as the subagent's only what the subagent changed.
	work, baseDir := filepath.Join(w.temp, "work"), filepath.Join(w.temp, "base")
	for _, c := range []struct{ from, to string }{{w.Dir, baseDir}, {baseDir, work}} {
		if err := os.Mkdir(c.to, 0o700); err != nil {
			return fmt.Errorf("isolate: %w", err)
		}
		if err := copyTree(c.from, c.to, ents); err != nil {
			return fmt.Errorf("isolate: copying %s: %w", w.Dir, err)
		}
	}
	w.Root, w.Kind, w.base = work, KindCopy, dirBase(baseDir)
	return nil
}

// Redirect returns the redirect of the folder's backends to the
// workspace, for the subagent's run (backend.WithRedirect).
func (w *Workspace) Redirect() *backend.Redirect { return w.redirect }

// Remove removes the workspace, whatever it holds: call it once Merge
// brought everything back (Report.Kept is false), or to drop the
// subagent's work.
func (w *Workspace) Remove() error {
	if w.redirect != nil {
		_ = w.redirect.Close()
	}
	return w.removeAll()
}

func (w *Workspace) removeAll() error {
	if w.git != "" && w.Root != "" {
		if out, err := gitCmd(context.Background(), w.git, nil, "worktree", "remove", "--force", w.Root); err != nil {
			w.log.Debug("isolate: git worktree remove", "err", err, "out", out)
		}
	}
	err := os.RemoveAll(w.temp)
	if w.git != "" {
		_, _ = gitCmd(context.Background(), w.git, nil, "worktree", "prune")
	}
	if err != nil {
		return fmt.Errorf("isolate: removing %s: %w", w.temp, err)
	}
	return nil
}

// base is the folder as it was at the fork, for the merge.
type base interface {
	// read returns the file at rel; ok is false when it had none.
	read(ctx context.Context, rel string) (b []byte, ok bool, err error)
}

type dirBase string

func (d dirBase) read(_ context.Context, rel string) ([]byte, bool, error) {
	b, err := readRegular(filepath.Join(string(d), filepath.FromSlash(rel)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	return b, err == nil, err
}

// readRegular reads a regular file, never through a link.
func readRegular(p string) ([]byte, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", p, os.ErrNotExist)
	}
	return os.ReadFile(p)
}
