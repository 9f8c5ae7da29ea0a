//go:build unix

package backend

import (
	"context"
	"io"
	"slices"

	"golang.org/x/sys/unix"
)

// fileID tells one file from another: its device and inode.
type fileID struct{ dev, ino uint64 }

// idOf is the identity of the file st describes (Dev is not a uint64 on
// every system).
func idOf(st *unix.Stat_t) fileID { return fileID{dev: uint64(st.Dev), ino: st.Ino} }

// textFile opens the regular file at the clean virtual path p as Read
// does (the same checks, the same errors) and reads it. ok says whether it
// is a file Buffered asks its buffers about: at most the read limit long
// and textual; content is then the file's bytes on disk.
func (f *FilesystemBackend) textFile(p string) (content []byte, id fileID, ok bool, err error) {
	fd, st, err := f.openFile(p)
	if err != nil {
		return nil, fileID{}, false, err
	}
	defer unix.Close(fd)
	id = idOf(st)
	if f.maxSize >= 0 && st.Size > f.maxSize {
		return nil, id, false, nil
	}
	// Bounded, as the file may grow while it is read.
	limit := int64(-1)
	if f.maxSize >= 0 {
		limit = f.maxSize + 1
	}
	b, err := readAtMost(fd, st.Size, limit)
	if err != nil {
		return nil, id, false, err
	}
	if f.maxSize >= 0 && int64(len(b)) > f.maxSize || !textual(b) {
		return nil, id, false, nil
	}
	return b, id, true, nil
}

// readAtMost reads fd to its end, expecting about size bytes, and stops
// after limit bytes (no limit when negative).
func readAtMost(fd int, size, limit int64) ([]byte, error) {
	if limit < 0 {
		return readAll(fd, size)
	}
	buf := make([]byte, 0, min(size, limit)+512)
	r := io.LimitReader(fdReader(fd), limit)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, 32<<10)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// sameFile reports, as an error, that the clean virtual path p no longer
// leads to the file id the way Read reaches files (a symbolic link put on
// the way is refused as Read refuses it): what the buffers answered for p
// may be another file's.
func (f *FilesystemBackend) sameFile(p string, id fileID) error {
	fd, st, err := f.openFile(p)
	if err != nil {
		return err
	}
	unix.Close(fd)
	if idOf(st) != id {
		return errChanged
	}
	return nil
}

// placeFor makes the missing directories of the clean virtual path p, as
// Write and Upload do, and checks that a file may be put there: nothing
// is at p, or, with replace, a regular file is. The errors are Write's
// (replace false) or Upload's.
func (f *FilesystemBackend) placeFor(ctx context.Context, op, p string, replace bool) error {
	dirfd, name, err := f.openParent(p, f.making(ctx))
	if err != nil {
		return writeErr(op, p, err)
	}
	defer unix.Close(dirfd)
	var st unix.Stat_t
	err = unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == unix.ENOENT:
		return nil
	case err != nil:
		return fsErr(op, p, err)
	case !replace:
		return writeErr(op, p, unix.EEXIST)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return nil
	case unix.S_IFDIR:
		return fsErr(op, p, unix.EISDIR)
	case unix.S_IFLNK:
		return fsErr(op, p, unix.ELOOP)
	}
	return opErr(op, p, errNotRegular)
}

// linkedNow reports whether the clean virtual path p has a symbolic link
// on its way or at its end now: a buffer written to p after placeFor
// checked it may then have gone where the link points.
func (f *FilesystemBackend) linkedNow(p string) bool {
	dirfd, name, err := f.openParent(p, nil)
	if err != nil {
		return err == unix.ELOOP
	}
	defer unix.Close(dirfd)
	return isSymlinkAt(dirfd, name)
}
