package backend

import "context"

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
