//go:build unix

package backend

import (
	"context"
	"github.com/deepagents-go/deepagents/internal/search"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// dirRef is an open directory shared by the walk items of its children; the
// last one to open its child closes it.
type dirRef struct {
	fd   int
	refs atomic.Int32
}

func (d *dirRef) release() {
	if d.refs.Add(-1) == 0 {
		unix.Close(d.fd)
	}
}

// walkItem is a directory waiting to be read: either already open (fd), or
// the child name of an open parent.
type walkItem struct {
	parent *dirRef
	fd     int
	name   string
	vpath  string
}

// walker reads a directory tree with a bounded set of workers sharing a
// stack of pending directories. Each directory is opened relative to its
// parent's descriptor with O_NOFOLLOW, so the walk cannot leave the tree it
// started in, and at most the parents of pending directories stay open.
type walker struct {
	fs *FilesystemBackend

	// descend reports whether to enter the directory at vpath.
	descend func(vpath string) bool
	// file handles the regular file name in the open directory dirfd;
	// worker is the index of the calling worker.
	file func(worker, dirfd int, name, vpath string)

	mu    sync.Mutex
	cond  sync.Cond
	stack []walkItem
	busy  int
	stop  bool
	// stopped mirrors stop for checks that must not take the lock (between
	// pieces of one file's search).
	stopped atomic.Bool
}

// walkWorkers is the number of goroutines a walk uses.
func walkWorkers() int {
	return min(max(runtime.GOMAXPROCS(0), 1), 16)
}

// run walks the tree of the open directory fd (which it closes) at vpath.
func (w *walker) run(ctx context.Context, workers, fd int, vpath string) error {
	w.cond.L = &w.mu
	w.stack = append(w.stack, walkItem{fd: fd, vpath: vpath})
	stopWatch := context.AfterFunc(ctx, w.halt)
	defer stopWatch()
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() { w.work(i) })
	}
	wg.Wait()
	for _, it := range w.stack { // left over after a stop
		w.drop(it)
	}
	w.stack = nil
	return ctx.Err()
}

func (w *walker) drop(it walkItem) {
	if it.parent != nil {
		it.parent.release()
	} else {
		unix.Close(it.fd)
	}
}

func (w *walker) pop() (walkItem, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.stack) == 0 && w.busy > 0 && !w.stop {
		w.cond.Wait()
	}
	if w.stop || len(w.stack) == 0 {
		w.cond.Broadcast()
		return walkItem{}, false
	}
	it := w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
	w.busy++
	return it, true
}

func (w *walker) finish(children []walkItem) {
	w.mu.Lock()
	w.stack = append(w.stack, children...)
	w.busy--
	idle := w.busy == 0 && len(w.stack) == 0
	w.mu.Unlock()
	if idle || len(children) > 1 {
		w.cond.Broadcast()
	} else if len(children) == 1 {
		w.cond.Signal()
	}
}

func (w *walker) work(worker int) {
	var children []walkItem
	for {
		it, ok := w.pop()
		if !ok {
			return
		}
		children = w.visit(worker, it, children[:0])
		w.finish(children)
	}
}

// visit reads one directory, queues its subdirectories and handles its
// files.
func (w *walker) visit(worker int, it walkItem, children []walkItem) []walkItem {
	fd := it.fd
	if it.parent != nil {
		var err error
		fd, err = openat(it.parent.fd, it.name, oDir|unix.O_NOFOLLOW, 0)
		it.parent.release()
		if err != nil {
			return children // vanished, unreadable or a symlink: skip
		}
	}
	ref := &dirRef{fd: fd}
	ref.refs.Store(1)
	defer ref.release()
	entries, err := readNames(fd, w.fs.hostPath(it.vpath))
	if err != nil {
		return children
	}
	var files []string
	for _, e := range entries {
		if !e.isDir {
			files = append(files, e.name)
			continue
		}
		child := joinPath(it.vpath, e.name)
		if w.descend == nil || w.descend(child) {
			ref.refs.Add(1)
			children = append(children, walkItem{parent: ref, name: e.name, vpath: child})
		}
	}
	if len(children) > 0 { // let idle workers start on them now
		w.mu.Lock()
		w.stack = append(w.stack, children...)
		w.mu.Unlock()
		w.cond.Broadcast()
		children = children[:0]
	}
	for _, name := range files {
		if w.isStopped() {
			break
		}
		w.file(worker, fd, name, joinPath(it.vpath, name))
	}
	return children
}

// halt stops the walk: no more directories are read, no more files handled.
func (w *walker) halt() {
	w.mu.Lock()
	w.stop = true
	w.stopped.Store(true)
	w.mu.Unlock()
	w.cond.Broadcast()
}

func (w *walker) isStopped() bool { return w.stopped.Load() }

// grepWorker is one worker's reusable state.
type grepWorker struct {
	buf     []byte
	matches []GrepMatch
}

// grepper searches files for a Filesystem's Grep.
type grepper struct {
	m       *search.Matcher
	filter  fileFilter
	dir     string // the search path, for the filter
	maxSize int64
	files   bool // stop at each file's first match
	q       *GrepQuery
	// found counts matches across workers, for q.Limit.
	found atomic.Int64
	// stopped reports that the search is to end (cancelled, or enough
	// found); it is checked between pieces of a file.
	stopped func() bool
	// full is called once when q.Limit matches have been found.
	full func()
}

// searchFile searches name in dirfd, appending matches to gw.
func (g *grepper) searchFile(gw *grepWorker, dirfd int, name, vpath string) {
	if !g.filter.match(vpath, g.dir) {
		return
	}
	fd, err := openat(dirfd, name, oRead, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return
	}
	size := st.Size
	if g.maxSize >= 0 && size > g.maxSize {
		return
	}
	if int64(cap(gw.buf)) < size {
		gw.buf = make([]byte, max(size, 64<<10))
	}
	buf := gw.buf[:size]
	n := 0
	if size > 2*search.BinarySniffLen {
		// Look at the head first so that large binaries are not read whole.
		n, err = readFull(fd, buf[:search.BinarySniffLen])
		if err != nil || search.IsBinary(buf[:n]) {
			return
		}
		if n == search.BinarySniffLen {
			m, err := readFull(fd, buf[n:])
			if err != nil {
				return
			}
			n += m
		}
	} else if n, err = readFull(fd, buf); err != nil || search.IsBinary(buf[:n]) {
		return
	}
	g.m.Search(buf[:n], g.stopped, func(line int, text []byte) bool {
		gw.matches = append(gw.matches, g.q.match(vpath, line, text))
		if g.q.Limit > 0 && g.found.Add(1) == int64(g.q.Limit) {
			g.full()
			return false
		}
		return !g.files
	})
}

// Grep implements Backend. It walks the tree in parallel, skips binary files
// and files over the size limit, and searches each file's bytes in one
// pass (see matcher).
func (f *FilesystemBackend) Grep(ctx context.Context, q GrepQuery) ([]GrepMatch, error) {
	if g, err := f.at(ctx); err != nil {
		return nil, err
	} else if g != f {
		return g.Grep(ctx, q)
	}
	m, err := compileMatcher(q.Pattern)
	if err != nil {
		return nil, err
	}
	filter, err := newFileFilter(q.Glob)
	if err != nil {
		return nil, err
	}
	p, err := f.clean(q.Path)
	if err != nil {
		return nil, err
	}
	if err := f.guard("grep", p, AccessRead); err != nil {
		return nil, err
	}
	g := &grepper{m: m, filter: filter, dir: p, maxSize: f.maxSize, files: q.Mode == GrepFiles, q: &q}
	fd, err := f.openDir(p, nil)
	if err == unix.ENOTDIR && p != "/" { // perhaps a file
		dirfd, derr := f.openDir(parentDir(p), nil)
		if derr != nil {
			return nil, nil
		}
		defer unix.Close(dirfd)
		var gw grepWorker
		g.stopped = func() bool { return ctx.Err() != nil }
		g.full = func() {}
		g.searchFile(&gw, dirfd, baseName(p), p)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return gw.matches, nil // p itself passed the guard
	}
	if err != nil {
		return nil, walkErr("grep", p, err)
	}
	workers := walkWorkers()
	gws := make([]grepWorker, workers)
	w := &walker{fs: f, file: func(worker, dirfd int, name, vpath string) {
		g.searchFile(&gws[worker], dirfd, name, vpath)
	}}
	g.stopped, g.full = w.isStopped, w.halt
	if err := w.run(ctx, workers, fd, p); err != nil {
		return nil, err
	}
	var n int
	for i := range gws {
		n += len(gws[i].matches)
	}
	out := make([]GrepMatch, 0, n)
	for i := range gws {
		out = append(out, gws[i].matches...)
	}
	if len(f.unreadable) > 0 {
		out = slices.DeleteFunc(out, func(m GrepMatch) bool { return f.hidden(m.Path) })
	}
	slices.SortStableFunc(out, func(a, b GrepMatch) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return q.cap(out), nil
}

// walkErr maps the error of opening a walk's start: a missing directory
// gives no results, anything else an error.
func walkErr(op, p string, err error) error {
	if err == unix.ENOENT || err == unix.ENOTDIR {
		return nil
	}
	return fsErr(op, p, err)
}

// Glob implements Backend.
func (f *FilesystemBackend) Glob(ctx context.Context, pattern, path string) ([]FileInfo, error) {
	if g, err := f.at(ctx); err != nil {
		return nil, err
	} else if g != f {
		return g.Glob(ctx, pattern, path)
	}
	p, err := f.clean(path)
	if err != nil {
		return nil, err
	}
	if err := f.guard("glob", p, AccessRead); err != nil {
		return nil, err
	}
	g, err := newGlobSpec(pattern, p)
	if err != nil || g.empty {
		return nil, err
	}
	fd, err := f.openDir(g.root, nil)
	if err == unix.ENOTDIR && g.root == p && p != "/" { // the path names a file
		dirfd, derr := f.openDir(parentDir(p), nil)
		if derr != nil {
			return nil, nil
		}
		defer unix.Close(dirfd)
		var st unix.Stat_t
		if !g.match(p) || unix.Fstatat(dirfd, baseName(p), &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return nil, nil
		}
		return []FileInfo{{Path: p, Size: st.Size, ModTime: statTime(&st)}}, nil
	}
	if err != nil {
		return nil, walkErr("glob", g.root, err)
	}
	workers := walkWorkers()
	found := make([][]FileInfo, workers)
	w := &walker{
		fs:      f,
		descend: g.mayHold,
		file: func(worker, dirfd int, name, vpath string) {
			if !g.match(vpath) {
				return
			}
			var st unix.Stat_t
			if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
				return
			}
			found[worker] = append(found[worker], FileInfo{Path: vpath, Size: st.Size, ModTime: statTime(&st)})
		},
	}
	if err := w.run(ctx, workers, fd, g.root); err != nil {
		return nil, err
	}
	out := f.visible(slices.Concat(found...))
	slices.SortFunc(out, func(a, b FileInfo) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}
