package rewind

import (
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/deepagents-go/deepagents/internal/inotify"
)

// On Linux the folders a walk records are watched with inotify between
// points, so that the point after a command looks at what changed rather
// than walking the folder again. The kernel queues a notice of every
// entry created, removed, renamed, written to or changed in mode within
// the system call that made the change, before it returns, whoever made it
// (a command in the sandbox too: the notice is the inode's, whatever
// mount it was changed through). A notice the queue could not hold, a
// folder removed or renamed, a changed .gitignore, a folder on a file
// system whose changes may not go through this kernel (NFS, FUSE), or a
// watch the kernel refused (its limit) make the next point walk, which
// watches again. Measured in docs/BENCHMARKS.md: a walk of 10,000 files
// costs a stat each, about 1.5 µs here; a look at the changes, a stat per
// path changed.

// watchMask is what a folder's watch reports. (No IN_DONT_FOLLOW: the
// folder is named by its descriptor's /proc link, which is to be
// followed, to the folder the walk opened without following a link.)
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK

// watcher is the folder's inotify instance and its watches.
type watcher struct {
	fd      int
	byWD    map[int32]string // watch -> folder ("" for the root)
	seen    map[int32]bool   // the watches the walk under way added or kept
	gone    map[int32]bool   // watches removed, whose queued notices say nothing
	dev     uint64           // the folder's device: another's file system is asked about
	broken  bool             // a change may have gone unnoticed: walk
	refused bool             // the kernel refused a watch: watch no more
	buf     []byte
}

func newWatcher() *watcher {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil // no inotify (or no instance left): walks
	}
	return &watcher{fd: fd, byWD: make(map[int32]string), gone: make(map[int32]bool), buf: make([]byte, inotify.BufSize)}
}

func (w *watcher) close() {
	if w != nil {
		unix.Close(w.fd)
	}
}

// begin starts a walk: what is queued is of no use to it (it looks at
// everything), and what comes while it walks is kept for the next look.
func (w *watcher) begin(root int) {
	if w == nil {
		return
	}
	// What is queued stays for the next look (the walk's caller logged
	// what came before it for the other threads).
	w.broken, w.seen = false, make(map[int32]bool)
	var st unix.Stat_t
	if unix.Fstat(root, &st) != nil || !inotify.Local(root) {
		w.broken = true
	}
	w.dev = uint64(st.Dev)
}

// add watches the folder open as fd, at rel, on device dev, before the
// walk reads it: a change made after the read is noticed.
func (w *watcher) add(fd int, rel string, dev uint64) {
	if w == nil || w.broken {
		return
	}
	if dev != w.dev && !inotify.Local(fd) {
		w.broken = true // a mount whose changes may not be noticed
		return
	}
	wd, err := unix.InotifyAddWatch(w.fd, "/proc/self/fd/"+strconv.Itoa(fd), watchMask)
	if err != nil {
		// Over the watches' limit, say: the watches this one holds go
		// (end), for the user's other tools to have them.
		w.broken, w.refused = true, true
		return
	}
	w.byWD[int32(wd)] = rel
	delete(w.gone, int32(wd))
	if w.seen != nil {
		w.seen[int32(wd)] = true
	}
}

// end ends a walk: the watches of folders it did not see (gone, ignored
// now, past a bound) are removed.
func (w *watcher) end() {
	if w == nil {
		return
	}
	for wd := range w.byWD {
		if !w.seen[wd] {
			unix.InotifyRmWatch(w.fd, uint32(wd))
			delete(w.byWD, wd)
			w.gone[wd] = true
		}
	}
	w.seen = nil
}

// changed returns the paths the notices since the last call name, and the
// folders made or moved in among them; ok is false when only a walk can
// tell (see the package's comment above).
func (w *watcher) changed() (paths, made []string, ok bool) {
	if w == nil || w.broken {
		return nil, nil, false
	}
	ok = true
	w.drain(func(wd int32, mask uint32, name string) {
		rel, known := w.byWD[wd]
		switch {
		case !known && w.gone[wd]:
			if mask&unix.IN_IGNORED != 0 {
				delete(w.gone, wd) // its last notice
			}
		case mask&unix.IN_Q_OVERFLOW != 0, !known:
			ok = false
		case mask&(unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_UNMOUNT) != 0:
			ok = false // a folder gone or moved: its paths changed
		case name == "":
		case name == ".gitignore":
			ok = false // what is ignored changed
		case mask&unix.IN_ISDIR != 0 && mask&(unix.IN_MOVED_FROM|unix.IN_DELETE) != 0:
			ok = false
		default:
			p := name
			if rel != "" {
				p = rel + "/" + name
			}
			if mask&unix.IN_ISDIR != 0 && mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
				made = append(made, p) // walked whole: not a path besides
			} else {
				paths = append(paths, p)
			}
		}
	})
	if !ok {
		w.broken = true
	}
	return paths, made, ok
}

// drain reads every queued notice; a queue that cannot be read breaks the
// watches (the next point walks).
func (w *watcher) drain(note func(wd int32, mask uint32, name string)) {
	if err := inotify.Drain(w.fd, w.buf, func(wd int32, mask uint32, name []byte) { note(wd, mask, string(name)) }); err != nil {
		w.broken = true
	}
}
