//go:build unix && !linux

package backend

import (
	"os"

	"golang.org/x/sys/unix"
)

// readNames lists the directory open at fd (which stays open): its files
// and directories, in no particular order. name is its host path, used only
// by the standard library to type entries on file systems that do not
// report types.
func readNames(fd int, name string) ([]dirent, error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(dup)
	d := os.NewFile(uintptr(dup), name)
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]dirent, 0, len(entries))
	for _, e := range entries {
		if t := e.Type(); t.IsDir() || t.IsRegular() {
			out = append(out, dirent{name: e.Name(), isDir: t.IsDir()})
		}
	}
	return out, nil
}
