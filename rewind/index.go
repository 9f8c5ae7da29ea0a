package rewind

import (
	"sync"
	"sync/atomic"

	"github.com/deepagents-go/deepagents/internal/gitignore"
)

// sig is what a stat says of an entry: when it equals the one recorded
// with a hash, the content is taken to be the one hashed. The change time
// and the inode catch what keeps a modification time (a copy with -p, a
// file renamed over another).
type sig struct {
	size, mtime, ctime int64
	ino, dev           uint64
	mode               uint32
}

// known is a file's content as a scan or a tool last saw it.
type known struct {
	sig    sig
	hash   string
	stored bool // its content is in the store
	// refused: a point recorded it by its hash alone (over a bound), so
	// a scan need not read it again to try.
	refused bool
	// inline is a small file's content, which points keep (Entry.Data).
	inline []byte
}

// ignoreFile is a folder's .gitignore as last read.
type ignoreFile struct {
	sig  sig
	file *gitignore.File // nil: unreadable, or not a regular file
}

// index is what the Tracker knows of its folder between points, for every
// thread: each file's content by its stat, and each folder's .gitignore,
// so that a scan reads only what changed. Its mutex is held for a whole
// scan.
type index struct {
	mu      sync.Mutex
	files   map[string]known      // by path
	ignores map[string]ignoreFile // by folder ("" for the root)
	scanned bool                  // a walk filled it: ignores holds every folder's
	matcher *gitignore.Matcher    // of ignores, made when first needed after a walk

	// watch notices what changes between points (Linux); nil: walks. It
	// is made for a folder of watchFrom entries or more (large: the last
	// walk found that many), at the walk that starts watching.
	watch   *watcher
	large   bool
	noWatch bool
	// gen counts the walks and looks; log holds the paths each look was
	// told of, for the threads whose last point is older than it: a
	// thread whose point came with look or walk g looks at the paths
	// logged after g, when g >= logFrom (the log's start), and walks
	// otherwise.
	gen, logFrom int64
	log          []logged
}

// logged is a path a look was told of.
type logged struct {
	gen  int64
	path string
	made bool // a folder made or moved in: walked whole
}

// watchFrom is the fewest entries a folder needs to be watched: a walk of
// fewer costs a few milliseconds (a stat each, 1.5–3 µs here), less than
// the watches cost the process (removing them waits for the kernel's
// reaper, about a clock tick, at the latest when the process exits).
var watchFrom = 1_000 // a variable for tests

// watching is false in tests that need a Tracker that only walks: one
// whose first walk comes while it is false never watches.
var watching = true

// maxLog bounds the paths logged: past it the log starts again, and the
// threads whose points are older walk.
const maxLog = 100_000

// logChanges logs what the look of generation gen was told of.
func (x *index) logChanges(paths, made []string) {
	for _, p := range paths {
		x.log = append(x.log, logged{gen: x.gen, path: p})
	}
	for _, p := range made {
		x.log = append(x.log, logged{gen: x.gen, path: p, made: true})
	}
	if len(x.log) > maxLog {
		// The threads whose points are older than this look walk; those
		// of this look see its paths themselves.
		x.log, x.logFrom = nil, x.gen
	}
}

func newIndex() *index {
	return &index{files: make(map[string]known), ignores: make(map[string]ignoreFile)}
}

// Counts are what a Tracker did, added up since it was made: what a point
// costs, counted rather than timed (see Tracker.Counts).
type Counts struct {
	// Walks are the scans of the whole folder; Walked the entries they
	// looked at (each a stat).
	Walks, Walked int64
	// Stats are the entries stat'ed outside walks: the paths the file
	// tools reported, and the folders above them that were not known.
	Stats int64
	// Reads are the files read (hashed), ReadBytes their bytes.
	Reads, ReadBytes int64
	// Points are the points recorded; StoredBytes the bytes of the values
	// they put in the store (as JSON), contents included.
	Points, StoredBytes int64
}

// counters are a Tracker's Counts as they grow.
type counters struct {
	walks, walked, stats, reads, readBytes, points, storedBytes atomic.Int64
}

func (c *counters) snapshot() Counts {
	return Counts{Walks: c.walks.Load(), Walked: c.walked.Load(), Stats: c.stats.Load(), Reads: c.reads.Load(),
		ReadBytes: c.readBytes.Load(), Points: c.points.Load(), StoredBytes: c.storedBytes.Load()}
}

// Counts returns what the Tracker did since it was made: walks of the
// folder and their entries, stats, files read, points and the bytes they
// stored. A test subtracts two to find what one step cost.
func (t *Tracker) Counts() Counts { return t.count.snapshot() }
