package backend

import (
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// The glob semantics of Glob and of GrepQuery.Glob, the references' (see
// docs/reference-differences.md):
//
//   - A pattern without "/" is matched against the file's name, at any
//     depth below the search root: "*.py" finds src/app/main.py.
//   - A pattern with "/" is matched against the path relative to the search
//     root, "**" standing for any number of directories.
//   - Wildcards do not match a leading "." of a name: "*" does not match
//     ".env", and "**" does not descend into ".git". A pattern element that
//     itself starts with "." reaches such names (".env", ".github/**").
//   - "*", "?", "[abc]", "[!a]" or "[^a]", and "{a,b}" (nested too).

// maxGlobAlternatives bounds what brace expansion may produce, so that a
// pattern such as "{a,b}{a,b}{a,b}..." cannot take unbounded memory.
const maxGlobAlternatives = 1024

// globPattern is a compiled glob pattern.
type globPattern struct {
	bare bool       // no "/": matched against names at any depth
	alts [][]string // brace-expanded alternatives, split into elements
}

// compileGlob compiles a pattern. One without "/" is matched against names;
// one with "/" (a leading one included, which newGlobSpec adds to an
// absolute pattern) against paths.
func compileGlob(pattern string) (globPattern, error) {
	if len(pattern) > maxGlobBytes {
		return globPattern{}, &PatternError{Pattern: pattern[:64] + "...", Err: errGlobTooLong}
	}
	if !doublestar.ValidatePattern(pattern) {
		return globPattern{}, &PatternError{Pattern: pattern, Err: doublestar.ErrBadPattern}
	}
	expanded, ok := expandBraces(pattern, maxGlobAlternatives)
	if !ok {
		return globPattern{}, &PatternError{Pattern: pattern, Err: errTooManyAlternatives}
	}
	g := globPattern{bare: !strings.Contains(pattern, "/")}
	for _, alt := range expanded {
		var elems []string
		for e := range strings.SplitSeq(alt, "/") {
			// "**/**" is "**": collapsing keeps the matching state small.
			if e != "" && e != "." && (e != "**" || len(elems) == 0 || elems[len(elems)-1] != "**") {
				elems = append(elems, e)
			}
		}
		if len(elems) > 0 {
			g.alts = append(g.alts, elems)
		}
	}
	return g, nil
}

// maxGlobBytes bounds a pattern's length; a path is at most 4096 bytes.
const maxGlobBytes = 4096

var errGlobTooLong = patternReason("it is longer than 4096 bytes")

// errTooManyAlternatives refuses a pattern whose braces expand too far.
var errTooManyAlternatives = patternReason("its braces expand to more than 1024 alternatives")

// patternReason is the reason a pattern is refused, as an error.
type patternReason string

func (r patternReason) Error() string { return string(r) }

// match reports whether the file at rel (relative to the search root; its
// name when the root is the file itself) matches. It runs for every file a
// walk meets, so it allocates nothing for patterns of up to 31 elements.
func (g *globPattern) match(rel string) bool {
	if g.bare {
		rel = rel[strings.LastIndexByte(rel, '/')+1:]
	}
	var a, b [32]bool
	for _, alt := range g.alts {
		at, next := a[:], b[:]
		if len(alt) >= len(a) {
			at, next = make([]bool, len(alt)+1), make([]bool, len(alt)+1)
		}
		if reach(alt, rel, true, at[:len(alt)+1], next[:len(alt)+1])[len(alt)] {
			return true
		}
	}
	return false
}

// mayHold reports whether a file below the directory at rel (relative to
// the search root) could match, so that a walk can skip the rest.
func (g *globPattern) mayHold(rel string) bool {
	if g.bare || rel == "" {
		return true
	}
	for _, alt := range g.alts {
		// Some elements must remain for the names below the directory.
		for _, ok := range reach(alt, rel, false, nil, nil)[:len(alt)] {
			if ok {
				return true
			}
		}
	}
	return false
}

// reach runs the pattern elems over the elements of the path rel and
// reports, for each i, whether elems[:i] can match all of them. at and next
// are its scratch, each len(elems)+1 long; nil makes them. A "**" element
// matches any number of path elements, none starting with "."; when whole
// is set a final "**" must match at least one (a file is not the
// directory it would be in).
func reach(elems []string, rel string, whole bool, at, next []bool) []bool {
	// at[i] holds whether elems[:i] matches the path elements so far.
	if at == nil {
		at, next = make([]bool, len(elems)+1), make([]bool, len(elems)+1)
	}
	clear(at)
	at[0] = true
	for i, e := range elems { // "**" may match no element
		if !at[i] || e != "**" || (whole && i == len(elems)-1) {
			break
		}
		at[i+1] = true
	}
	for rest, more := rel, true; more; {
		var s string
		s, rest, more = strings.Cut(rest, "/")
		clear(next)
		for i, e := range elems {
			switch {
			case !at[i]:
			case e == "**":
				if s != "" && s[0] != '.' {
					next[i] = true   // "**" goes on
					next[i+1] = true // "**" ends with s
				}
			case matchElem(e, s):
				next[i+1] = true
			}
		}
		// A "**" reached may also match no element.
		for i, e := range elems {
			if next[i] && e == "**" && !(whole && i == len(elems)-1) {
				next[i+1] = true
			}
		}
		at, next = next, at
	}
	return at
}

// remainders returns what of the pattern a file below the directory at rel
// (relative to the search root, and not "") must still match: for each way
// the pattern's elements can match the directory, the elements left, as a
// pattern relative to that directory. None when no file below can match.
func (g *globPattern) remainders(rel string) []string {
	var out []string
	for _, alt := range g.alts {
		for i, ok := range reach(alt, rel, false, nil, nil)[:len(alt)] {
			if s := strings.Join(alt[i:], "/"); ok && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// matchElem matches one path element against one pattern element: a
// leading "." must be matched by a literal one.
func matchElem(pattern, name string) bool {
	if name == "" || name[0] == '.' && pattern[0] != '.' {
		return false
	}
	return doublestar.MatchUnvalidated(pattern, name)
}

// expandBraces expands the {a,b} groups of a pattern, nested ones too, into
// at most max patterns; ok is false past that. A group without a comma
// stays literal, as do escaped braces; literal braces come out escaped.
func expandBraces(p string, max int) (out []string, ok bool) {
	open, close, comma := -1, -1, false
	depth := 0
	for i := 0; i < len(p) && close < 0; i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open, comma = i, false
			}
			depth++
		case ',':
			if depth == 1 {
				comma = true
			}
		case '}':
			if depth == 0 {
				break
			}
			depth--
			if depth == 0 {
				if comma {
					close = i
				} else {
					// A group of one stays literal: look for a later one.
					rest, ok := expandBraces(p[i+1:], max)
					if !ok {
						return nil, false
					}
					head := escapeUnescaped(p[:i+1], "{}")
					for _, r := range rest {
						out = append(out, head+r)
					}
					return out, true
				}
			}
		}
	}
	if close < 0 {
		return []string{escapeUnescaped(p, "{}")}, true
	}
	prefix, suffix := escapeUnescaped(p[:open], "{}"), p[close+1:]
	tails, ok := expandBraces(suffix, max)
	if !ok {
		return nil, false
	}
	for _, alt := range splitAlternatives(p[open+1 : close]) {
		heads, ok := expandBraces(alt, max)
		if !ok {
			return nil, false
		}
		for _, h := range heads {
			for _, t := range tails {
				if len(out) == max {
					return nil, false
				}
				out = append(out, prefix+h+t)
			}
		}
	}
	return out, true
}

// splitAlternatives splits the inside of a brace group at its top-level
// commas.
func splitAlternatives(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// anchoredUnion makes one pattern, anchored at the root, of patterns that
// remainders returned: a brace group of them when there are several.
func anchoredUnion(patterns []string) string {
	if len(patterns) == 1 {
		return "/" + patterns[0]
	}
	alts := make([]string, len(patterns))
	for i, p := range patterns {
		alts[i] = escapeUnescaped(p, ",") // a literal comma, not a separator
	}
	return "/{" + strings.Join(alts, ",") + "}"
}

// escapeUnescaped puts a backslash before each byte of s in chars that is
// not escaped already: the commas of a pattern that is to stand as an
// alternative in a brace group, or the braces that brace expansion left
// literal, so that matching does not take them for a group.
func escapeUnescaped(s, chars string) string {
	if !strings.ContainsAny(s, chars) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			b.WriteByte(c)
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
			continue
		case strings.IndexByte(chars, c) >= 0:
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

const globMeta = `*?[{\`

func isLiteral(s string) bool { return !strings.ContainsAny(s, globMeta) }

// validGlob checks a doublestar pattern (policy rules, which match dotfiles
// like any other name).
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

// globSpec is a Glob query in normal form: files under root whose path
// relative to base matches the pattern. root is base or a directory below
// it: the literal leading directories of the pattern, or the directory
// asked for when an absolute pattern starts above it.
type globSpec struct {
	pattern string // as given, normalised: "/" + a path from the root when absolute
	glob    globPattern
	base    string
	root    string
	empty   bool // nothing can match
}

// newGlobSpec normalises a Glob(pattern, dir) call. dir must be clean. An
// absolute pattern is matched against whole virtual paths (and still only
// files under dir are returned); a relative one against paths relative to
// dir.
func newGlobSpec(pattern, dir string) (globSpec, error) {
	g := globSpec{base: dir}
	rel := trimDotSlash(pattern)
	if strings.HasPrefix(pattern, "/") {
		g.base = "/"
		rel = strings.TrimLeft(pattern, "/")
		pattern = "/" + rel // anchored, so never matched against names alone
	} else {
		pattern = rel
	}
	var err error
	if g.glob, err = compileGlob(pattern); err != nil {
		return globSpec{}, err
	}
	if len(g.glob.alts) == 0 {
		return globSpec{empty: true}, nil
	}
	g.pattern = pattern
	lit := g.base
	if !g.glob.bare {
		comps := strings.Split(rel, "/")
		for _, c := range comps[:len(comps)-1] {
			if c == "" || c == "." || c == ".." || !isLiteral(c) {
				break
			}
			lit = joinPath(lit, c)
		}
	}
	switch {
	case under(lit, dir):
		g.root = lit
	case under(dir, lit):
		g.root = dir
	default:
		g.empty = true
	}
	return g, nil
}

// match reports whether the file at virtual path p (under g.root, or g.root
// itself when the search path names a file) matches.
func (g *globSpec) match(p string) bool {
	rel := relTo(p, g.base)
	if rel == "" {
		rel = baseName(p)
	}
	return g.glob.match(rel)
}

// mayHold reports whether a file below the directory at virtual path dir
// (under g.root) could match, so that a walk can skip the rest.
func (g *globSpec) mayHold(dir string) bool {
	return g.glob.mayHold(relTo(dir, g.base))
}

// fileFilter is GrepQuery.Glob in normal form.
type fileFilter struct {
	glob globPattern
	mode uint8 // filterAll, filterRel or filterAbs
}

const (
	filterAll = iota
	filterRel
	filterAbs
)

func newFileFilter(glob string) (fileFilter, error) {
	if glob == "" {
		return fileFilter{mode: filterAll}, nil
	}
	f := fileFilter{mode: filterRel}
	if strings.HasPrefix(glob, "/") {
		f.mode = filterAbs
		glob = "/" + strings.TrimLeft(glob, "/")
	}
	var err error
	f.glob, err = compileGlob(trimDotSlash(glob))
	return f, err
}

// match reports whether the file at virtual path p, found by a search
// rooted at dir, passes the filter.
func (f *fileFilter) match(p, dir string) bool {
	switch f.mode {
	case filterAll:
		return true
	case filterAbs:
		return f.glob.match(p[1:])
	}
	r := relTo(p, dir)
	if r == "" { // the search path is the file itself
		r = baseName(p)
	}
	return f.glob.match(r)
}
