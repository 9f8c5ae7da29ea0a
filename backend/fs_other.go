//go:build !unix

package backend

import (
	"context"
	"errors"
	"fmt"
)

func fsSupported() error {
	return fmt.Errorf("filesystem backend: %w on this system (it needs openat with O_NOFOLLOW)", errors.ErrUnsupported)
}

// The methods below are unreachable: NewFilesystemBackend fails first.

// List implements Backend.
func (f *FilesystemBackend) List(context.Context, string) ([]FileInfo, error) {
	return nil, fsSupported()
}

// Read implements Backend.
func (f *FilesystemBackend) Read(context.Context, string, int, int) (ReadResult, error) {
	return ReadResult{}, fsSupported()
}

// Write implements Backend.
func (f *FilesystemBackend) Write(context.Context, string, string) error { return fsSupported() }

// Edit implements Backend.
func (f *FilesystemBackend) Edit(context.Context, string, string, string, bool) (int, error) {
	return 0, fsSupported()
}

// Grep implements Backend.
func (f *FilesystemBackend) Grep(context.Context, GrepQuery) ([]GrepMatch, error) {
	return nil, fsSupported()
}

// Glob implements Backend.
func (f *FilesystemBackend) Glob(context.Context, string, string) ([]FileInfo, error) {
	return nil, fsSupported()
}

// Upload implements Backend.
func (f *FilesystemBackend) Upload(_ context.Context, files []File) []FileResult {
	out := make([]FileResult, len(files))
	for i := range files {
		out[i] = FileResult{Path: files[i].Path, Err: fsSupported()}
	}
	return out
}

// Download implements Backend.
func (f *FilesystemBackend) Download(_ context.Context, paths []string) []FileResult {
	out := make([]FileResult, len(paths))
	for i := range paths {
		out[i] = FileResult{Path: paths[i], Err: fsSupported()}
	}
	return out
}
