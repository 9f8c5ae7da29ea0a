package backend

import (
	"context"
	"strings"
)

// NameLister is implemented by backends for which listing a directory is
// cheaper without the entries' sizes and modification times: the
// Filesystem saves a system call per entry. ListNames returns what List
// returns, in the same order, except that Size and ModTime may be zero.
type NameLister interface {
	ListNames(ctx context.Context, path string) ([]FileInfo, error)
}

// ListNames lists the directory at path for a caller that needs only the
// entries' paths and which are directories, such as the ls tool: with b's
// ListNames when it has one, else with its List.
func ListNames(ctx context.Context, b Backend, path string) ([]FileInfo, error) {
	if nl, ok := b.(NameLister); ok {
		return nl.ListNames(ctx, path)
	}
	return b.List(ctx, path)
}

// listWith lists path in b, by name only when names is set.
func listWith(ctx context.Context, b Backend, path string, names bool) ([]FileInfo, error) {
	if names {
		return ListNames(ctx, b, path)
	}
	return b.List(ctx, path)
}

// TextLister is implemented by backends that can give a directory's listing
// as text directly, as ListText describes it, more cheaply than building
// it from FileInfo values: the Filesystem keeps the text of large
// directories between calls (see FilesystemBackend).
type TextLister interface {
	ListText(ctx context.Context, path string) (string, error)
}

// ListText returns the listing of the directory at path as the ls tool
// shows it: the entries' paths in List's order, one a line, each
// directory's ending in "/", no newline after the last. An empty or
// missing directory gives "". It uses b's ListText when it has one, else
// formats what ListNames returns.
func ListText(ctx context.Context, b Backend, path string) (string, error) {
	if tl, ok := b.(TextLister); ok {
		return tl.ListText(ctx, path)
	}
	infos, err := ListNames(ctx, b, path)
	if err != nil {
		return "", err
	}
	return FormatListing(infos), nil
}

// FormatListing renders entries as ListText does.
func FormatListing(infos []FileInfo) string {
	size := 0
	for _, fi := range infos {
		size += len(fi.Path) + 2
	}
	var b strings.Builder
	b.Grow(size)
	for i, fi := range infos {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(fi.Path)
		if fi.IsDir && !strings.HasSuffix(fi.Path, "/") {
			b.WriteByte('/')
		}
	}
	return b.String()
}
