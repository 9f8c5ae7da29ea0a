package backend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Redirect sends the calls that reach a host folder's backends to another
// folder, for the calls of one context (WithRedirect): what gives a
// subagent a workspace of its own (package backend/isolate) while it uses
// its caller's tools. A FilesystemBackend in virtual mode rooted at From
// (and so a sandbox.LocalShell's files and its commands, whose working
// directory and writable folder become To) works in To instead, with the
// same options: the same virtual paths, the same read-only and unreadable
// paths. Backends rooted elsewhere (the user's folder, the store's routes)
// are not redirected, nor is a backend in non-virtual mode, whose paths are
// host paths.
//
// The backends made for To are kept by the Redirect, made at their first
// use; Close closes them. A Redirect is safe for concurrent use.
type Redirect struct {
	from, to string

	mu     sync.Mutex
	made   map[any]any
	closes []func() error
	closed bool
}

// ErrRedirectClosed is returned by the calls of a context whose Redirect
// was closed.
var ErrRedirectClosed = errors.New("backend: the workspace redirect is closed")

// NewRedirect returns a Redirect from the host folder from to the folder
// to; both must be absolute.
func NewRedirect(from, to string) (*Redirect, error) {
	if !filepath.IsAbs(from) || !filepath.IsAbs(to) {
		return nil, fmt.Errorf("backend: redirect %q to %q: the folders must be absolute", from, to)
	}
	return &Redirect{from: filepath.Clean(from), to: filepath.Clean(to), made: map[any]any{}}, nil
}

// From returns the folder redirected.
func (r *Redirect) From() string { return r.from }

// To returns the folder the calls go to instead.
func (r *Redirect) To() string { return r.to }

// Derive returns what build made for orig, building it at its first call:
// a backend's counterpart in To, made once per Redirect. close, when build
// returns one, is called by Close.
func (r *Redirect) Derive(orig any, build func() (v any, close func() error, err error)) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrRedirectClosed
	}
	if v, ok := r.made[orig]; ok {
		return v, nil
	}
	v, closeFn, err := build()
	if err != nil {
		return nil, err
	}
	r.made[orig] = v
	if closeFn != nil {
		r.closes = append(r.closes, closeFn)
	}
	return v, nil
}

// Close closes what the Redirect made; a call in its context fails after
// that with ErrRedirectClosed.
func (r *Redirect) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	for _, c := range r.closes {
		errs = append(errs, c())
	}
	r.made, r.closes = nil, nil
	return errors.Join(errs...)
}

type redirectKey struct{}

// WithRedirect returns a context whose calls to the backends rooted at
// r.From() go to r.To() (see Redirect). The subagent's run, its tools and
// their commands get it.
func WithRedirect(ctx context.Context, r *Redirect) context.Context {
	return context.WithValue(ctx, redirectKey{}, r)
}

// RedirectFor returns the context's Redirect when it redirects the host
// folder root; nil otherwise.
func RedirectFor(ctx context.Context, root string) *Redirect {
	r, _ := ctx.Value(redirectKey{}).(*Redirect)
	if r == nil || r.from != filepath.Clean(root) {
		return nil
	}
	return r
}

// at returns the backend a call in ctx works on: f, or its counterpart in
// the folder ctx redirects f's root to.
func (f *FilesystemBackend) at(ctx context.Context) (*FilesystemBackend, error) {
	if !f.virtual {
		return f, nil
	}
	r := RedirectFor(ctx, f.root)
	if r == nil {
		return f, nil
	}
	v, err := r.Derive(f, func() (any, func() error, error) {
		st, err := os.Stat(r.to)
		if err != nil {
			return nil, nil, fmt.Errorf("filesystem backend: redirected root: %w", err)
		}
		if !st.IsDir() {
			return nil, nil, fmt.Errorf("filesystem backend: redirected root %s is not a directory", r.to)
		}
		dir, err := os.Open(r.to)
		if err != nil {
			return nil, nil, fmt.Errorf("filesystem backend: redirected root: %w", err)
		}
		// The same virtual paths, so the same rules: in virtual mode
		// they are paths below the root.
		g := &FilesystemBackend{root: r.to, dir: dir, virtual: true, maxSize: f.maxSize, readOnly: f.readOnly, unreadable: f.unreadable}
		return g, dir.Close, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*FilesystemBackend), nil
}

// HostRooter is implemented by backends whose files at "/" are a host
// folder's, in virtual mode: FilesystemBackend, and the wrappers that
// forward to one (Composite, Policy).
type HostRooter interface {
	// HostRoot returns the host folder at "/"; "" when there is none.
	HostRoot() string
}

// HostRoot returns the host folder b's "/" is, in virtual mode: the folder
// a Redirect can send b's calls away from; "" when b has none (its files
// are in the state or a store, its paths are host paths, or it does not
// say).
func HostRoot(b Backend) string {
	if h, ok := b.(HostRooter); ok {
		return h.HostRoot()
	}
	return ""
}

// HostRoot implements HostRooter: the root in virtual mode.
func (f *FilesystemBackend) HostRoot() string {
	if !f.virtual {
		return ""
	}
	return f.root
}

// HostRoot implements HostRooter: the default backend's.
func (c *Composite) HostRoot() string { return HostRoot(c.def) }

// HostRoot implements HostRooter: the inner backend's.
func (pol *Policy) HostRoot() string { return HostRoot(pol.inner) }

// redirectFailed is the result of an upload or a download whose
// redirected backend could not be made: the error for each file.
func redirectFailed[T File | string](items []T, err error) []FileResult {
	out := make([]FileResult, len(items))
	for i, it := range items {
		switch v := any(it).(type) {
		case File:
			out[i].Path = v.Path
		case string:
			out[i].Path = v
		}
		out[i].Err = err
	}
	return out
}
