package backend

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"strings"
	"unsafe"
)

// binarySniffLen is how much of a file is checked for a NUL byte to decide
// that it is binary and skip it, as grep tools do.
const binarySniffLen = 8 << 10

// isBinary reports whether buf looks binary: a NUL in its first 8 KiB.
func isBinary(buf []byte) bool {
	return bytes.IndexByte(buf[:min(len(buf), binarySniffLen)], 0) >= 0
}

// matcher finds the lines of a buffer that match a regular expression. It
// searches the whole buffer at once and only splits out the lines around
// candidate matches: a literal that every match must contain is found with
// bytes.Index (vectorised), and the regular expression then runs on that
// single line. Without such a literal the expression scans the buffer
// itself. A matcher is safe for concurrent use.
type matcher struct {
	re      *regexp.Regexp // the pattern with (?m): ^ and $ match at lines
	lits    [][]byte       // one of these occurs in every match; nil if unknown
	exact   bool           // the pattern is lits[0] itself: no verification
	perLine bool           // the pattern anchors to the text (\A, \z): run per line
}

// compileMatcher compiles an RE2 pattern for line-oriented search.
func compileMatcher(pattern string) (*matcher, error) {
	// Compile the pattern as given first, so that the error names it.
	if _, err := regexp.Compile(pattern); err != nil {
		return nil, &PatternError{Pattern: pattern, Err: err}
	}
	expr := "(?m:" + pattern + ")"
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, &PatternError{Pattern: pattern, Err: err}
	}
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, &PatternError{Pattern: pattern, Err: err}
	}
	tree = tree.Simplify()
	m := &matcher{re: re, perLine: hasTextAnchor(tree)}
	m.lits = requiredLiterals(tree)
	if lit, ok := wholeLiteral(tree); ok && !strings.ContainsAny(lit, "\r\n") {
		m.lits, m.exact = [][]byte{[]byte(lit)}, true
	}
	return m, nil
}

func hasTextAnchor(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText {
		return true
	}
	for _, s := range re.Sub {
		if hasTextAnchor(s) {
			return true
		}
	}
	return false
}

// wholeLiteral reports whether re matches exactly one case-sensitive string.
func wholeLiteral(re *syntax.Regexp) (string, bool) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			return string(re.Rune), true
		}
	case syntax.OpConcat:
		var b strings.Builder
		for _, s := range re.Sub {
			l, ok := wholeLiteral(s)
			if !ok {
				return "", false
			}
			b.WriteString(l)
		}
		return b.String(), b.Len() > 0
	}
	return "", false
}

// maxLits bounds the alternatives tracked by the literal prefilter.
const maxLits = 8

// requiredLiterals returns a set of case-sensitive literals one of which
// occurs in every match of re, or nil when it cannot tell.
func requiredLiterals(re *syntax.Regexp) [][]byte {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 || len(re.Rune) == 0 {
			return nil
		}
		return [][]byte{[]byte(string(re.Rune))}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		var best [][]byte
		var run []byte
		flush := func() {
			if len(run) > 0 {
				best = betterLits(best, [][]byte{run})
				run = nil
			}
		}
		for _, s := range re.Sub {
			if s.Op == syntax.OpLiteral && s.Flags&syntax.FoldCase == 0 {
				run = append(run, string(s.Rune)...)
				continue
			}
			flush()
			best = betterLits(best, requiredLiterals(s))
		}
		flush()
		return best
	case syntax.OpAlternate:
		var all [][]byte
		for _, s := range re.Sub {
			l := requiredLiterals(s)
			if l == nil {
				return nil
			}
			all = append(all, l...)
		}
		if len(all) > maxLits {
			return nil
		}
		return all
	}
	return nil
}

// betterLits picks the more selective of two literal sets: the one whose
// shortest literal is longer, then the smaller set.
func betterLits(a, b [][]byte) [][]byte {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	sa, sb := minLen(a), minLen(b)
	if sb > sa || (sb == sa && len(b) < len(a)) {
		return b
	}
	return a
}

func minLen(s [][]byte) int {
	n := -1
	for _, l := range s {
		if n < 0 || len(l) < n {
			n = len(l)
		}
	}
	return n
}

// scan calls fn with the 1-based number and the text (without its line
// terminator) of each matching line of buf, in order, until fn returns
// false.
func (m *matcher) scan(buf []byte, fn func(line int, text []byte) bool) {
	var (
		pos     int // start of the first line not yet examined
		lineNo  = 1 // the line number at countAt
		countAt int
		next    []int // next occurrence of each literal at or after pos
	)
	// Without a literal the expression scans the buffer, where "$" does
	// not match before "\r\n"; such text is searched line by line.
	perLine := m.perLine || (m.lits == nil && bytes.IndexByte(buf, '\r') >= 0)
	if m.lits != nil {
		next = make([]int, len(m.lits))
		for i := range next {
			next[i] = -2 // unknown
		}
	}
	for pos < len(buf) {
		// Find a candidate: the start of some possible match.
		var cand int
		if m.lits != nil {
			cand = -1
			for i, lit := range m.lits {
				if next[i] == -2 || (next[i] >= 0 && next[i] < pos) {
					j := bytes.Index(buf[pos:], lit)
					if j >= 0 {
						j += pos
					}
					next[i] = j
				}
				if next[i] >= 0 && (cand < 0 || next[i] < cand) {
					cand = next[i]
				}
			}
			if cand < 0 {
				return
			}
		} else if perLine {
			cand = pos
		} else {
			loc := m.re.FindIndex(buf[pos:])
			if loc == nil {
				return
			}
			cand = pos + loc[0]
		}
		// The line holding the candidate.
		start := bytes.LastIndexByte(buf[pos:cand], '\n') + 1 + pos
		end := bytes.IndexByte(buf[cand:], '\n')
		if end < 0 {
			end = len(buf)
		} else {
			end += cand
		}
		line := trimEOL(buf[start:end])
		if m.exact || m.re.Match(line) {
			lineNo += bytes.Count(buf[countAt:start], []byte{'\n'})
			countAt = start
			if !fn(lineNo, line) {
				return
			}
		}
		pos = end + 1
	}
}

// stringBytes views s as a byte slice without copying. The slice must not
// be written to.
func stringBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
