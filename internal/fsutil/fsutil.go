// Package fsutil holds the file helpers more than one layer needs.
package fsutil

import (
	"io"
	"io/fs"
	"os"
)

// CopyFile copies the regular file from to to, which must not exist,
// streamed, with mode perm.
func CopyFile(from, to string, perm fs.FileMode) error {
	in, err := os.Open(from)
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
		return err
	}
	return out.Close()
}
