package backend

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/deepagents-go/deepagents/internal/inotify"
)

// The listings of large directories are kept between calls to ListText and
// kept exact with inotify: a watch on each kept directory queues a notice of
// every entry created, deleted or renamed there, and the kernel queues it
// within the system call that made the change, before that call returns,
// whoever made it (this process, a command run by execute, another
// process). ListText reads the whole queue before it answers from a kept
// listing, so a change made before the call is always in its answer: the
// names a notice mentions are looked up again (fstatat), and the rest of the
// listing cannot have changed. A directory's modification time could not
// do this: it does not change reliably within a clock tick.
//
// What cannot be watched is read each time: small directories (listing them
// costs about what the cache would), file systems whose changes may not be
// reported (network and FUSE file systems), and everything when inotify or
// /proc is unavailable. When the queue overflows, every kept listing is
// read again.
//
// Listings are kept by directory (device and inode, looked up on the
// descriptor the call opened), so a path that comes to name another
// directory (a rename, a mount) never gets the old one's listing. One
// inotify instance serves the process; the kept directories and their bytes
// are bounded, the least recently listed going first.

// Bounds of the listing cache; variables so that tests can lower them.
var (
	// cacheMinEntries is the fewest entries a directory needs to be kept.
	cacheMinEntries = 64
	// cacheMaxDirs bounds the kept directories, and so the watches.
	cacheMaxDirs = 64
	// cacheMaxBytes bounds the bytes of the kept names and texts.
	cacheMaxBytes = 32 << 20
	// cacheMaxPending is how many changed names a directory may gather
	// before it is read again rather than updated name by name.
	cacheMaxPending = 512
)

// watchMask is what a kept directory's watch reports: changes to its
// entries, and its own deletion (its watch then ends, IN_IGNORED).
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_DELETE_SELF | unix.IN_ONLYDIR

// dirKey identifies a directory.
type dirKey struct{ dev, ino uint64 }

// keptDir is one kept listing.
type keptDir struct {
	key     dirKey
	wd      int32
	entries []dirent // sorted by name
	// pending holds the names changed since entries was brought up to
	// date; stale says to read the directory again instead.
	pending map[string]struct{}
	stale   bool
	// text is entries rendered with prefix, when textOK.
	prefix string
	text   string
	textOK bool
	bytes  int
	used   uint64
}

// dirCache is the process's cache of listings.
type dirCache struct {
	once  sync.Once
	mu    sync.Mutex
	ifd   int // the inotify descriptor; -1 when the cache is off
	buf   []byte
	byKey map[dirKey]*keptDir
	byWD  map[int32]*keptDir
	bytes int
	clock uint64
	reads atomic.Int64 // directories read in full: for tests
}

var dirs = &dirCache{ifd: -1}

func (c *dirCache) init() {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return // no inotify (or no instance left): list every time
	}
	c.ifd = fd
	c.buf = make([]byte, inotify.BufSize)
	c.byKey = map[dirKey]*keptDir{}
	c.byWD = map[int32]*keptDir{}
}

// listDirText lists the directory open at fd (host path host, its entries'
// paths starting with prefix) as ListText does.
func listDirText(fd int, prefix, host string) (string, error) {
	return dirs.list(fd, prefix, host)
}

// readSorted reads the directory open at fd from its start, sorted.
func (c *dirCache) readSorted(fd int, host string) ([]dirent, error) {
	c.reads.Add(1)
	if _, err := unix.Seek(fd, 0, 0); err != nil {
		return nil, err
	}
	entries, err := readNames(fd, host)
	if err != nil {
		return nil, err
	}
	sortDirents(entries)
	return entries, nil
}

func (c *dirCache) list(fd int, prefix, host string) (string, error) {
	c.once.Do(c.init)
	if c.ifd < 0 {
		return listUncached(fd, prefix, host)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return listUncached(fd, prefix, host)
	}
	key := dirKey{dev: st.Dev, ino: st.Ino}
	c.mu.Lock()
	c.drain()
	d := c.byKey[key]
	if d == nil {
		// A directory not kept is read without the lock, so that a slow
		// one (a network mount, which is never kept) does not hold up the
		// listings of every other agent of the process.
		c.mu.Unlock()
		entries, err := c.readSorted(fd, host)
		if err != nil {
			return "", err
		}
		if len(entries) < cacheMinEntries || !c.isLocal(fd) {
			return formatDirents(prefix, entries), nil
		}
		c.mu.Lock()
		c.drain()
		if d = c.byKey[key]; d == nil { // unless another call kept it meanwhile
			if d = c.keep(fd, key); d == nil {
				c.mu.Unlock()
				return formatDirents(prefix, entries), nil
			}
		}
		// The listing above may predate the watch: d is read again, now
		// that every later change is reported.
	}
	defer c.mu.Unlock()
	c.bytes -= d.footprint()
	if d.prefix != prefix {
		d.textOK = false
	}
	if err := c.refresh(d, fd, host); err != nil {
		c.bytes += d.footprint()
		c.forget(d)
		return "", err
	}
	c.clock++
	d.used = c.clock
	if !d.textOK {
		d.prefix, d.text, d.textOK = prefix, formatDirents(prefix, d.entries), true
	}
	c.bytes += d.footprint()
	c.evict(d)
	return d.text, nil
}

// footprint is about the memory d takes.
func (d *keptDir) footprint() int { return d.bytes + len(d.text) }

// listUncached reads and renders the directory open at fd.
func listUncached(fd int, prefix, host string) (string, error) {
	entries, err := readNames(fd, host)
	if err != nil {
		return "", err
	}
	sortDirents(entries)
	return formatDirents(prefix, entries), nil
}

// keep starts watching the directory open at fd and returns its entry, to
// be filled (it is stale); nil if it cannot be watched.
func (c *dirCache) keep(fd int, key dirKey) *keptDir {
	// The descriptor's own directory, whatever its path has become.
	wd, err := unix.InotifyAddWatch(c.ifd, "/proc/self/fd/"+strconv.Itoa(fd), watchMask)
	if err != nil {
		return nil
	}
	if old := c.byWD[int32(wd)]; old != nil {
		// The same directory under another key cannot happen; drop the
		// old entry, keeping the watch.
		c.drop(old)
	}
	d := &keptDir{key: key, wd: int32(wd), stale: true}
	c.byKey[key], c.byWD[d.wd] = d, d
	return d
}

// refresh brings d's entries up to date: it reads the directory open at fd
// again when d is stale, else looks up the names changed since (updating
// the text along, when it is current).
func (c *dirCache) refresh(d *keptDir, fd int, host string) error {
	if !d.stale && len(d.pending) == 0 {
		return nil
	}
	if !d.stale {
		if len(d.pending) > maxSplices {
			d.textOK = false // rebuilt at once rather than spliced many times
		}
		for name := range d.pending {
			kind, err := lookupKind(fd, name)
			if err != nil {
				d.stale = true // cannot tell: read it all
				break
			}
			d.update(name, kind)
		}
		clear(d.pending)
	}
	if d.stale {
		entries, err := c.readSorted(fd, host)
		if err != nil {
			return err
		}
		d.entries, d.stale, d.textOK = entries, false, false
		clear(d.pending)
		d.bytes = 0
		for _, e := range d.entries {
			d.bytes += direntSize(e)
		}
	}
	return nil
}

// maxSplices is the most changed names whose lines are spliced into a
// kept text; more, and the text is rendered again.
const maxSplices = 8

func direntSize(e dirent) int { return int(unsafe.Sizeof(e)) + len(e.name) }

// update sets the entry name to kind.
func (d *keptDir) update(name string, kind entryKind) {
	i, found := slices.BinarySearchFunc(d.entries, name, func(e dirent, n string) int { return strings.Compare(e.name, n) })
	if found && (kind == kindNone || d.entries[i].isDir != (kind == kindDir)) {
		d.removeLine(i)
		d.bytes -= direntSize(d.entries[i])
		d.entries = slices.Delete(d.entries, i, i+1)
		found = false
	}
	if !found && kind != kindNone {
		e := dirent{name: name, isDir: kind == kindDir}
		d.insertLine(i, e)
		d.bytes += direntSize(e)
		d.entries = slices.Insert(d.entries, i, e)
	}
}

// lineLen is the length of e's line in the text.
func (d *keptDir) lineLen(e dirent) int {
	n := len(d.prefix) + len(e.name)
	if e.isDir {
		n++
	}
	return n
}

// lineStart is where the line of entry i starts in the text.
func (d *keptDir) lineStart(i int) int {
	off := 0
	for _, e := range d.entries[:i] {
		off += d.lineLen(e) + 1
	}
	return off
}

// removeLine takes entry i's line out of the text, if current.
func (d *keptDir) removeLine(i int) {
	if !d.textOK {
		return
	}
	off, n := d.lineStart(i), d.lineLen(d.entries[i])
	switch {
	case len(d.entries) == 1:
		d.text = ""
	case i < len(d.entries)-1:
		d.text = d.text[:off] + d.text[off+n+1:]
	default: // the last line goes with the newline before it
		d.text = d.text[:off-1]
	}
}

// insertLine puts e's line into the text, if current, where entry i is.
func (d *keptDir) insertLine(i int, e dirent) {
	if !d.textOK {
		return
	}
	line := d.prefix + e.name
	if e.isDir {
		line += "/"
	}
	switch {
	case len(d.entries) == 0:
		d.text = line
	case i < len(d.entries):
		off := d.lineStart(i)
		d.text = d.text[:off] + line + "\n" + d.text[off:]
	default:
		d.text = d.text + "\n" + line
	}
}

// drain reads every queued notice and marks what it changed.
func (c *dirCache) drain() {
	if err := inotify.Drain(c.ifd, c.buf, c.note); err != nil {
		c.staleAll() // cannot tell what changed
	}
}

// note records one notice.
func (c *dirCache) note(wd int32, mask uint32, name []byte) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		c.staleAll()
		return
	}
	d := c.byWD[wd]
	if d == nil {
		return
	}
	switch {
	case mask&unix.IN_IGNORED != 0:
		// The watch ended (the directory was deleted or unmounted);
		// a directory with the same inode number may come.
		c.drop(d)
	case mask&(unix.IN_DELETE_SELF|unix.IN_UNMOUNT) != 0:
		d.stale = true
	case len(name) > 0 && !d.stale:
		if d.pending == nil {
			d.pending = map[string]struct{}{}
		}
		if _, ok := d.pending[string(name)]; !ok {
			d.pending[string(name)] = struct{}{}
		}
		if len(d.pending) > cacheMaxPending {
			d.stale = true
			clear(d.pending)
		}
	}
}

// staleAll marks every kept listing to be read again.
func (c *dirCache) staleAll() {
	for _, d := range c.byKey {
		d.stale = true
		clear(d.pending)
	}
}

// isLocal reports whether the file system of the directory open at fd
// reports every change to inotify: a local one.
// (Asked each time: device numbers of tmpfs, overlay, NFS and FUSE come
// from one pool and are reused once a file system is unmounted, so an
// answer remembered by device could later describe a network mount. It is
// asked only before a large directory is first kept.)
func (c *dirCache) isLocal(fd int) bool { return inotify.Local(fd) }

// evict forgets the least recently listed directories (never keep) while
// the cache is over its bounds.
func (c *dirCache) evict(keep *keptDir) {
	for len(c.byKey) > cacheMaxDirs || c.bytes > cacheMaxBytes {
		var old *keptDir
		for _, d := range c.byKey {
			if d != keep && (old == nil || d.used < old.used) {
				old = d
			}
		}
		if old == nil {
			if c.bytes > cacheMaxBytes {
				c.forget(keep) // too large to keep alone
			}
			return
		}
		c.forget(old)
	}
}

// forget drops d and ends its watch.
func (c *dirCache) forget(d *keptDir) {
	_, _ = unix.InotifyRmWatch(c.ifd, uint32(d.wd))
	c.drop(d)
}

// drop removes d from the cache (its watch, if any, stays).
func (c *dirCache) drop(d *keptDir) {
	if c.byKey[d.key] == d {
		delete(c.byKey, d.key)
	}
	if c.byWD[d.wd] == d {
		delete(c.byWD, d.wd)
	}
	c.bytes -= d.bytes + len(d.text)
}
