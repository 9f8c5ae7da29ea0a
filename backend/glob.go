package backend

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// globSpec is a Glob query in normal form: files under root whose path
// relative to base matches pattern. root is base or a directory below it:
// the literal leading directories of the pattern, or the directory asked
// for when an absolute pattern starts above it.
type globSpec struct {
	pattern string   // relative to base, validated
	comps   []string // pattern split on "/"; nil when pruning is off
	base    string
	root    string
	empty   bool // nothing can match
}

const globMeta = `*?[{\`

func isLiteral(s string) bool { return !strings.ContainsAny(s, globMeta) }

// validGlob checks a doublestar pattern.
func validGlob(pattern string) error {
	if !doublestar.ValidatePattern(pattern) {
		return &PatternError{Pattern: pattern, Err: doublestar.ErrBadPattern}
	}
	return nil
}

// trimDotSlash removes leading "./" elements from a relative pattern.
func trimDotSlash(p string) string {
	for strings.HasPrefix(p, "./") {
		p = strings.TrimLeft(p[2:], "/")
	}
	return p
}

// newGlobSpec normalises a Glob(pattern, dir) call. dir must be clean. An
// absolute pattern is matched against whole virtual paths (and still only
// files under dir are returned); a relative one against paths relative to
// dir.
func newGlobSpec(pattern, dir string) (globSpec, error) {
	if err := validGlob(pattern); err != nil {
		return globSpec{}, err
	}
	g := globSpec{base: dir}
	if strings.HasPrefix(pattern, "/") {
		g.base = "/"
		pattern = strings.TrimLeft(pattern, "/")
	}
	pattern = trimDotSlash(pattern)
	if pattern == "" {
		return globSpec{empty: true}, nil
	}
	g.pattern = pattern
	comps := strings.Split(pattern, "/")
	lit := g.base
	for _, c := range comps[:len(comps)-1] {
		if c == "" || c == "." || c == ".." || !isLiteral(c) {
			break
		}
		lit = joinPath(lit, c)
	}
	switch {
	case under(lit, dir):
		g.root = lit
	case under(dir, lit):
		g.root = dir
	default:
		g.empty = true
	}
	if !strings.Contains(pattern, "{") {
		g.comps = comps
	}
	return g, nil
}

// match reports whether the file at virtual path p (under g.root) matches.
func (g *globSpec) match(p string) bool {
	return doublestar.MatchUnvalidated(g.pattern, relTo(p, g.base))
}

// mayHold reports whether a file below the directory at virtual path dir
// (under g.root) could match, so that a walk can skip the rest.
func (g *globSpec) mayHold(dir string) bool {
	if g.comps == nil {
		return true
	}
	r := relTo(dir, g.base)
	if r == "" {
		return true
	}
	i := 0
	for c := range strings.SplitSeq(r, "/") {
		if i < len(g.comps) && strings.Contains(g.comps[i], "**") {
			return true
		}
		if i >= len(g.comps)-1 {
			return false // files below would be deeper than the pattern
		}
		if !doublestar.MatchUnvalidated(g.comps[i], c) {
			return false
		}
		i++
	}
	return true
}

// fileFilter is GrepQuery.Glob in normal form.
type fileFilter struct {
	pattern string
	mode    uint8 // filterAll, filterBase, filterRel or filterAbs
}

const (
	filterAll = iota
	filterBase
	filterRel
	filterAbs
)

func newFileFilter(glob string) (fileFilter, error) {
	if glob == "" {
		return fileFilter{mode: filterAll}, nil
	}
	if err := validGlob(glob); err != nil {
		return fileFilter{}, err
	}
	switch {
	case strings.HasPrefix(glob, "/"):
		return fileFilter{pattern: strings.TrimLeft(glob, "/"), mode: filterAbs}, nil
	case strings.Contains(glob, "/"):
		return fileFilter{pattern: trimDotSlash(glob), mode: filterRel}, nil
	}
	return fileFilter{pattern: glob, mode: filterBase}, nil
}

// match reports whether the file at virtual path p, found by a search
// rooted at dir, passes the filter.
func (f *fileFilter) match(p, dir string) bool {
	switch f.mode {
	case filterAll:
		return true
	case filterBase:
		return doublestar.MatchUnvalidated(f.pattern, baseName(p))
	case filterAbs:
		return doublestar.MatchUnvalidated(f.pattern, p[1:])
	}
	r := relTo(p, dir)
	if r == "" { // the search path is the file itself
		r = baseName(p)
	}
	return doublestar.MatchUnvalidated(f.pattern, r)
}
