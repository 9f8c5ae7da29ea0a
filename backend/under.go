package backend

import (
	"context"
	"strings"
)

// Under returns a view of b in which every path lies below dir: the path
// "/x" of the view is dir+"/x" in b, and paths in results come back without
// dir. Mounted as a Composite route at the same dir, it lets the route's
// backend keep full paths: the State backend behind routes
// "/large_tool_results/" and "/conversation_history/" then stores
// "/large_tool_results/x" rather than "/x", so the two routes cannot
// collide and the thread's files show where they came from.
func Under(dir string, b Backend) Backend {
	d, err := Clean(dir)
	if err != nil || d == "/" {
		return b
	}
	return &underView{dir: d, b: b}
}

type underView struct {
	dir string // clean, no trailing slash
	b   Backend
}

func (u *underView) in(p string) string {
	c, err := Clean(p)
	if err != nil {
		return p // let b refuse it
	}
	if c == "/" {
		return u.dir
	}
	return u.dir + c
}

func (u *underView) out(p string) string {
	if p == u.dir {
		return "/"
	}
	if rest, ok := strings.CutPrefix(p, u.dir+"/"); ok {
		return "/" + rest
	}
	return p
}

func (u *underView) infos(fis []FileInfo, err error) ([]FileInfo, error) {
	for i := range fis {
		fis[i].Path = u.out(fis[i].Path)
	}
	return fis, err
}

func (u *underView) List(ctx context.Context, p string) ([]FileInfo, error) {
	return u.infos(u.b.List(ctx, u.in(p)))
}

func (u *underView) ListNames(ctx context.Context, p string) ([]FileInfo, error) {
	return u.infos(ListNames(ctx, u.b, u.in(p)))
}

func (u *underView) Read(ctx context.Context, p string, offset, limit int) (ReadResult, error) {
	return u.b.Read(ctx, u.in(p), offset, limit)
}

func (u *underView) Write(ctx context.Context, p, content string) error {
	return u.b.Write(ctx, u.in(p), content)
}

func (u *underView) Edit(ctx context.Context, p, oldString, newString string, replaceAll bool) (int, error) {
	return u.b.Edit(ctx, u.in(p), oldString, newString, replaceAll)
}

func (u *underView) Grep(ctx context.Context, q GrepQuery) ([]GrepMatch, error) {
	q.Path = u.in(q.Path)
	ms, err := u.b.Grep(ctx, q)
	for i := range ms {
		ms[i].Path = u.out(ms[i].Path)
	}
	return ms, err
}

func (u *underView) Glob(ctx context.Context, pattern, p string) ([]FileInfo, error) {
	if strings.HasPrefix(pattern, "/") {
		// An absolute pattern names whole paths of the view.
		pattern = escapeGlob(u.dir) + pattern
	}
	return u.infos(u.b.Glob(ctx, pattern, u.in(p)))
}

// escapeGlob quotes glob metacharacters in a literal path.
func escapeGlob(s string) string {
	if isLiteral(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(globMeta, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (u *underView) Upload(ctx context.Context, files []File) []FileResult {
	mapped := make([]File, len(files))
	for i, f := range files {
		mapped[i] = File{Path: u.in(f.Path), Content: f.Content}
	}
	res := u.b.Upload(ctx, mapped)
	for i := range res {
		if i < len(files) {
			res[i].Path = files[i].Path
		}
	}
	return res
}

func (u *underView) Download(ctx context.Context, paths []string) []FileResult {
	mapped := make([]string, len(paths))
	for i, p := range paths {
		mapped[i] = u.in(p)
	}
	res := u.b.Download(ctx, mapped)
	for i := range res {
		if i < len(paths) {
			res[i].Path = paths[i]
		}
	}
	return res
}
