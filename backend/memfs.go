package backend

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/deepagents-go/deepagents/internal/search"
	"github.com/deepagents-go/deepagents/thread"
)

// This file holds the operations shared by the backends that keep whole
// files in memory or in a store (State and Store): a file set is a map from
// clean virtual path to FileData, and directories exist implicitly as the
// ancestors of files.

// memIsDir reports whether some file lies below the virtual path p.
func memIsDir(files map[string]thread.FileData, p string) bool {
	if p == "/" {
		return true
	}
	prefix := p + "/"
	for k := range files {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// memFileAncestor returns an ancestor of p that is a file, if any.
func memFileAncestor(get func(string) bool, p string) (string, bool) {
	for d := parentDir(p); d != "/"; d = parentDir(d) {
		if get(d) {
			return d, true
		}
	}
	return "", false
}

func memInfo(p string, d thread.FileData) FileInfo {
	return FileInfo{Path: p, Size: int64(len(d.Content)), ModTime: d.ModifiedAt}
}

func memList(files map[string]thread.FileData, dir string) []FileInfo {
	seen := map[string]int{}
	var out []FileInfo
	for k, d := range files {
		if k == dir || !under(k, dir) {
			continue
		}
		r := relTo(k, dir)
		name, _, isDir := strings.Cut(r, "/")
		child := joinPath(dir, name)
		if i, ok := seen[child]; ok {
			if isDir {
				out[i].IsDir, out[i].Size = true, 0
			}
			continue
		}
		seen[child] = len(out)
		if isDir {
			out = append(out, FileInfo{Path: child, IsDir: true})
		} else {
			out = append(out, memInfo(child, d))
		}
	}
	slices.SortFunc(out, func(a, b FileInfo) int { return strings.Compare(a.Path, b.Path) })
	return out
}

func memGlob(ctx context.Context, files map[string]thread.FileData, pattern, dir string) ([]FileInfo, error) {
	g, err := newGlobSpec(pattern, dir)
	if err != nil || g.empty {
		return nil, err
	}
	var out []FileInfo
	for k, d := range files {
		// k == g.root when the path names a file: it is matched by name.
		if under(k, g.root) && g.match(k) {
			out = append(out, memInfo(k, d))
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b FileInfo) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

func memGrep(ctx context.Context, files map[string]thread.FileData, q GrepQuery, dir string) ([]GrepMatch, error) {
	m, err := compileMatcher(q.Pattern)
	if err != nil {
		return nil, err
	}
	filter, err := newFileFilter(q.Glob)
	if err != nil {
		return nil, err
	}
	var out []GrepMatch
	for _, k := range slices.Sorted(maps.Keys(files)) {
		if !under(k, dir) || !filter.match(k, dir) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		buf := stringBytes(files[k].Content)
		if search.IsBinary(buf) {
			continue
		}
		full := false
		m.Search(buf, func() bool { return ctx.Err() != nil }, func(line int, text []byte) bool {
			out = append(out, q.match(k, line, text))
			full = q.Limit > 0 && len(out) >= q.Limit
			return !full && q.Mode != GrepFiles
		})
		if full {
			break
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
