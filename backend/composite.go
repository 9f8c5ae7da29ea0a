package backend

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Composite routes each path to one of several backends by its longest
// matching prefix, the default backend taking the rest. A route's prefix
// is stripped before its backend sees a path and restored in the results:
// with the route "/memories/", "/memories/notes.md" is "/notes.md" to the
// route's backend.
//
// Listing a directory above a route shows the route as a directory; grep
// and glob from a directory above routes merge the results of every
// backend involved. Files the default backend may hold under a route's
// prefix are hidden: the route owns that subtree. Uploads and downloads are
// grouped per backend, one call each, and results come back in order with
// the paths as given.
//
// Build one with NewComposite, which returns a *CompositeSandbox (a
// Sandbox whose Execute goes to the default backend) when the default
// backend is a Sandbox, and a *Composite otherwise. Type-asserting the
// result to Sandbox is how callers find out whether commands can run.
type Composite struct {
	def      Backend
	defRoute route   // the default as a route at "/"
	routes   []route // longest prefix first
}

// CompositeSandbox is a Composite whose default backend is a Sandbox: it
// runs commands there.
type CompositeSandbox struct {
	*Composite
	sb Sandbox
}

var (
	_ Backend = (*Composite)(nil)
	_ Sandbox = (*CompositeSandbox)(nil)
)

type route struct {
	dir string // clean, no trailing slash, never "/"
	b   Backend
}

// NewComposite returns a backend that sends paths under each prefix of
// routes (such as "/memories/") to its backend and everything else to def.
// It is a *CompositeSandbox when def is a Sandbox, else a *Composite.
func NewComposite(def Backend, routes map[string]Backend) (Backend, error) {
	if def == nil {
		return nil, errors.New("composite backend: nil default backend")
	}
	c := &Composite{def: def, defRoute: route{dir: "/", b: def}}
	seen := map[string]string{}
	for prefix, b := range routes {
		if b == nil {
			return nil, fmt.Errorf("composite backend: route %q: nil backend", prefix)
		}
		dir, err := Clean(prefix)
		if err != nil {
			return nil, fmt.Errorf("composite backend: route %q: %w", prefix, err)
		}
		if dir == "/" {
			return nil, fmt.Errorf("composite backend: route %q covers every path; make it the default backend", prefix)
		}
		if other, dup := seen[dir]; dup {
			return nil, fmt.Errorf("composite backend: routes %q and %q are the same", other, prefix)
		}
		seen[dir] = prefix
		c.routes = append(c.routes, route{dir: dir, b: b})
	}
	slices.SortFunc(c.routes, func(a, b route) int {
		if d := len(b.dir) - len(a.dir); d != 0 {
			return d
		}
		return strings.Compare(a.dir, b.dir)
	})
	if sb, ok := def.(Sandbox); ok {
		return &CompositeSandbox{Composite: c, sb: sb}, nil
	}
	return c, nil
}

// Execute runs the command on the default backend.
func (c *CompositeSandbox) Execute(ctx context.Context, command string, timeout time.Duration) (ExecResult, error) {
	return c.sb.Execute(ctx, command, timeout)
}

// ID returns the default backend's ID.
func (c *CompositeSandbox) ID() string { return c.sb.ID() }

// TimeoutLimits implements TimeoutLimiter, as the default backend.
func (c *CompositeSandbox) TimeoutLimits() (def, max time.Duration) { return Limits(c.sb) }

// Default returns the default backend.
func (c *Composite) Default() Backend { return c.def }

// lookup returns the route owning the clean path p, or nil for the default.
func (c *Composite) lookup(p string) *route {
	if i := c.routeIndex(p); i >= 0 {
		return &c.routes[i]
	}
	return nil
}

// routeIndex returns the index of the route owning p, or -1.
func (c *Composite) routeIndex(p string) int {
	for i := range c.routes {
		if under(p, c.routes[i].dir) {
			return i
		}
	}
	return -1
}

// inner returns p as the route's backend sees it. p must be under r.dir.
func (r *route) inner(p string) string {
	if r.dir == "/" {
		return p
	}
	return "/" + relTo(p, r.dir)
}

// outer returns the inner path p as the composite shows it.
func (r *route) outer(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	switch {
	case r.dir == "/":
		return p
	case p == "/":
		return r.dir
	}
	return r.dir + p
}

// owner returns the route owning the clean path p: the default (as a
// route at "/") when no prefix matches.
func (c *Composite) owner(p string) *route {
	if r := c.lookup(p); r != nil {
		return r
	}
	return &c.defRoute
}

// nested returns the routes strictly below the clean directory p. Their
// backends hold part of the tree under p besides p's owner.
func (c *Composite) nested(p string) []*route {
	var out []*route
	for i := range c.routes {
		if r := &c.routes[i]; r.dir != p && under(r.dir, p) {
			out = append(out, r)
		}
	}
	return out
}

// List implements Backend.
func (c *Composite) List(ctx context.Context, path string) ([]FileInfo, error) {
	return c.list(ctx, path, false)
}

// ListNames implements NameLister.
func (c *Composite) ListNames(ctx context.Context, path string) ([]FileInfo, error) {
	return c.list(ctx, path, true)
}

// ListText implements TextLister: a directory of the default backend with
// no route below it is the default backend's listing as it is; others are
// formatted from ListNames.
func (c *Composite) ListText(ctx context.Context, path string) (string, error) {
	p, err := Clean(path)
	if err != nil {
		return "", err
	}
	if c.lookup(p) == nil && len(c.nested(p)) == 0 {
		// No route owns p or anything below it, so the default backend
		// owns every entry, under the same paths.
		return ListText(ctx, c.def, p)
	}
	infos, err := c.list(ctx, p, true)
	if err != nil {
		return "", err
	}
	return FormatListing(infos), nil
}

func (c *Composite) list(ctx context.Context, path string, names bool) ([]FileInfo, error) {
	p, err := Clean(path)
	if err != nil {
		return nil, err
	}
	own := c.owner(p)
	ls, err := listWith(ctx, own.b, own.inner(p), names)
	if err != nil {
		return nil, err
	}
	out := ls[:0]
	for _, f := range ls {
		f.Path = own.outer(f.Path)
		if c.owner(f.Path) == own {
			out = append(out, f)
		}
	}
	for _, r := range c.nested(p) {
		name, _, _ := strings.Cut(relTo(r.dir, p), "/")
		child := joinPath(p, name)
		i := slices.IndexFunc(out, func(f FileInfo) bool { return f.Path == child })
		if i < 0 {
			out = append(out, FileInfo{Path: child, IsDir: true})
		} else if !out[i].IsDir {
			out[i] = FileInfo{Path: child, IsDir: true}
		}
	}
	slices.SortFunc(out, func(a, b FileInfo) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// Read implements Backend.
func (c *Composite) Read(ctx context.Context, path string, offset, limit int) (ReadResult, error) {
	p, err := Clean(path)
	if err != nil {
		return ReadResult{}, err
	}
	if r := c.lookup(p); r != nil {
		return r.b.Read(ctx, r.inner(p), offset, limit)
	}
	return c.def.Read(ctx, p, offset, limit)
}

// Write implements Backend.
func (c *Composite) Write(ctx context.Context, path, content string) error {
	p, err := Clean(path)
	if err != nil {
		return err
	}
	if r := c.lookup(p); r != nil {
		return r.b.Write(ctx, r.inner(p), content)
	}
	return c.def.Write(ctx, p, content)
}

// Edit implements Backend.
func (c *Composite) Edit(ctx context.Context, path, oldString, newString string, replaceAll bool) (int, error) {
	p, err := Clean(path)
	if err != nil {
		return 0, err
	}
	if r := c.lookup(p); r != nil {
		return r.b.Edit(ctx, r.inner(p), oldString, newString, replaceAll)
	}
	return c.def.Edit(ctx, p, oldString, newString, replaceAll)
}

// fanOut runs fn for 0..n-1 concurrently and returns the first error by
// index.
func fanOut(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = fn(i) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Glob implements Backend.
func (c *Composite) Glob(ctx context.Context, pattern, path string) ([]FileInfo, error) {
	p, err := Clean(path)
	if err != nil {
		return nil, err
	}
	g, err := newGlobSpec(pattern, p)
	if err != nil || g.empty {
		return nil, err
	}
	type query struct {
		r            *route
		pattern, dir string
	}
	var queries []query
	for _, r := range append([]*route{c.owner(g.root)}, c.nested(g.root)...) {
		pats, dir := routeGlob(r, &g)
		for _, pat := range pats {
			queries = append(queries, query{r, pat, dir})
		}
	}
	results := make([][]FileInfo, len(queries))
	err = fanOut(len(queries), func(i int) error {
		q := queries[i]
		fs, err := q.r.b.Glob(ctx, q.pattern, q.dir)
		if err != nil {
			return err
		}
		keep := fs[:0]
		for _, f := range fs {
			f.Path = q.r.outer(f.Path)
			if c.owner(f.Path) == q.r && under(f.Path, g.root) && g.match(f.Path) {
				keep = append(keep, f)
			}
		}
		results[i] = keep
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := slices.Concat(results...)
	slices.SortFunc(out, func(a, b FileInfo) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// routeGlob returns the patterns with which to glob route r's share of g,
// and the directory of the route they are relative to. The results are
// filtered with g again, so they may ask for more than needed.
func routeGlob(r *route, g *globSpec) (patterns []string, dir string) {
	switch {
	case under(g.base, r.dir): // the pattern is relative to a directory in the route
		return []string{g.pattern}, r.inner(g.base)
	case g.glob.bare: // names at any depth
		return []string{g.pattern}, "/"
	}
	// The route lies below the pattern's base: what is left of the pattern
	// once it has matched the route's directory, anchored at its root, as
	// one pattern so that the route is walked once.
	rest := g.glob.remainders(relTo(r.dir, g.base))
	if len(rest) == 0 {
		return nil, "/"
	}
	return []string{anchoredUnion(rest)}, "/"
}

// Grep implements Backend.
func (c *Composite) Grep(ctx context.Context, q GrepQuery) ([]GrepMatch, error) {
	if _, err := compileMatcher(q.Pattern); err != nil {
		return nil, err
	}
	filter, err := newFileFilter(q.Glob)
	if err != nil {
		return nil, err
	}
	p, err := Clean(q.Path)
	if err != nil {
		return nil, err
	}
	routes := append([]*route{c.owner(p)}, c.nested(p)...)
	results := make([][]GrepMatch, len(routes))
	err = fanOut(len(routes), func(i int) error {
		r := routes[i]
		rq := q
		if i == 0 {
			rq.Path = r.inner(p)
		} else { // a nested route: its root is below p
			rq.Path = "/"
			if filter.mode == filterRel && !filter.glob.bare {
				// What is left of the filter below the route's directory,
				// anchored at its root.
				rest := filter.glob.remainders(relTo(r.dir, p))
				if len(rest) == 0 {
					return nil // no file of the route can pass
				}
				rq.Glob = anchoredUnion(rest)
			}
		}
		if filter.mode == filterAbs && r.dir != "/" {
			rq.Glob = ""
		}
		ms, err := r.b.Grep(ctx, rq)
		if err != nil {
			return err
		}
		keep := ms[:0]
		for _, m := range ms {
			m.Path = r.outer(m.Path)
			if c.owner(m.Path) == r && filter.match(m.Path, p) {
				keep = append(keep, m)
			}
		}
		results[i] = keep
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := slices.Concat(results...)
	slices.SortStableFunc(out, func(a, b GrepMatch) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return q.cap(out), nil
}

// batch groups the paths of an upload or download by backend: group -1 is
// the default, i the route c.routes[i]. Invalid paths get their error in
// errs and no group.
func (c *Composite) batch(paths []string) (groups map[int][]int, inner []string, errs []error) {
	groups = map[int][]int{}
	inner = make([]string, len(paths))
	errs = make([]error, len(paths))
	for i, path := range paths {
		p, err := Clean(path)
		if err != nil {
			errs[i] = err
			continue
		}
		g := c.routeIndex(p)
		inner[i] = p
		if g >= 0 {
			inner[i] = c.routes[g].inner(p)
		}
		groups[g] = append(groups[g], i)
	}
	return groups, inner, errs
}

func (c *Composite) backend(g int) Backend {
	if g < 0 {
		return c.def
	}
	return c.routes[g].b
}

// Upload implements Backend.
func (c *Composite) Upload(ctx context.Context, files []File) []FileResult {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	groups, inner, errs := c.batch(paths)
	out := make([]FileResult, len(files))
	for i := range files {
		out[i] = FileResult{Path: files[i].Path, Err: errs[i]}
	}
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		idx := groups[g]
		batch := make([]File, len(idx))
		for j, i := range idx {
			batch[j] = File{Path: inner[i], Content: files[i].Content}
		}
		res := c.backend(g).Upload(ctx, batch)
		for j, i := range idx {
			if j < len(res) {
				out[i].Err = res[j].Err
			} else {
				out[i].Err = errNoResult
			}
		}
	}
	return out
}

// Download implements Backend.
func (c *Composite) Download(ctx context.Context, paths []string) []FileResult {
	groups, inner, errs := c.batch(paths)
	out := make([]FileResult, len(paths))
	for i := range paths {
		out[i] = FileResult{Path: paths[i], Err: errs[i]}
	}
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		idx := groups[g]
		batch := make([]string, len(idx))
		for j, i := range idx {
			batch[j] = inner[i]
		}
		res := c.backend(g).Download(ctx, batch)
		for j, i := range idx {
			if j < len(res) {
				out[i].Content, out[i].Err = res[j].Content, res[j].Err
			} else {
				out[i].Err = errNoResult
			}
		}
	}
	return out
}
