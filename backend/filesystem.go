package backend

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	// ReadOnly lists host paths (files or directories, a directory
	// covering everything below it) the backend may read but never
	// writes, edits, uploads or appends to, wherever the root is: a root
	// that holds one of them, or lies below one, is covered as well (the
	// user's ~/.deepagents, or shell start-up files, under a workspace at
	// the home directory). They are matched against each file's real
	// path: symbolic links in the listed paths and in the root are
	// resolved when the backend is made, and a listed path that does not
	// exist yet is protected where it would be created.
	ReadOnly []string
	// Unreadable lists host paths the backend neither reads nor writes,
	// matched as ReadOnly is (configuration files that hold keys, say):
	// reads, edits and writes are refused with ErrPermission, and
	// listings, globs and greps leave them out.
	Unreadable []string
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
	// readOnly and unreadable are FilesystemOptions.ReadOnly and
	// Unreadable: clean virtual paths below the root in virtual mode,
	// real host paths otherwise.
	readOnly, unreadable []string
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
	// In virtual mode no symbolic link is followed below the root, so the
	// real path of a virtual path is the root's real path joined with it.
	real := abs
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		real = r
	}
	f.readOnly = f.hostRules(real, abs, opts.ReadOnly)
	f.unreadable = f.hostRules(real, abs, opts.Unreadable)
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

// hostLocks serialise the writes to each host file of every
// FilesystemBackend, with those of LockHostFile's callers.
var hostLocks pathLocks

// LockHostFile locks the host file at the absolute path p against the
// writes of the FilesystemBackends (write, edit, upload, append: each
// reads and replaces the file under the lock) and returns the unlock
// function: what a workspace's merge into the folder holds while it
// reads a file and replaces it (package backend/isolate), so that an
// agent's edit meanwhile is neither lost nor loses the merge. Hold one
// at a time.
func LockHostFile(p string) (unlock func()) {
	return hostLocks.lock(filepath.Clean(p))
}

// lock locks the host file of the clean path p (see LockHostFile).
func (f *FilesystemBackend) lock(p string) func() {
	return hostLocks.lock(f.hostPath(p))
}

// hostPath returns the host path of the clean virtual path p, for messages
// and directory reading only: files are never opened by it.
func (f *FilesystemBackend) hostPath(p string) string {
	if !f.virtual {
		return filepath.FromSlash(p)
	}
	return filepath.Join(f.root, filepath.FromSlash(p))
}

// resolvedPath returns the absolute path p with the symbolic links of its
// longest existing part resolved: the place a file at p is, or would be
// created at.
func resolvedPath(p string) string { return realPaths{}.of(p) }

// realPaths resolves host paths as resolvedPath does, remembering the real
// path of each one it met: a session's dozens of protected files share a
// few folders, whose components are then stat'ed once rather than once
// per file (filepath.EvalSymlinks stats every component of every path,
// and again for each parent tried when a file does not exist).
type realPaths map[string]string

// of returns the real path of p. A component that is not a symbolic link
// (or does not exist) is its parent's real path joined with its name; a
// link is resolved whole by filepath.EvalSymlinks; a dangling one, like a
// missing file, is its parent's real path joined with its name.
func (m realPaths) of(p string) string {
	p = filepath.Clean(p)
	if r, ok := m[p]; ok {
		return r
	}
	r := p
	if parent := filepath.Dir(p); parent != p {
		r = filepath.Join(m.of(parent), filepath.Base(p))
		if st, err := os.Lstat(p); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			if e, err := filepath.EvalSymlinks(p); err == nil {
				r = e
			}
		}
	}
	m[p] = r
	return r
}

// hostRules turns host paths into what the backend matches: in virtual
// mode, the virtual paths they have below the root (real is the root's
// real path, abs the root as given), "/" for a path at or above the root;
// otherwise their real host paths. Each path counts both as written and
// resolved, so replacing a symbolic link later does not move the rule.
func (f *FilesystemBackend) hostRules(real, abs string, paths []string) []string {
	var out []string
	resolved := realPaths{}
	add := func(p string) {
		p = filepath.ToSlash(p)
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			var err error
			if p, err = filepath.Abs(p); err != nil {
				continue
			}
		}
		for _, host := range []string{filepath.Clean(p), resolved.of(p)} {
			if !f.virtual {
				add(host)
				continue
			}
			for _, root := range []string{real, abs} {
				switch {
				case underHost(root, host):
					add("/")
				case underHost(host, root):
					add("/" + filepath.ToSlash(strings.TrimPrefix(host[len(root):], string(filepath.Separator))))
				}
			}
		}
	}
	return out
}

// underHost reports whether the clean host path p is dir or below it.
func underHost(p, dir string) bool {
	if dir == string(filepath.Separator) {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// matchesHost reports whether the clean path p (virtual, or a host path
// outside virtual mode) falls under one of rules.
func (f *FilesystemBackend) matchesHost(p string, rules []string) bool {
	if len(rules) == 0 {
		return false
	}
	if !f.virtual {
		p = filepath.ToSlash(resolvedPath(filepath.FromSlash(p)))
	}
	for _, r := range rules {
		if under(p, r) {
			return true
		}
	}
	return false
}

// guard refuses access a to the clean path p when FilesystemOptions.
// ReadOnly or Unreadable rule it out.
func (f *FilesystemBackend) guard(op, p string, a Access) error {
	if f.matchesHost(p, f.unreadable) {
		return fmt.Errorf("%s %s: %w: the backend keeps this path out of reach", op, p, ErrPermission)
	}
	if a&AccessWrite != 0 && f.matchesHost(p, f.readOnly) {
		return fmt.Errorf("%s %s: %w: the backend keeps this path read-only", op, p, ErrPermission)
	}
	return nil
}

// hidden reports whether the clean path p is unreadable, for leaving it
// out of listings, globs and greps.
func (f *FilesystemBackend) hidden(p string) bool { return f.matchesHost(p, f.unreadable) }

// mayHide reports whether the listing of the clean directory p may hold
// an unreadable entry.
func (f *FilesystemBackend) mayHide(p string) bool {
	if len(f.unreadable) == 0 {
		return false
	}
	if !f.virtual {
		return true
	}
	for _, r := range f.unreadable {
		if r == "/" || parentDir(r) == p {
			return true
		}
	}
	return false
}

// visible drops the unreadable entries of a listing or glob.
func (f *FilesystemBackend) visible(fs []FileInfo) []FileInfo {
	if len(f.unreadable) == 0 {
		return fs
	}
	return slices.DeleteFunc(fs, func(fi FileInfo) bool { return f.hidden(fi.Path) })
}
