package rewind

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/deepagents-go/deepagents/internal/gitignore"
)

// scanned is the folder as a scan found it: its entries, the contents read
// (files that changed and are stored), and notes.
type scanned struct {
	tree     map[string]Entry
	contents map[string][]byte // by hash
	bytes    int               // of contents
	notes    []string
}

// maxGitignore bounds a .gitignore read: a hostile repository's costs the
// scan, every time.
const maxGitignore = 256 << 10

// scan walks the folder: folders, files and links, .gitignore honoured,
// .git left out. A file whose size, time and mode are those of prev's
// entry keeps its hash unread.
func (t *Tracker) scan(ctx context.Context, prev map[string]Entry) (*scanned, error) {
	s := &scanned{tree: make(map[string]Entry), contents: make(map[string][]byte)}
	if t.root == nil {
		return s, nil // no folder: nothing to record
	}
	var ign gitignore.Matcher
	skipped := 0
	err := filepath.WalkDir(t.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == t.dir {
				return err
			}
			return nil // vanished or unreadable: not recorded
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(t.dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			t.readGitignore(&ign, "")
			return nil
		}
		if d.Name() == ".git" || ign.Ignored(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if len(s.tree) >= t.cfg.MaxFiles {
			skipped++
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		e := Entry{Mode: uint32(info.Mode()), MTime: info.ModTime().UnixNano()}
		switch {
		case d.IsDir():
			t.readGitignore(&ign, rel)
		case info.Mode()&fs.ModeSymlink != 0:
			if e.Link, err = os.Readlink(p); err != nil {
				return nil
			}
		case info.Mode().IsRegular():
			e.Size = info.Size()
			if o, ok := prev[rel]; ok && o.Hash != "" && o.Size == e.Size && o.MTime == e.MTime && o.Mode == e.Mode {
				e.Hash, e.Stored = o.Hash, o.Stored
				break
			}
			if err := t.hash(rel, &e, s); err != nil {
				// Unreadable now, or written to while read: as it was,
				// for this scan (the next one reads it again).
				if o, ok := prev[rel]; ok {
					s.tree[rel] = o
				}
				return nil
			}
		default:
			return nil // sockets, devices, pipes
		}
		s.tree[rel] = e
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rewind: scanning %s: %w", t.dir, err)
	}
	if skipped > 0 {
		s.notes = append(s.notes, fmt.Sprintf("%d entries past the first %d were not recorded", skipped, t.cfg.MaxFiles))
	}
	if ign.Truncated {
		s.notes = append(s.notes, fmt.Sprintf(".gitignore patterns past %d in a file, or %d in all, were not read", gitignore.MaxPatterns, gitignore.MaxTotal))
	}
	return s, nil
}

// hash reads a file, records its hash, and keeps its content when it is
// to be stored.
func (t *Tracker) hash(rel string, e *Entry, s *scanned) error {
	if e.Size > t.cfg.MaxFileBytes {
		// Not read at all, however large: known by its size and time,
		// which tell a change as a hash would.
		e.Hash = fmt.Sprintf("stat:%d:%d", e.Size, e.MTime)
		s.notes = append(s.notes, fmt.Sprintf("%s (%d bytes) is over %d bytes: recorded by its size and time, not restorable", rel, e.Size, t.cfg.MaxFileBytes))
		return nil
	}
	f, err := t.openRegular(rel)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, t.cfg.MaxFileBytes+1))
	if err != nil {
		return err
	}
	if int64(len(data)) != e.Size {
		// Written to while the walk looked: the next scan sees it again
		// (its time changed), and reads it whole.
		return errors.New("changed while read")
	}
	sum := sha256.Sum256(data)
	e.Hash = hex.EncodeToString(sum[:])
	switch {
	case binary(data):
		s.notes = append(s.notes, fmt.Sprintf("%s is binary: recorded by its hash, not restorable", rel))
	case s.bytes+len(data) > maxPointBytes:
		s.notes = append(s.notes, fmt.Sprintf("%s: the point's contents passed %d MiB: recorded by its hash, not restorable", rel, maxPointBytes>>20))
	default:
		e.Stored = true
		if _, ok := s.contents[e.Hash]; !ok {
			s.contents[e.Hash] = data
			s.bytes += len(data)
		}
	}
	return nil
}

// maxPointBytes bounds the contents one point reads and stores (its first,
// the whole folder, above all): past it, files are recorded by hash.
const maxPointBytes = 256 << 20

// openRegular opens a regular file of the folder for reading, through its
// root (a file swapped for a link since the walk saw it is not followed
// out of the folder) and without blocking (a FIFO put in its place would
// hold the scan for ever).
func (t *Tracker) openRegular(rel string) (*os.File, error) {
	f, err := t.root.OpenFile(filepath.FromSlash(rel), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		return nil, errors.New("not a regular file")
	}
	return f, nil
}

// binary reports whether data looks binary: a NUL byte in its first 8000
// bytes, as git decides.
func binary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}

// readGitignore adds the folder's .gitignore, if it is a regular file, to
// ign.
func (t *Tracker) readGitignore(ign *gitignore.Matcher, rel string) {
	f, err := t.openRegular(path.Join(rel, ".gitignore"))
	if err != nil {
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxGitignore))
	if err != nil {
		return
	}
	ign.Add(strings.TrimPrefix(path.Clean("/"+rel), "/"), data)
}
