package localcontext

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/deepagents-go/deepagents/backend"
)

// Git's status is worked out here from .git/index, read as data, rather
// than by running git: git status runs what the repository's configuration
// names (core.fsmonitor, clean filters), and a repository is not trusted.

// indexEntry is what the status needs of one entry of git's index.
type indexEntry struct {
	path            string
	size            uint32
	mtimeS, mtimeNs uint32
	mode            uint32
	stage           int
}

// Bounds of what the status reads: a larger index or work tree is not
// looked at (the section then says nothing of git's status).
const (
	maxIndexBytes   = 64 << 20
	maxIndexEntries = 50000
	maxIndexDirs    = 5000
)

var errIndex = errors.New("not a git index this reader knows")

// readIndex parses git's index (versions 2 to 4, SHA-1 object names).
func readIndex(data []byte) ([]indexEntry, error) {
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return nil, errIndex
	}
	version := binary.BigEndian.Uint32(data[4:8])
	count := binary.BigEndian.Uint32(data[8:12])
	if version < 2 || version > 4 || count > maxIndexEntries {
		return nil, errIndex
	}
	const fixed = 62 // the stat data, the object name and the flags
	entries := make([]indexEntry, 0, count)
	off, prev := 12, ""
	for range count {
		if off+fixed > len(data) {
			return nil, errIndex
		}
		e := data[off:]
		ent := indexEntry{
			mtimeS: binary.BigEndian.Uint32(e[8:12]), mtimeNs: binary.BigEndian.Uint32(e[12:16]),
			mode: binary.BigEndian.Uint32(e[24:28]), size: binary.BigEndian.Uint32(e[36:40]),
		}
		flags := binary.BigEndian.Uint16(e[60:62])
		ent.stage = int(flags>>12) & 3
		n := fixed
		if flags&0x4000 != 0 {
			if version < 3 || off+n+2 > len(data) {
				return nil, errIndex
			}
			n += 2
		}
		var name string
		if version == 4 {
			strip, used := indexVarint(data[off+n:])
			if used == 0 || strip > uint64(len(prev)) {
				return nil, errIndex
			}
			n += used
			end := bytes.IndexByte(data[off+n:min(len(data), off+n+4096)], 0)
			if end < 0 {
				return nil, errIndex
			}
			name = prev[:len(prev)-int(strip)] + string(data[off+n:off+n+end])
			n += end + 1
		} else {
			end := bytes.IndexByte(data[off+n:min(len(data), off+n+4096)], 0)
			if end < 0 {
				return nil, errIndex
			}
			name = string(data[off+n : off+n+end])
			n = (n + end + 8) &^ 7 // NUL padding to a multiple of eight
		}
		if off+n > len(data) || name == "" {
			return nil, errIndex
		}
		ent.path, prev = name, name
		entries = append(entries, ent)
		off += n
	}
	return entries, nil
}

// indexVarint reads the offset encoding of index version 4; used is 0 for
// a bad one.
func indexVarint(b []byte) (v uint64, used int) {
	for i := 0; i < len(b) && i < 10; i++ {
		c := b[i]
		if i == 0 {
			v = uint64(c & 127)
		} else {
			v = (v+1)<<7 | uint64(c&127)
		}
		if c&128 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}

// gitChanges says which tracked files differ from git's index by their
// size or modification time (what git status looks at first), and which
// are gone; "" when it cannot tell or nothing differs.
func gitChanges(ctx context.Context, b backend.Backend) string {
	r := b.Download(ctx, []string{"/.git/index"})
	if len(r) != 1 || r[0].Err != nil || len(r[0].Content) > maxIndexBytes {
		return ""
	}
	entries, err := readIndex(r[0].Content)
	if err != nil {
		return ""
	}
	byDir := map[string][]indexEntry{}
	conflicts := 0
	for _, e := range entries {
		switch {
		case e.stage != 0:
			conflicts++
			continue
		case e.mode&0o170000 != 0o100000:
			continue // links and submodules: not compared
		}
		byDir[path.Dir("/"+e.path)] = append(byDir[path.Dir("/"+e.path)], e)
	}
	if len(byDir) > maxIndexDirs {
		return ""
	}
	var changed []string
	others := 0
	for dir, es := range byDir {
		infos, err := b.List(ctx, dir)
		if err != nil {
			return ""
		}
		have := make(map[string]backend.FileInfo, len(infos))
		for _, fi := range infos {
			have[path.Base(fi.Path)] = fi
		}
		for _, e := range es {
			fi, ok := have[path.Base(e.path)]
			// A git built without nanoseconds keeps 0 for them.
			if ok && !fi.IsDir && uint32(fi.Size) == e.size && fi.ModTime.Unix() == int64(e.mtimeS) &&
				(e.mtimeNs == 0 || fi.ModTime.Nanosecond() == int(e.mtimeNs)) {
				continue
			}
			if plainPath(e.path) {
				changed = append(changed, e.path)
			} else {
				others++
			}
		}
	}
	n := len(changed) + others
	if n == 0 && conflicts == 0 {
		return "no changes since git last looked"
	}
	var out []string
	if n > 0 {
		slices.Sort(changed)
		out = append(out, fmt.Sprintf("%d tracked files changed or gone (%s)", n, list(changed, 5)))
	}
	if conflicts > 0 {
		out = append(out, "a merge in progress, with conflicts")
	}
	return strings.Join(out, "; ")
}

// plainPath is plain for each element of a path.
func plainPath(p string) bool {
	for el := range strings.SplitSeq(p, "/") {
		if !plain(el) {
			return false
		}
	}
	return len(p) <= 128
}
