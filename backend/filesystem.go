package backend

import (
	"fmt"
	"os"
	"path/filepath"
)

// DefaultMaxFileSizeMB is the default FilesystemOptions.MaxFileSizeMB.
const DefaultMaxFileSizeMB = 10

// FilesystemOptions configures a Filesystem. The zero value is the safe
// default: virtual mode, grep skipping files over 10 MB.
type FilesystemOptions struct {
	// NonVirtual turns virtual mode off: paths are then host paths
	// ("/etc/hosts" is the host's /etc/hosts) and are not confined to
	// the root, which only serves as the directory an empty path means.
	// Only the last element of a path is refused when it is a symbolic
	// link. This is the seeds' virtual_mode=False, kept for parity; it is
	// unsafe with an untrusted model.
	NonVirtual bool
	// MaxFileSizeMB bounds the memory one operation spends on a file:
	// grep skips larger files, Download refuses them with ErrTooLarge,
	// and Read returns at most this many bytes of lines (ReadResult.
	// Truncated says when it stopped there; it never reads further than
	// the lines asked for). Zero means DefaultMaxFileSizeMB; a negative
	// value means no limit.
	MaxFileSizeMB int
}

// FilesystemBackend is a Backend over real files under a root directory.
//
// In virtual mode (the default) the virtual path "/src/main.go" is the file
// ROOT/src/main.go and nothing outside ROOT can be reached: paths are
// resolved one element at a time from a descriptor of the root with
// openat(2) and O_NOFOLLOW, so ".." is refused, absolute host paths are
// just names below the root, and a symbolic link anywhere on the way,
// whether to a file or a directory and wherever it points, is refused with
// ErrPermission. Directory walks (grep, glob) hold descriptors from parent
// to child, so renaming a directory into a symbolic link during a walk does
// not redirect it. Symbolic links and special files (FIFOs, devices,
// sockets) are left out of listings, globs and greps.
//
// Edits and uploads replace a file atomically (a temporary file in the same
// directory renamed over it) and are serialised per path within the
// process. Write creates files exclusively (O_EXCL), making any missing
// parent directories.
//
// FilesystemBackend needs a Unix system (Linux, macOS, the BSDs); elsewhere
// NewFilesystem fails.
type FilesystemBackend struct {
	root string // absolute host directory
	// dir is the root, opened once: in virtual mode every path is resolved
	// from it, which saves a lookup of the root's own path per operation
	// and pins the root (replacing the directory, or a link on its path,
	// does not redirect the backend).
	dir     *os.File
	virtual bool
	maxSize int64 // bytes; negative: no limit
	locks   pathLocks
}

var _ Backend = (*FilesystemBackend)(nil)

// NewFilesystemBackend returns a Filesystem backend rooted at the directory root.
func NewFilesystemBackend(root string, opts FilesystemOptions) (*FilesystemBackend, error) {
	if err := fsSupported(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("filesystem backend: root %q: %w", root, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("filesystem backend: root: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("filesystem backend: root %s is not a directory", abs)
	}
	mb := opts.MaxFileSizeMB
	if mb == 0 {
		mb = DefaultMaxFileSizeMB
	}
	max := int64(-1)
	if mb > 0 {
		max = int64(mb) << 20
	}
	f := &FilesystemBackend{root: abs, virtual: !opts.NonVirtual, maxSize: max}
	if f.virtual {
		if f.dir, err = os.Open(abs); err != nil {
			return nil, fmt.Errorf("filesystem backend: root: %w", err)
		}
	}
	return f, nil
}

// Root returns the absolute root directory.
func (f *FilesystemBackend) Root() string { return f.root }

// Virtual reports whether paths are confined to the root.
func (f *FilesystemBackend) Virtual() bool { return f.virtual }

// clean normalises a path argument. In non-virtual mode an empty path means
// the root directory.
func (f *FilesystemBackend) clean(p string) (string, error) {
	if p == "" && !f.virtual {
		return filepath.ToSlash(f.root), nil
	}
	return Clean(p)
}

// hostPath returns the host path of the clean virtual path p, for messages
// and directory reading only: files are never opened by it.
func (f *FilesystemBackend) hostPath(p string) string {
	if !f.virtual {
		return filepath.FromSlash(p)
	}
	return filepath.Join(f.root, filepath.FromSlash(p))
}
