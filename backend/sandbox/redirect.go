package sandbox

import (
	"context"
	"path/filepath"

	"github.com/deepagents-go/deepagents/backend"
)

// shellWorkspace is the folder a command runs in, and what its sandbox
// protects there: the shell's own, or the folder the command's context
// redirects the shell's root to (backend.Redirect: a subagent's
// workspace), which is then the sandbox's writable folder instead.
type shellWorkspace struct {
	root    string
	sandbox *Bubblewrap    // nil without the sandbox
	places  *sandboxPlaces // nil without the sandbox
}

// workspace returns the folder a command in ctx runs in.
func (s *LocalShell) workspace(ctx context.Context) (shellWorkspace, error) {
	r := backend.RedirectFor(ctx, s.Root())
	if r == nil || !s.Virtual() {
		return shellWorkspace{root: s.Root(), sandbox: s.sandbox, places: s.places}, nil
	}
	v, err := r.Derive(s, func() (any, func() error, error) {
		ws := shellWorkspace{root: r.To()}
		if s.sandbox != nil {
			if err := sandboxRootAllowed(r.To()); err != nil {
				return nil, nil, err
			}
			sb := *s.sandbox
			// What is protected or hidden in the folder is, in its copy,
			// too (relative paths follow the root already).
			sb.Protected = withMoved(sb.Protected, r.From(), r.To())
			sb.Hidden = withMoved(sb.Hidden, r.From(), r.To())
			ws.sandbox = &sb
			ws.places = newSandboxPlaces(&sb, r.To())
		}
		return ws, nil, nil
	})
	if err != nil {
		return shellWorkspace{}, err
	}
	return v.(shellWorkspace), nil
}

// withMoved returns paths with, after them, each absolute one below from
// as it is below to.
func withMoved(paths []string, from, to string) []string {
	out := append([]string(nil), paths...)
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			continue
		}
		if rel, err := filepath.Rel(from, filepath.Clean(p)); err == nil && (rel == "." || filepath.IsLocal(rel)) {
			out = append(out, filepath.Join(to, rel))
		}
	}
	return out
}
