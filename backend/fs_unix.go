//go:build unix

package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func fsSupported() error { return nil }

const (
	oDir  = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	oRead = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
)

// errSymlink explains an ELOOP from O_NOFOLLOW.
var errSymlink = errors.New("symbolic links are not followed")

// fsErr maps a system error to the package's sentinels, keeping both.
func fsErr(op, p string, err error) error {
	var sentinel error
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR):
		sentinel = ErrNotFound
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EMLINK):
		return fmt.Errorf("%s %s: %w: %w", op, p, ErrPermission, errSymlink)
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM), errors.Is(err, unix.EROFS):
		sentinel = ErrPermission
	case errors.Is(err, unix.EISDIR):
		sentinel = ErrIsDir
	case errors.Is(err, unix.EEXIST):
		sentinel = ErrExists
	case errors.Is(err, unix.ENAMETOOLONG), errors.Is(err, unix.EINVAL), errors.Is(err, unix.EILSEQ):
		sentinel = ErrInvalidPath
	default:
		return fmt.Errorf("%s %s: %w", op, p, err)
	}
	if errors.Is(err, sentinel) {
		return fmt.Errorf("%s %s: %w", op, p, err)
	}
	return fmt.Errorf("%s %s: %w: %w", op, p, sentinel, err)
}

// noFollow is O_NOFOLLOW for the directories on the way to a path: always
// in virtual mode, never otherwise.
func (f *FilesystemBackend) noFollow() int {
	if f.virtual {
		return unix.O_NOFOLLOW
	}
	return 0
}

func openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// openDir opens the directory at the clean virtual path p one element at a
// time (see the Filesystem comment). With a made function it makes missing
// directories, and calls made with each one's clean virtual path and
// descriptor; with nil it makes none.
func (f *FilesystemBackend) openDir(p string, made func(p string, fd int)) (int, error) {
	var fd int
	if f.dir != nil {
		// Walk from the root opened once; fd stays -1 until the walk
		// owns a descriptor of its own.
		root := int(f.dir.Fd())
		if p == "/" {
			// A new open file description, not a dup: a directory's
			// read position would be shared with every other user.
			return openat(root, ".", oDir, 0)
		}
		return f.walkFrom(root, -1, p, made)
	}
	base := f.root
	if !f.virtual {
		base = "/"
	}
	fd, err := openat(unix.AT_FDCWD, base, oDir, 0)
	if err != nil {
		return -1, err
	}
	if p == "/" {
		return fd, nil
	}
	return f.walkFrom(fd, fd, p, made)
}

// walkFrom opens the directories of the clean path p one element at a time
// from the directory cur, never following a symbolic link in virtual mode.
// owned is cur when the walk must close it, -1 when cur is borrowed. made
// is openDir's.
func (f *FilesystemBackend) walkFrom(cur, owned int, p string, made func(string, int)) (int, error) {
	end := 0 // of the path walked so far, in p
	for name := range strings.SplitSeq(p[1:], "/") {
		end += 1 + len(name)
		nfd, err := openat(cur, name, oDir|f.noFollow(), 0)
		if err == unix.ENOENT && made != nil {
			var mkErr error
			if mkErr = unix.Mkdirat(cur, name, 0o755); mkErr == nil || mkErr == unix.EEXIST {
				nfd, err = openat(cur, name, oDir|f.noFollow(), 0)
			}
			if mkErr == nil && err == nil {
				made(p[:end], nfd)
			}
		}
		if err == unix.ENOTDIR && f.virtual && isSymlinkAt(cur, name) {
			err = unix.ELOOP // Linux reports ENOTDIR for a symlink with O_DIRECTORY|O_NOFOLLOW
		}
		if owned >= 0 {
			unix.Close(owned)
		}
		if err != nil {
			return -1, err
		}
		cur, owned = nfd, nfd
	}
	return owned, nil
}

func isSymlinkAt(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

// openParent opens the directory holding the clean virtual path p and
// returns it with p's last element.
func (f *FilesystemBackend) openParent(p string, made func(string, int)) (int, string, error) {
	if p == "/" {
		return -1, "", unix.EISDIR
	}
	fd, err := f.openDir(parentDir(p), made)
	return fd, baseName(p), err
}

// making is the made function of a write's walk: it makes the missing
// folders, and tells ctx's observer of each (WithChanges).
func (f *FilesystemBackend) making(ctx context.Context) func(string, int) {
	if !observed(ctx) {
		return func(string, int) {}
	}
	return func(p string, fd int) {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil {
			Report(ctx, Change{Path: f.hostPath(p), Info: newStatInfo(baseName(p), &st)})
		}
	}
}

// telling is replaceFile's tell for the clean virtual path p: it tells
// ctx's observer of the new file (told).
func (f *FilesystemBackend) telling(ctx context.Context, p string, content []byte) func(int) {
	if !observed(ctx) {
		return nil
	}
	return func(fd int) { f.told(ctx, p, fd, content) }
}

// told tells ctx's observer of the file name in dirfd (at the clean
// virtual path p) that a write left as fd holds, with content, its whole
// content.
func (f *FilesystemBackend) told(ctx context.Context, p string, fd int, content []byte) {
	if !observed(ctx) {
		return
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil {
		Report(ctx, Change{Path: f.hostPath(p), Info: newStatInfo(baseName(p), &st), Content: content})
	}
}

// openRegular opens name in dirfd for reading without following a symbolic
// link, and checks that it is a regular file.
func openRegular(dirfd int, name string) (int, *unix.Stat_t, error) {
	fd, err := openat(dirfd, name, oRead, 0)
	if err != nil {
		return -1, nil, err
	}
	st := new(unix.Stat_t)
	if err := unix.Fstat(fd, st); err != nil {
		unix.Close(fd)
		return -1, nil, err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return fd, st, nil
	case unix.S_IFDIR:
		unix.Close(fd)
		return -1, nil, unix.EISDIR
	}
	unix.Close(fd)
	return -1, nil, errNotRegular
}

var errNotRegular = fmt.Errorf("%w: not a regular file", ErrPermission)

// openFile opens the regular file at the clean virtual path p for reading.
func (f *FilesystemBackend) openFile(p string) (int, *unix.Stat_t, error) {
	dirfd, name, err := f.openParent(p, nil)
	if err != nil {
		return -1, nil, err
	}
	defer unix.Close(dirfd)
	return openRegular(dirfd, name)
}

// fdReader reads a descriptor with no os.File around it.
type fdReader int

func (r fdReader) Read(b []byte) (int, error) {
	for {
		n, err := unix.Read(int(r), b)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(b) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// readFull reads from fd into buf until buf is full or the file ends.
func readFull(fd int, buf []byte) (int, error) {
	n, err := io.ReadFull(fdReader(fd), buf)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return n, err
}

// readAll reads the rest of fd, expecting about size bytes.
func readAll(fd int, size int64) ([]byte, error) {
	buf := make([]byte, 0, size+512)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, 32<<10)
		}
		n, err := fdReader(fd).Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func statTime(st *unix.Stat_t) time.Time {
	sec, nsec := st.Mtim.Unix()
	return time.Unix(sec, nsec).UTC()
}

// List implements Backend.
func (f *FilesystemBackend) List(ctx context.Context, path string) ([]FileInfo, error) {
	if g, err := f.at(ctx); err != nil {
		return nil, err
	} else if g != f {
		return g.List(ctx, path)
	}
	return f.list(ctx, path, false)
}

// ListNames implements NameLister: the entries' kinds come from the
// directory itself, with no stat of each.
func (f *FilesystemBackend) ListNames(ctx context.Context, path string) ([]FileInfo, error) {
	if g, err := f.at(ctx); err != nil {
		return nil, err
	} else if g != f {
		return g.ListNames(ctx, path)
	}
	return f.list(ctx, path, true)
}

func (f *FilesystemBackend) list(ctx context.Context, path string, names bool) ([]FileInfo, error) {
	p, err := f.clean(path)
	if err != nil {
		return nil, err
	}
	if err := f.guard("list", p, AccessRead); err != nil {
		return nil, err
	}
	fd, err := f.openDir(p, nil)
	if err == unix.ENOENT || err == unix.ENOTDIR {
		return nil, nil
	}
	if err != nil {
		return nil, fsErr("list", p, err)
	}
	defer unix.Close(fd)
	entries, err := readNames(fd, f.hostPath(p))
	if err != nil {
		return nil, fsErr("list", p, err)
	}
	sortDirents(entries)
	// The paths are cut from one string rather than allocated one by one.
	prefix := listPrefix(p)
	size := 0
	for _, e := range entries {
		size += len(prefix) + len(e.name)
	}
	var all strings.Builder
	all.Grow(size)
	for _, e := range entries {
		all.WriteString(prefix)
		all.WriteString(e.name)
	}
	paths := all.String()
	out := make([]FileInfo, 0, len(entries))
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := len(prefix) + len(e.name)
		path := paths[:n]
		paths = paths[n:]
		if names {
			out = append(out, FileInfo{Path: path, IsDir: e.isDir})
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue // gone meanwhile
		}
		fi := FileInfo{Path: path, ModTime: statTime(&st)}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			fi.IsDir = true
		case unix.S_IFREG:
			fi.Size = st.Size
		default:
			continue
		}
		out = append(out, fi)
	}
	return f.visible(out), nil
}

// ListText implements TextLister. The listings of large directories (64
// entries or more) are kept between calls where the system reports
// every change to them: on Linux, with inotify, on local file systems
// (ext4, XFS, Btrfs, tmpfs and the like; not on network or FUSE file
// systems). A directory changed behind the backend's back, by a command or
// another process, is listed as it is when ListText is called: the kernel
// queues the notice of a change before the call that made it returns, and
// ListText reads the queue before it answers. Other directories, and other
// systems, are read each time.
func (f *FilesystemBackend) ListText(ctx context.Context, path string) (string, error) {
	if g, err := f.at(ctx); err != nil {
		return "", err
	} else if g != f {
		return g.ListText(ctx, path)
	}
	p, err := f.clean(path)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := f.guard("list", p, AccessRead); err != nil {
		return "", err
	}
	if f.mayHide(p) {
		// The kept text cannot leave entries out: list them one by one.
		infos, err := f.list(ctx, p, true)
		return FormatListing(infos), err
	}
	fd, err := f.openDir(p, nil)
	if err == unix.ENOENT || err == unix.ENOTDIR {
		return "", nil
	}
	if err != nil {
		return "", fsErr("list", p, err)
	}
	defer unix.Close(fd)
	text, err := listDirText(fd, listPrefix(p), f.hostPath(p))
	if err != nil {
		return "", fsErr("list", p, err)
	}
	return text, nil
}

// listPrefix is what the paths of the entries of the clean directory p
// start with.
func listPrefix(p string) string {
	if p == "/" {
		return p
	}
	return p + "/"
}

// sortDirents sorts entries by name. Every entry of a listing shares its
// directory's prefix, so this sorts the paths; strings sort faster than the
// FileInfo structs that hold them.
func sortDirents(entries []dirent) {
	slices.SortFunc(entries, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
}

// formatDirents renders sorted entries as ListText does, each path being
// prefix and the entry's name.
func formatDirents(prefix string, entries []dirent) string {
	size := 0
	for _, e := range entries {
		size += len(prefix) + len(e.name) + 2
	}
	b := make([]byte, 0, size)
	for i, e := range entries {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, prefix...)
		b = append(b, e.name...)
		if e.isDir {
			b = append(b, '/')
		}
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// dirent is one file or directory in a directory listing.
type dirent struct {
	name  string
	isDir bool
}

// wholeReadSize is the size up to which Read reads a file in one go.
const wholeReadSize = 1 << 20

// Read implements Backend.
func (f *FilesystemBackend) Read(ctx context.Context, path string, offset, limit int) (ReadResult, error) {
	if g, err := f.at(ctx); err != nil {
		return ReadResult{}, err
	} else if g != f {
		return g.Read(ctx, path, offset, limit)
	}
	p, err := f.clean(path)
	if err != nil {
		return ReadResult{}, err
	}
	if err := f.guard("read", p, AccessRead); err != nil {
		return ReadResult{}, err
	}
	fd, st, err := f.openFile(p)
	if err != nil {
		return ReadResult{}, fsErr("read", p, err)
	}
	defer unix.Close(fd)
	var res ReadResult
	if st != nil && st.Size >= 0 && st.Size <= wholeReadSize {
		// A small file is read whole into a buffer of its size and split
		// in place, rather than through a 64 KiB reader.
		buf := make([]byte, st.Size)
		n, rerr := io.ReadFull(fdReader(fd), buf)
		if rerr != nil && rerr != io.ErrUnexpectedEOF && rerr != io.EOF {
			return ReadResult{}, fsErr("read", p, rerr)
		}
		res, err = stringLines(unsafe.String(unsafe.SliceData(buf), n), offset, limit)
	} else {
		res, err = scanLinesMax(fdReader(fd), offset, limit, f.maxSize)
	}
	if err != nil && !errors.Is(err, ErrOffset) {
		return ReadResult{}, fsErr("read", p, err)
	}
	return res, err
}

// writeErr maps an error from creating a file: a missing or non-directory
// parent there means a file stands where a directory must be.
func writeErr(op, p string, err error) error {
	if err == unix.ENOTDIR {
		return fsErr(op, p, fmt.Errorf("%w: a parent is a file", ErrInvalidPath))
	}
	return fsErr(op, p, err)
}

// Write implements Backend.
func (f *FilesystemBackend) Write(ctx context.Context, path, content string) error {
	if g, err := f.at(ctx); err != nil {
		return err
	} else if g != f {
		return g.Write(ctx, path, content)
	}
	p, err := f.clean(path)
	if err != nil {
		return err
	}
	if p == "/" {
		return opErr("write", p, fmt.Errorf("%w (a directory)", ErrExists))
	}
	if err := f.guard("write", p, AccessWrite); err != nil {
		return err
	}
	defer f.lock(p)()
	dirfd, name, err := f.openParent(p, f.making(ctx))
	if err != nil {
		return writeErr("write", p, err)
	}
	defer unix.Close(dirfd)
	fd, err := openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return writeErr("write", p, err)
	}
	err = writeAll(fd, stringBytes(content))
	if err == nil {
		f.told(ctx, p, fd, stringBytes(content))
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		unix.Unlinkat(dirfd, name, 0)
		return fsErr("write", p, err)
	}
	return nil
}

// replaceFile atomically replaces (or creates) name in dirfd with content:
// it writes a temporary file next to it and renames it over name. tell,
// when not nil, is given the new file's descriptor once it is whole.
func replaceFile(dirfd int, name string, content []byte, perm uint32, tell func(fd int)) error {
	var tmp string
	var fd int
	var err error
	for range 10 {
		tmp = fmt.Sprintf(".deepagents-%016x.tmp", rand.Uint64())
		fd, err = openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		if err != unix.EEXIST {
			break
		}
	}
	if err != nil {
		return err
	}
	err = writeAll(fd, content)
	if err == nil {
		err = unix.Fchmod(fd, perm)
	}
	if err == nil && tell != nil {
		tell(fd)
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dirfd, tmp, dirfd, name)
	}
	if err != nil {
		unix.Unlinkat(dirfd, tmp, 0)
	}
	return err
}

// Edit implements Backend.
func (f *FilesystemBackend) Edit(ctx context.Context, path, oldString, newString string, replaceAll bool) (int, error) {
	if g, err := f.at(ctx); err != nil {
		return 0, err
	} else if g != f {
		return g.Edit(ctx, path, oldString, newString, replaceAll)
	}
	p, err := f.clean(path)
	if err != nil {
		return 0, err
	}
	if err := f.guard("edit", p, AccessAll); err != nil {
		return 0, err
	}
	defer f.lock(p)()
	dirfd, name, err := f.openParent(p, nil)
	if err != nil {
		return 0, fsErr("edit", p, err)
	}
	defer unix.Close(dirfd)
	fd, st, err := openRegular(dirfd, name)
	if err != nil {
		return 0, fsErr("edit", p, err)
	}
	b, err := readAll(fd, st.Size)
	unix.Close(fd)
	if err != nil {
		return 0, fsErr("edit", p, err)
	}
	content, n, err := ReplaceIn(string(b), oldString, newString, replaceAll)
	if err != nil {
		return 0, opErr("edit", p, err)
	}
	if err := replaceFile(dirfd, name, stringBytes(content), uint32(st.Mode)&0o7777, f.telling(ctx, p, stringBytes(content))); err != nil {
		return 0, fsErr("edit", p, err)
	}
	return n, nil
}

// upload writes one file, replacing a regular file that is there.
func (f *FilesystemBackend) upload(ctx context.Context, p string, content []byte) error {
	if p == "/" {
		return opErr("upload", p, ErrIsDir)
	}
	if err := f.guard("upload", p, AccessWrite); err != nil {
		return err
	}
	defer f.lock(p)()
	return f.put(ctx, "upload", p, content)
}

// put is upload once the path is checked and locked: it replaces the
// regular file at the clean virtual path p (or creates it) with content.
func (f *FilesystemBackend) put(ctx context.Context, op, p string, content []byte) error {
	dirfd, name, err := f.openParent(p, f.making(ctx))
	if err != nil {
		return writeErr(op, p, err)
	}
	defer unix.Close(dirfd)
	perm := uint32(0o644)
	var st unix.Stat_t
	switch err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil:
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			perm = uint32(st.Mode) & 0o7777
		case unix.S_IFDIR:
			return fsErr(op, p, unix.EISDIR)
		case unix.S_IFLNK:
			return fsErr(op, p, unix.ELOOP)
		default:
			return opErr(op, p, errNotRegular)
		}
	case err != unix.ENOENT:
		return fsErr(op, p, err)
	}
	if err := replaceFile(dirfd, name, content, perm, f.telling(ctx, p, content)); err != nil {
		return fsErr(op, p, err)
	}
	return nil
}

// Upload implements Backend.
func (f *FilesystemBackend) Upload(ctx context.Context, files []File) []FileResult {
	if g, err := f.at(ctx); err != nil {
		return redirectFailed(files, err)
	} else if g != f {
		return g.Upload(ctx, files)
	}
	out := make([]FileResult, len(files))
	for i, file := range files {
		out[i].Path = file.Path
		if err := ctx.Err(); err != nil {
			out[i].Err = err
			continue
		}
		p, err := f.clean(file.Path)
		if err != nil {
			out[i].Err = err
			continue
		}
		out[i].Err = f.upload(ctx, p, file.Content)
	}
	return out
}

// Download implements Backend.
func (f *FilesystemBackend) Download(ctx context.Context, paths []string) []FileResult {
	if g, err := f.at(ctx); err != nil {
		return redirectFailed(paths, err)
	} else if g != f {
		return g.Download(ctx, paths)
	}
	out := make([]FileResult, len(paths))
	for i, path := range paths {
		out[i].Path = path
		if err := ctx.Err(); err != nil {
			out[i].Err = err
			continue
		}
		p, err := f.clean(path)
		if err != nil {
			out[i].Err = err
			continue
		}
		if err := f.guard("download", p, AccessRead); err != nil {
			out[i].Err = err
			continue
		}
		fd, st, err := f.openFile(p)
		if err != nil {
			out[i].Err = fsErr("download", p, err)
			continue
		}
		if f.maxSize >= 0 && st.Size > f.maxSize {
			unix.Close(fd)
			out[i].Err = fmt.Errorf("download %s: %w: %d bytes, over the limit of %d", p, ErrTooLarge, st.Size, f.maxSize)
			continue
		}
		b, err := readAll(fd, st.Size)
		unix.Close(fd)
		if err != nil {
			out[i].Err = fsErr("download", p, err)
			continue
		}
		out[i].Content = b
	}
	return out
}

// Append implements Appender: text is written at the end of the file with
// O_APPEND, creating the file and its parent directories when missing, so a
// log that only grows is never read back or rewritten (and is not subject
// to the size limit of reads and downloads).
func (f *FilesystemBackend) Append(ctx context.Context, path, text string) error {
	if g, err := f.at(ctx); err != nil {
		return err
	} else if g != f {
		return g.Append(ctx, path, text)
	}
	p, err := f.clean(path)
	if err != nil {
		return err
	}
	if p == "/" {
		return opErr("append", p, ErrIsDir)
	}
	if err := f.guard("append", p, AccessWrite); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	defer f.lock(p)()
	dirfd, name, err := f.openParent(p, f.making(ctx))
	if err != nil {
		return writeErr("append", p, err)
	}
	defer unix.Close(dirfd)
	fd, err := openat(dirfd, name, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fsErr("append", p, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fsErr("append", p, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return opErr("append", p, errNotRegular)
	}
	if err := writeAll(fd, stringBytes(text)); err != nil {
		return fsErr("append", p, err)
	}
	f.told(ctx, p, fd, nil) // appended to: the observer reads what it needs
	return nil
}
