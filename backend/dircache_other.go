//go:build unix && !linux

package backend

// listDirText lists the directory open at fd (host path host) as ListText
// does, reading it each time: only Linux keeps listings between calls.
func listDirText(fd int, prefix, host string) (string, error) {
	entries, err := readNames(fd, host)
	if err != nil {
		return "", err
	}
	sortDirents(entries)
	return formatDirents(prefix, entries), nil
}
