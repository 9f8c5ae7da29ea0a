//go:build unix

package rewind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
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
	skipped int // entries past MaxFiles
	deep    int // folders past maxDepth
	ignores map[string]ignoreFile
}

// walk records the whole folder into s.
func (t *Tracker) walk(ctx context.Context, prev map[string]Entry, s *scanned) error {
	t.count.walks.Add(1)
	w := &walker{t: t, ctx: ctx, prev: prev, s: s, ignores: make(map[string]ignoreFile)}
	if err := w.folder(int(t.folder.Fd()), "", 0); err != nil {
		return err
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
// root), depth levels down.
func (w *walker) folder(fd int, rel string, depth int) error {
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
		p := path.Join(rel, name)
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
		e, ok := w.t.entry(fd, name, p, &st, w.prev[p], w.s)
		if !ok {
			continue
		}
		w.s.tree[p] = e
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
		err = w.folder(sub, p, depth+1)
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
		// Read before, by a dry run say, but not stored: read it again.
	}
	// Times are compared as the store's JSON keeps them, to about 100 ns.
	if prev.Hash != "" && prev.Size == e.Size && float64(prev.MTime) == float64(e.MTime) && prev.Mode == e.Mode {
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
	fd, owned := int(t.folder.Fd()), false
	defer func() {
		if owned {
			unix.Close(fd)
		}
	}()
	dir, name := path.Split(p)
	for elem := range strings.SplitSeq(strings.TrimSuffix(dir, "/"), "/") {
		if elem == "" {
			continue
		}
		sub, err := openat(fd, elem, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
		if err != nil {
			return Entry{}, false, err
		}
		if owned {
			unix.Close(fd)
		}
		fd, owned = sub, true
	}
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
