//go:build unix

package rewind

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/internal/gitignore"
)

// maxDepth bounds the folders a walk goes down: each holds a descriptor
// open while the walk is below it.
const maxDepth = 256

// walker is one walk of the folder: each folder opened below its parent's
// descriptor, never through a link, each entry stat'ed there once, and a
// file read only when its stat is not the one its hash was recorded with.
type walker struct {
	t       *Tracker
	ctx     context.Context
	prev    map[string]Entry // the thread's last point: hashes to keep when the index has none
	s       *scanned
	ign     gitignore.Matcher
	seen    int // entries of prev found
	skipped int // entries past MaxFiles
	deep    int // folders past maxDepth
	ignores map[string]ignoreFile
}

// walk records the whole folder into s.
func (t *Tracker) walk(ctx context.Context, prev map[string]Entry, s *scanned) error {
	t.count.walks.Add(1)
	w := &walker{t: t, ctx: ctx, prev: prev, s: s, ignores: make(map[string]ignoreFile)}
	root := int(t.folder.Fd())
	if !t.idx.scanned {
		t.idx.noWatch = !watching
	}
	fresh := false
	if t.idx.watch == nil && !t.idx.noWatch && (len(prev) >= watchFrom || t.idx.large) {
		t.idx.watch, fresh = newWatcher(), true
	}
	// What was noticed since the last look is not this walk's (it looks
	// at everything) but the other threads': logged for them, unless
	// only a walk can tell.
	kept := false // a watcher new with this walk has logged nothing yet
	if t.idx.scanned && !fresh {
		if paths, made, ok := t.idx.watch.changed(); ok {
			t.idx.gen++
			t.idx.logChanges(paths, made)
			kept = true
		}
	}
	t.idx.watch.begin(root)
	var st unix.Stat_t
	if err := unix.Fstat(root, &st); err != nil {
		return err
	}
	if err := w.folder(root, "", 0, uint64(st.Dev)); err != nil {
		return err
	}
	t.idx.watch.end()
	if t.idx.watch != nil && t.idx.watch.refused {
		t.idx.watch.close() // its watches go back to the user's other tools
		t.idx.watch, t.idx.noWatch = nil, true
	}
	t.idx.large = len(s.tree) >= watchFrom
	t.idx.gen++
	if !kept {
		t.idx.log, t.idx.logFrom = nil, t.idx.gen
	}
	s.gen = t.idx.gen
	if w.seen < len(prev) {
		for p := range prev {
			if _, ok := s.tree[p]; !ok {
				s.changes[p] = nil
			}
		}
	}
	// Folders gone since keep no stale .gitignore.
	t.idx.ignores, t.idx.scanned, t.idx.matcher = w.ignores, true, nil
	if w.skipped > 0 {
		s.notes = append(s.notes, fmt.Sprintf("%d entries past the first %d were not recorded", w.skipped, t.cfg.MaxFiles))
	}
	if w.deep > 0 {
		s.notes = append(s.notes, fmt.Sprintf("%d folders deeper than %d levels were not recorded", w.deep, maxDepth))
	}
	if w.ign.Truncated {
		s.notes = append(s.notes, fmt.Sprintf(".gitignore patterns past %d in a file, or %d in all, were not read", gitignore.MaxPatterns, gitignore.MaxTotal))
	}
	return nil
}

// folder records the entries of the folder open as fd, at rel ("" for the
// root), depth levels down, on device dev; it is watched first.
func (w *walker) folder(fd int, rel string, depth int, dev uint64) error {
	w.t.idx.watch.add(fd, rel, dev)
	names, err := readNames(fd)
	if err != nil {
		if rel == "" {
			return err
		}
		return nil // unreadable now: not recorded
	}
	if slices.Contains(names, ".gitignore") {
		w.gitignore(fd, rel)
	}
	for _, name := range names {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		if name == ".git" {
			continue
		}
		p := name
		if rel != "" {
			p = rel + "/" + name
		}
		var st unix.Stat_t
		if err := fstatat(fd, name, &st); err != nil {
			continue // vanished
		}
		w.t.count.walked.Add(1)
		isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
		if w.ign.Ignored(p, isDir) {
			continue
		}
		if len(w.s.tree) >= w.t.cfg.MaxFiles {
			w.skipped++
			continue
		}
		old, had := w.prev[p]
		e, ok := w.t.entry(fd, name, p, &st, old, w.s)
		if !ok {
			continue
		}
		w.s.tree[p] = e
		if had {
			w.seen++
		}
		if !had || !old.same(e) {
			w.s.changes[p] = &e
		}
		if !isDir {
			continue
		}
		if depth+1 >= maxDepth {
			w.deep++
			continue
		}
		sub, err := openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
		if err != nil {
			continue
		}
		err = w.folder(sub, p, depth+1, uint64(st.Dev))
		unix.Close(sub)
		if err != nil {
			return err
		}
	}
	return nil
}

// gitignore adds the folder's .gitignore to the walk's matcher: parsed
// again only when its stat changed.
func (w *walker) gitignore(fd int, rel string) {
	var st unix.Stat_t
	if fstatat(fd, ".gitignore", &st) != nil {
		return
	}
	s := sigOf(&st)
	g, ok := w.t.idx.ignores[rel]
	if !ok || g.sig != s {
		g = ignoreFile{sig: s}
		if st.Mode&unix.S_IFMT == unix.S_IFREG {
			if data, err := readFile(fd, ".gitignore", maxGitignore); err == nil {
				g.file = gitignore.Parse(rel, data)
			}
		}
	}
	w.ignores[rel] = g
	if g.file != nil {
		w.ign.AddFile(g.file)
	}
}

// entry is the entry at name in the folder fd (rel p) whose stat is st:
// a file's hash kept from the index, or prev, when its stat is the same,
// and read otherwise. ok is false for what is not recorded (sockets,
// devices, pipes, a link that cannot be read) and for a file that could
// not be read (prev's entry, if any, stands for it then).
func (t *Tracker) entry(fd int, name, p string, st *unix.Stat_t, prev Entry, s *scanned) (Entry, bool) {
	sg := sigOf(st)
	e := Entry{Mode: modeOf(st), MTime: sg.mtime}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return e, true
	case unix.S_IFLNK:
		link, err := readlinkat(fd, name)
		if err != nil {
			return e, false
		}
		e.Link = link
		return e, true
	case unix.S_IFREG:
	default:
		return e, false
	}
	e.Size = sg.size
	if k, ok := t.idx.files[p]; ok && k.sig == sg {
		_, seeded := s.contents[k.hash] // by a tool's report
		if k.stored || k.refused || seeded {
			e.Hash, e.Stored, e.Data = k.hash, k.stored || seeded, k.inline
			return e, true
		}
		if prev.Hash == k.hash && prev.Stored {
			// The thread's own point has it, written with its batch.
			e.Hash, e.Stored, e.Data = prev.Hash, true, prev.Data
			return e, true
		}
		// Read before, by a dry run say, but not stored: read it again.
	}
	// Times are compared as the store's JSON keeps them, to about 100 ns.
	// Only for a file this process has not seen: its inode and change time
	// are not in the points.
	if _, seen := t.idx.files[p]; !seen && prev.Hash != "" && prev.Size == e.Size && float64(prev.MTime) == float64(e.MTime) && prev.Mode == e.Mode {
		// Recorded before this process knew the folder: its size, time
		// and mode tell, as they did when it was recorded.
		e.Hash, e.Stored, e.Data = prev.Hash, prev.Stored, prev.Data
		t.idx.files[p] = known{sig: sg, hash: e.Hash, stored: e.Stored, refused: !e.Stored, inline: e.Data}
		return e, true
	}
	if e.Size > t.cfg.MaxFileBytes {
		t.bigFile(p, &e, sg, s)
		return e, true
	}
	data, err := readFile(fd, name, t.cfg.MaxFileBytes+1)
	if err != nil || int64(len(data)) != e.Size {
		// Unreadable now, or written to while read: as it was, for this
		// scan (the next one reads it again, its stat having changed).
		return prev, prev.Hash != ""
	}
	t.count.reads.Add(1)
	t.count.readBytes.Add(int64(len(data)))
	t.content(p, &e, sg, data, s)
	return e, true
}

// readNames returns the names in the folder fd, sorted (the walk's order,
// which MaxFiles cuts).
func readNames(fd int) ([]string, error) {
	// A descriptor of its own: os.File closes what it wraps, and the
	// walk still needs fd.
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "")
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// readFile reads the regular file name in the folder fd, at most max
// bytes, without following a link or blocking on a FIFO put in its place.
func readFile(fd int, name string, max int64) ([]byte, error) {
	f, err := openat(fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	file := os.NewFile(uintptr(f), name)
	defer file.Close()
	if info, err := file.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	return io.ReadAll(io.LimitReader(file, max))
}

// statEntry is the entry at the folder's path p as it is now (see entry):
// its folder opened from the root one element at a time, never through a
// link, so that a link put on the way since the change leads nowhere.
func (t *Tracker) statEntry(p string, s *scanned, prev Entry) (Entry, bool, error) {
	dir, name := path.Split(p)
	fd, err := t.openFolder(strings.TrimSuffix(dir, "/"))
	if err != nil {
		return Entry{}, false, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	t.count.stats.Add(1)
	if err := fstatat(fd, name, &st); err != nil {
		return Entry{}, false, err
	}
	e, ok := t.entry(fd, name, p, &st, prev, s)
	return e, ok, nil
}

// told is the entry at p as the backend's report c says it is, without a
// look: a folder, or a file whose content the report gave (seeded). ok is
// false when the report does not tell.
func (t *Tracker) told(p string, c backend.Change, s *scanned) (Entry, bool) {
	if c.Info == nil {
		return Entry{}, false
	}
	st, ok := c.Info.Sys().(*unix.Stat_t)
	if !ok {
		return Entry{}, false
	}
	sg := sigOf(st)
	e := Entry{Mode: modeOf(st), MTime: sg.mtime}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return e, true
	case unix.S_IFREG:
		k, ok := t.idx.files[p]
		if _, seeded := s.contents[k.hash]; !ok || k.sig != sg || !seeded && k.inline == nil {
			return Entry{}, false
		}
		e.Size, e.Hash, e.Stored, e.Data = sg.size, k.hash, true, k.inline
		return e, true
	}
	return Entry{}, false
}

// reportedSig is the stat record a backend reported with a change, if it
// reported one.
func reportedSig(info fs.FileInfo) (sig, bool) {
	if info == nil {
		return sig{}, false
	}
	st, ok := info.Sys().(*unix.Stat_t)
	if !ok {
		return sig{}, false
	}
	return sigOf(st), true
}

func sigOf(st *unix.Stat_t) sig {
	return sig{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: uint64(st.Ino), dev: uint64(st.Dev), mode: uint32(st.Mode)}
}

// modeOf is the fs.FileMode of a stat, as os.Lstat gives it, as a point
// records it.
func modeOf(st *unix.Stat_t) uint32 {
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	}
	if st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return uint32(m)
}

func openat(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func fstatat(dirfd int, name string, st *unix.Stat_t) error {
	for {
		err := unix.Fstatat(dirfd, name, st, unix.AT_SYMLINK_NOFOLLOW)
		if err != unix.EINTR {
			return err
		}
	}
}

func readlinkat(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// noticed returns what changed in the folder since the thread's tree was
// found, from the watches' notices (watch_linux.go): a stat of each path
// they name, and a walk of each folder made or moved in. ok is false when
// only a walk of the whole folder can tell.
func (t *Tracker) noticed(ctx context.Context, ts *threadState) (s *scanned, out map[string]*Entry, ok bool) {
	t.idx.mu.Lock()
	defer t.idx.mu.Unlock()
	if !t.idx.scanned || t.idx.watch == nil || ts.gen < t.idx.logFrom || len(ts.tree) >= t.cfg.MaxFiles {
		return nil, nil, false
	}
	paths, made, ok := t.idx.watch.changed()
	if !ok || len(t.idx.log)+len(paths)+len(made) > maxLog {
		t.idx.watch.broken = true // a walk, which starts the log again
		return nil, nil, false
	}
	t.idx.gen++
	t.idx.logChanges(paths, made)
	// Everything since the thread's tree was found: this look's, and the
	// looks other threads made since.
	var look []string
	made = nil
	seen := make(map[logged]bool)
	from, _ := slices.BinarySearchFunc(t.idx.log, ts.gen+1, func(l logged, gen int64) int { return cmp.Compare(l.gen, gen) })
	found := func(p string, folder bool) {
		if k := (logged{path: p, made: folder}); !seen[k] {
			seen[k] = true
			if folder {
				made = append(made, p)
			} else {
				look = append(look, p)
			}
		}
	}
	for _, l := range t.idx.log[from:] {
		found(l.path, l.made)
	}
	for p, folder := range ts.dirty {
		found(p, folder)
	}
	slices.Sort(look)
	s, out = newScanned(false, 0), make(map[string]*Entry)
	s.gen = t.idx.gen
	prev := ts.tree
	ign := t.ignoring()
	// The folders made: walked whole, watched first; what is below them
	// is theirs.
	slices.Sort(made)
	var walked []string
	below := func(p string) bool {
		return slices.ContainsFunc(walked, func(d string) bool { return strings.HasPrefix(p, d+"/") })
	}
	for _, d := range made {
		if err := ctx.Err(); err != nil {
			return nil, nil, false
		}
		if below(d) || ignoredPath(ign, d, true) {
			continue
		}
		if !t.walkFolder(ctx, d, prev, s, out) {
			return nil, nil, false
		}
		walked = append(walked, d)
	}
	for _, p := range look {
		if below(p) || ignoredPath(ign, p, false) {
			continue
		}
		if ignoredPath(ign, p, true) && t.isDir(p) {
			continue // a folder a folder pattern ignores
		}
		if _, up := prev[path.Dir(p)]; !up && path.Dir(p) != "." {
			continue // in a folder not recorded (ignored, past a bound)
		}
		t.look(p, backend.Change{}, prev, s, out)
	}
	return s, out, true
}

// settle takes in what was noticed of a step whose changes the backends
// reported, so that the thread's next look need not stat them again: a
// path reported and still as reported (a stat), or one that came and went
// (an edit's temporary file), is the step's own. Everything noticed is
// logged for the other threads; what is not the step's own, and what
// other threads' looks logged since this thread's, is left for its next
// look (dirty).
func (t *Tracker) settle(ts *threadState, reported map[string]backend.Change) {
	t.idx.mu.Lock()
	defer t.idx.mu.Unlock()
	if t.idx.watch == nil || ts.gen < t.idx.logFrom {
		return
	}
	paths, made, ok := t.idx.watch.changed()
	if !ok || len(t.idx.log)+len(paths)+len(made) > maxLog {
		t.idx.watch.broken = true
		return
	}
	if len(paths) == 0 && len(made) == 0 {
		return
	}
	leave := func(p string, folder bool) {
		if ts.dirty == nil {
			ts.dirty = make(map[string]bool)
		}
		ts.dirty[p] = ts.dirty[p] || folder
	}
	from, _ := slices.BinarySearchFunc(t.idx.log, ts.gen+1, func(l logged, gen int64) int { return cmp.Compare(l.gen, gen) })
	for _, l := range t.idx.log[from:] {
		leave(l.path, l.made)
	}
	t.idx.gen++
	t.idx.logChanges(paths, made)
	ign := t.ignoring()
	slices.Sort(paths)
	for i, p := range paths {
		if i > 0 && paths[i-1] == p || ignoredPath(ign, p, false) {
			continue // a path of several notices is looked at once
		}
		if c, ok := reported[p]; ok && t.asReported(p, c) {
			continue
		}
		if _, had := ts.tree[p]; !had {
			t.count.stats.Add(1)
			if _, err := t.root.Lstat(filepath.FromSlash(p)); errors.Is(err, fs.ErrNotExist) {
				continue // came and went
			}
		}
		leave(p, false)
	}
	for _, d := range made {
		if ignoredPath(ign, d, true) {
			continue
		}
		if _, ok := reported[d]; ok && t.watchMade(d, ts.tree) {
			continue
		}
		leave(d, true)
	}
	ts.gen = t.idx.gen
}

// asReported reports whether the entry at p is still as the backend's
// report c left it (its times of change aside: a file renamed into place
// has a new one): nobody changed it since the step's point took it.
func (t *Tracker) asReported(p string, c backend.Change) bool {
	want, ok := reportedSig(c.Info)
	if !ok {
		return false
	}
	var st unix.Stat_t
	t.count.stats.Add(1)
	if fstatat(int(t.folder.Fd()), p, &st) != nil {
		return false
	}
	got := sigOf(&st)
	if want.mode&unix.S_IFMT == unix.S_IFDIR {
		// A folder's size and times change with what is put in it; a
		// point records its mode alone.
		return got.ino == want.ino && got.dev == want.dev && got.mode == want.mode
	}
	return sameButChange(got, want)
}

// sameButChange compares two stats but for their times of change.
func sameButChange(a, b sig) bool {
	a.ctime, b.ctime = 0, 0
	return a == b
}

// watchMade watches the folder at d that a backend made and reported, and
// the folders in it, which a walk would otherwise have to watch: true when
// all they hold is in tree (what the backends reported into them), so that
// nothing made in them before the watch went unnoticed.
func (t *Tracker) watchMade(d string, tree map[string]Entry) bool {
	fd, err := t.openFolder(d)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return false
	}
	t.idx.watch.add(fd, d, uint64(st.Dev))
	if t.idx.watch.broken {
		return false
	}
	names, err := readNames(fd)
	if err != nil {
		return false
	}
	for _, n := range names {
		p := d + "/" + n
		e, ok := tree[p]
		if !ok {
			return false
		}
		if !fs.FileMode(e.Mode).IsDir() {
			// As the report left it: nobody wrote it before the watch.
			k, known := t.idx.files[p]
			var st unix.Stat_t
			t.count.stats.Add(1)
			if !known || fstatat(fd, n, &st) != nil || !sameButChange(sigOf(&st), k.sig) {
				return false
			}
		}
		// A folder in it was made with it (the notice of its making
		// came to no watch): watched the same way.
		if fs.FileMode(e.Mode).IsDir() && !t.watchMade(d+"/"+n, tree) {
			return false
		}
	}
	return true
}

// walkFolder records into out the folder made at d and all below it, as
// a walk would (watched first), against prev; false when it cannot.
func (t *Tracker) walkFolder(ctx context.Context, d string, prev map[string]Entry, s *scanned, out map[string]*Entry) bool {
	if _, up := prev[path.Dir(d)]; !up && path.Dir(d) != "." {
		if _, made := out[path.Dir(d)]; !made {
			return true // in a folder not recorded
		}
	}
	e, ok, err := t.statEntry(d, s, prev[d])
	if err != nil {
		return true // gone again
	}
	if !ok || !fs.FileMode(e.Mode).IsDir() {
		return false
	}
	if old, had := prev[d]; !had || !old.same(e) {
		out[d] = &e
	}
	fd, err := t.openFolder(d)
	if err != nil {
		return true
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return false
	}
	w := &walker{t: t, ctx: ctx, prev: prev, s: newScanned(true, 0), ignores: make(map[string]ignoreFile), ign: *t.ignoring()}
	if err := w.folder(fd, d, depth(d), uint64(st.Dev)); err != nil {
		return false
	}
	if len(w.ignores) > 0 {
		return false // a .gitignore came with it: walk, for its rules to hold everywhere
	}
	for p, e := range w.s.changes {
		out[p] = e
	}
	maps.Copy(s.contents, w.s.contents)
	s.bytes += w.s.bytes
	s.notes = append(s.notes, w.s.notes...)
	return true
}

// isDir reports whether the entry at p is a folder now.
func (t *Tracker) isDir(p string) bool {
	fd, err := t.openFolder(p)
	if err == nil {
		unix.Close(fd)
	}
	return err == nil
}

// openFolder opens the folder at p from the root one element at a time,
// never through a link ("" is the folder itself); the caller closes it.
func (t *Tracker) openFolder(p string) (int, error) {
	fd, err := unix.Dup(int(t.folder.Fd()))
	if err != nil || p == "" {
		return fd, err // "": the folder itself
	}
	for elem := range strings.SplitSeq(p, "/") {
		sub, err := openat(fd, elem, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = sub
	}
	return fd, nil
}
