//go:build !unix

package backend

import "context"

// The methods below are unreachable, as the FilesystemBackend's of
// fs_other.go are: NewFilesystemBackend fails first.

type fileID struct{}

func (f *FilesystemBackend) textFile(string) ([]byte, fileID, bool, error) {
	return nil, fileID{}, false, fsSupported()
}

func (f *FilesystemBackend) sameFile(string, fileID) error { return fsSupported() }

func (f *FilesystemBackend) placeFor(context.Context, string, string, bool) error {
	return fsSupported()
}

func (f *FilesystemBackend) linkedNow(string) bool { return false }

func (f *FilesystemBackend) put(context.Context, string, string, []byte) error {
	return fsSupported()
}

func fsErr(op, p string, err error) error { return opErr(op, p, err) }
