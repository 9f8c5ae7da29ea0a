package backend

import (
	"context"
	"io/fs"
)

// Change is a file or folder a backend created or changed on the host, as
// it tells the observer of the call's context (WithChanges): what a
// workspace checkpoint records instead of scanning the folder for it.
type Change struct {
	// Path is the entry's absolute host path.
	Path string
	// Info is the entry as the change left it, its Sys() the stat record
	// (*unix.Stat_t on Unix); nil when the backend does not know it, and
	// the observer has to look.
	Info fs.FileInfo
	// Content is a file's whole new content, when the backend wrote it
	// all; nil otherwise. It is the caller's: an observer that keeps it
	// copies it.
	Content []byte
}

type changesKey struct{}

// WithChanges returns a context whose calls to the host's backends
// (FilesystemBackend, sandbox.LocalShell's files, Buffered) tell observe
// of every file and folder they create or change, once the change is made: a
// workspace checkpoint (package rewind) records those instead of walking
// the folder. Commands run by Execute are not followed: what they change is
// found by looking. observe may be called from several goroutines at once.
func WithChanges(ctx context.Context, observe func(Change)) context.Context {
	return context.WithValue(ctx, changesKey{}, observe)
}

// Report tells the context's observer (WithChanges), if any, of a change
// made on the host: what a Backend of one's own that writes host files calls
// once the change is made.
func Report(ctx context.Context, c Change) {
	if observe, _ := ctx.Value(changesKey{}).(func(Change)); observe != nil {
		observe(c)
	}
}

// observed reports whether the context has an observer: what a change
// costs to describe is paid only then.
func observed(ctx context.Context) bool {
	_, ok := ctx.Value(changesKey{}).(func(Change))
	return ok
}
