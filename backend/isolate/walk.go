package isolate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"

	"github.com/deepagents-go/deepagents/internal/gitignore"
)

// entry is a file, a link or something else a walk found.
type entry struct {
	mode fs.FileMode
	key  statKey
}

// statKey is what tells a file unchanged without reading it.
type statKey struct {
	size  int64
	mtime int64
	ino   uint64
	mode  fs.FileMode
}

func keyOf(info fs.FileInfo) statKey {
	k := statKey{size: info.Size(), mtime: info.ModTime().UnixNano(), mode: info.Mode()}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		k.ino = uint64(st.Ino)
	}
	return k
}

// errLimit is a walk that met more than its limits.
var errLimit = errors.New("limit")

// walk lists the files, links and special files below root (slash
// paths relative to it), leaving out .git entries and what the folder's
// .gitignore files ignore, without following links. maxFiles and
// maxBytes, when positive, bound what it lists (errLimit past them).
func walk(root string, maxFiles int, maxBytes int64) (map[string]entry, error) {
	out := map[string]entry{}
	var ign gitignore.Matcher
	var total int64
	var visit func(dir string) error
	visit = func(dir string) error {
		host := filepath.Join(root, filepath.FromSlash(dir))
		if b, err := os.ReadFile(filepath.Join(host, ".gitignore")); err == nil {
			ign.Add(dir, b)
		}
		ents, err := os.ReadDir(host)
		if err != nil {
			return err
		}
		for _, d := range ents {
			name := d.Name()
			if name == ".git" {
				continue
			}
			rel := path.Join(dir, name)
			if ign.Ignored(rel, d.IsDir()) {
				continue
			}
			if d.IsDir() {
				if err := visit(rel); err != nil {
					return err
				}
				continue
			}
			info, err := d.Info()
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return err
			}
			out[rel] = entry{mode: info.Mode(), key: keyOf(info)}
			total += info.Size()
			if maxFiles > 0 && len(out) > maxFiles || maxBytes > 0 && total > maxBytes {
				return errLimit
			}
		}
		return nil
	}
	if err := visit(""); err != nil {
		return nil, err
	}
	return out, nil
}

// copyTree copies the entries of src (a walk's) to dst: files with their
// permissions, links as links; special files are left out. An entry gone
// from src since the walk (the folder is in use) is dropped from ents.
func copyTree(src, dst string, ents map[string]entry) error {
	for rel, e := range ents {
		from := filepath.Join(src, filepath.FromSlash(rel))
		to := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		var err error
		switch {
		case e.mode.Type() == fs.ModeSymlink:
			var target string
			if target, err = os.Readlink(from); err == nil {
				err = os.Symlink(target, to)
			}
		case e.mode.IsRegular():
			err = copyFile(from, to, e.mode.Perm())
		}
		if errors.Is(err, fs.ErrNotExist) {
			delete(ents, rel)
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string, perm fs.FileMode) error {
	in, err := os.OpenFile(from, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", from, err)
	}
	return out.Close()
}
