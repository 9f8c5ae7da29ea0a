// Package gitignore matches paths against .gitignore files, as git does
// for the patterns people write: comments, negation, a leading or middle
// slash anchoring a pattern to its file's folder, a trailing slash for
// folders, *, ?, [...] and ** segments. Each folder's .gitignore applies
// to what is below it; a later line overrides an earlier one, a deeper
// file a shallower one.
package gitignore

import (
	"bufio"
	"bytes"
	"path"
	"strings"
)

// pattern is one line of a .gitignore.
type pattern struct {
	segs    []string // the pattern's segments, "**" among them
	negate  bool
	dirOnly bool
	// anchored patterns match from their file's folder; the others match
	// a name at any depth.
	anchored bool
}

// Matcher holds the patterns of the .gitignore files read so far, each
// with the folder it applies to.
type Matcher struct {
	rules []rules
	total int
	// Truncated says patterns were left out: past MaxPatterns in a file,
	// or MaxTotal in all.
	Truncated bool
}

// MaxTotal bounds the patterns of all the files a Matcher reads.
const MaxTotal = 20_000

type rules struct {
	base     string // the folder, slash-separated, "" for the root
	patterns []pattern
}

// MaxPatterns bounds the patterns read from one file: a hostile
// repository's .gitignore costs every path it is matched against.
const MaxPatterns = 10_000

// Add reads a .gitignore's content, found in folder base (slash-separated,
// relative to the root: "" or "sub/dir"). Lines that cannot be patterns
// are skipped.
func (m *Matcher) Add(base string, content []byte) { m.AddFile(Parse(base, content)) }

// File is one .gitignore, parsed: what a Matcher adds, kept by a caller
// that reads the same file again and again until it changes.
type File struct {
	rules
	// Truncated says patterns past MaxPatterns were left out.
	Truncated bool
}

// Parse parses a .gitignore's content, found in folder base (see Add).
func Parse(base string, content []byte) *File {
	f := &File{rules: rules{base: strings.Trim(base, "/")}}
	sc := bufio.NewScanner(bytes.NewReader(content))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if len(f.patterns) >= MaxPatterns {
			f.Truncated = true
			break
		}
		if p, ok := parse(sc.Text()); ok {
			f.patterns = append(f.patterns, p)
		}
	}
	return f
}

// AddFile adds a parsed .gitignore's patterns, up to MaxTotal in all.
func (m *Matcher) AddFile(f *File) {
	ps := f.patterns
	if f.Truncated {
		m.Truncated = true
	}
	if m.total+len(ps) > MaxTotal {
		ps, m.Truncated = ps[:max(MaxTotal-m.total, 0)], true
	}
	m.total += len(ps)
	if len(ps) > 0 {
		m.rules = append(m.rules, rules{base: f.base, patterns: ps})
	}
}

func parse(line string) (pattern, bool) {
	line = strings.TrimSuffix(line, "\r")
	// Trailing spaces go unless escaped.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
		line = line[:len(line)-1]
	}
	if line == "" || strings.HasPrefix(line, "#") {
		return pattern{}, false
	}
	var p pattern
	if strings.HasPrefix(line, "!") {
		p.negate, line = true, line[1:]
	} else if strings.HasPrefix(line, "\\!") || strings.HasPrefix(line, "\\#") {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly, line = true, strings.TrimRight(line, "/")
	}
	if line == "" {
		return pattern{}, false
	}
	p.anchored = strings.Contains(line, "/")
	line = strings.TrimPrefix(line, "/")
	for _, s := range strings.Split(line, "/") {
		if s != "" {
			p.segs = append(p.segs, s)
		}
	}
	if len(p.segs) == 0 {
		return pattern{}, false
	}
	if !p.anchored {
		p.segs = append([]string{"**"}, p.segs...)
	}
	return p, true
}

// Ignored reports whether the path (slash-separated, relative to the root)
// is ignored; dir says it is a folder. A path below an ignored folder is
// not asked about: the walk skips the folder.
func (m *Matcher) Ignored(rel string, dir bool) bool {
	ignored := false
	for _, r := range m.rules {
		sub := rel
		if r.base != "" {
			if !strings.HasPrefix(rel, r.base+"/") {
				continue
			}
			sub = rel[len(r.base)+1:]
		}
		var segs []string // split only for a pattern that needs it
		base := sub[strings.LastIndexByte(sub, '/')+1:]
		for _, p := range r.patterns {
			if p.dirOnly && !dir {
				continue
			}
			var hit bool
			if !p.anchored && len(p.segs) == 2 {
				// A name at any depth (*.log, node_modules/): the path's
				// last segment alone decides, as most patterns are.
				ok, err := path.Match(p.segs[1], base)
				hit = ok && err == nil
			} else {
				if segs == nil {
					segs = strings.Split(sub, "/")
				}
				hit = match(p.segs, segs)
			}
			if hit {
				ignored = !p.negate
			}
		}
	}
	return ignored
}

// match matches pattern segments against path segments, "**" standing for
// any number of them. It is a table over (pattern, path) positions, so a
// hostile .gitignore of many "**" costs at most their product.
func match(pat, segs []string) bool {
	// reach[j]: the first i pattern segments can match the first j path
	// segments.
	reach := make([]bool, len(segs)+1)
	reach[0] = true
	for _, p := range pat {
		next := make([]bool, len(segs)+1)
		if p == "**" {
			seen := false
			for j := range reach {
				seen = seen || reach[j]
				next[j] = seen
			}
		} else {
			for j := 1; j <= len(segs); j++ {
				if reach[j-1] {
					ok, err := path.Match(p, segs[j-1])
					next[j] = ok && err == nil
				}
			}
		}
		reach = next
	}
	return reach[len(segs)]
}
