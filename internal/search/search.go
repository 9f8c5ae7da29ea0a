// Package search finds the lines of a buffer that match an RE2 regular
// expression, fast: it looks for a literal (or a run of byte classes) that
// every match must hold and runs the expression only on the lines around
// it. The backends' grep is built on it.
package search

import (
	"bytes"
	"encoding/binary"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// BinarySniffLen is how much of a file is checked for a NUL byte to decide
// that it is binary and skip it, as grep tools do.
const BinarySniffLen = 8 << 10

// IsBinary reports whether buf looks binary: a NUL in its first 8 KiB.
func IsBinary(buf []byte) bool {
	return bytes.IndexByte(buf[:min(len(buf), BinarySniffLen)], 0) >= 0
}

// A Matcher finds the lines of a buffer that match a regular expression. It
// searches the whole buffer at once and only splits out the lines around
// candidate matches: a literal that every match must contain is found (see
// probe), and the regular expression then runs on that single line.
// Without such a literal the expression scans the buffer itself. A Matcher
// is safe for concurrent use.
type Matcher struct {
	re      *regexp.Regexp // the pattern with (?m): ^ and $ match at lines
	lits    [][]byte       // one of these occurs in every match; nil if unknown
	exact   bool           // the pattern is lits[0] itself: no verification
	perLine bool           // the pattern anchors to the text (\A, \z): run per line
	// fold says lits are lower case and to be found ignoring ASCII case.
	// foldKS says they hold a k or an s, which (?i) also matches as the
	// non-ASCII KELVIN SIGN and LONG S.
	fold, foldKS bool
	probes       []probe // how to find lits
}

// probe finds the next occurrence of one literal by looking for its rarest
// byte (by byteRank) with the vectorised bytes.IndexByte and comparing the
// bytes around it. Ignoring case, a literal needs two probes, one per case
// of that letter.
type probe struct {
	run   *classRun // a run of byte classes instead of a literal
	lit   []byte
	index bool // use bytes.Index: every byte of lit is common
	fold  bool
	b     byte // fold: the byte looked for
	off   int  // fold: its offset in lit
}

func (p *probe) find(hay []byte, from int) int {
	if p.run != nil {
		return p.run.find(hay, from)
	}
	if p.index {
		if j := bytes.Index(hay[from:], p.lit); j >= 0 {
			return from + j
		}
		return -1
	}
	for pos := from + p.off; pos < len(hay); {
		j := bytes.IndexByte(hay[pos:], p.b)
		if j < 0 {
			return -1
		}
		start := pos + j - p.off
		if end := start + len(p.lit); end <= len(hay) {
			if p.fold && equalFoldLower(hay[start:end], p.lit) || !p.fold && bytes.Equal(hay[start:end], p.lit) {
				return start
			}
		}
		pos += j + 1
	}
	return -1
}

// equalFoldLower reports whether s equals the lower-case lit ignoring ASCII
// case.
func equalFoldLower(s, lit []byte) bool {
	for i, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lit[i] {
			return false
		}
	}
	return true
}

// makeProbes returns the probes finding m.lits.
func makeProbes(lits [][]byte, fold bool) []probe {
	var out []probe
	for _, l := range lits {
		off, cost := 0, 1<<30
		for i, c := range l {
			k := int(byteRank[c])
			if fold && 'a' <= c && c <= 'z' {
				k = max(k, int(byteRank[c-'a'+'A']))
			}
			if k < cost {
				off, cost = i, k
			}
		}
		c := l[off]
		if !fold && cost >= commonRank {
			// bytes.Index switches to a vectorised brute force when
			// its first byte keeps matching in vain.
			out = append(out, probe{lit: l, index: true})
			continue
		}
		out = append(out, probe{lit: l, fold: fold, b: c, off: off})
		if fold && 'a' <= c && c <= 'z' {
			out = append(out, probe{lit: l, fold: true, b: c - 'a' + 'A', off: off})
		}
	}
	return out
}

// commonRank is the byteRank from which a byte is too common to look for.
const commonRank = 150

// byteRank estimates how common each byte is in source code (higher is
// more common, on a log scale), measured on the Go source tree. It picks
// the byte a case-insensitive search looks for.
var byteRank = [256]uint8{
	0, 1, 0, 0, 0, 0, 0, 0, 0, 162, 158, 0, 0, 1, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	201, 63, 117, 19, 50, 57, 59, 56, 131, 131, 81, 67, 136, 88, 129, 130,
	134, 116, 107, 95, 98, 84, 96, 79, 91, 80, 104, 70, 55, 121, 42, 1,
	1, 103, 89, 103, 95, 111, 92, 77, 76, 104, 14, 46, 94, 93, 94, 101,
	103, 27, 108, 117, 116, 72, 79, 62, 60, 61, 9, 77, 69, 77, 6, 113,
	39, 156, 115, 143, 136, 172, 135, 123, 124, 156, 38, 101, 143, 125, 159, 152,
	132, 56, 161, 153, 167, 136, 99, 99, 117, 110, 61, 110, 48, 110, 1, 0,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 36, 1, 1, 1, 1, 1, 1, 1, 1,
	0, 0, 38, 1, 1, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 0,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1,
	1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
}

// Compile compiles an RE2 pattern for line-oriented search. Its error is
// the regexp package's.
func Compile(pattern string) (*Matcher, error) {
	// Compile the pattern as given first, so that the error names it.
	if _, err := regexp.Compile(pattern); err != nil {
		return nil, err
	}
	expr := "(?m)" + pattern
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, err
	}
	tree = tree.Simplify()
	m := &Matcher{re: re, perLine: hasTextAnchor(tree)}
	m.lits = requiredLiterals(tree, false)
	if m.lits == nil {
		if m.lits = requiredLiterals(tree, true); m.lits != nil {
			m.fold = true
			for _, l := range m.lits {
				m.foldKS = m.foldKS || bytes.ContainsAny(l, "ks")
			}
		}
	}
	if lit, ok := wholeLiteral(tree); ok && !strings.ContainsAny(lit, "\r\n") {
		m.lits, m.exact = [][]byte{[]byte(lit)}, true
	}
	m.probes = makeProbes(m.lits, m.fold)
	if m.lits == nil && !m.perLine {
		if run := requiredClassRun(tree); run != nil {
			m.probes = []probe{{run: run}}
		}
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

// requiredLiterals returns a set of literals one of which occurs in every
// match of re, or nil when it cannot tell. With fold, case-insensitive
// literals count too and every literal is returned in ASCII lower case, to
// be searched for in a lower-cased copy of the text; a case-insensitive
// literal with non-ASCII letters makes it give up.
func requiredLiterals(re *syntax.Regexp, fold bool) [][]byte {
	switch re.Op {
	case syntax.OpLiteral:
		return literalOf(re, fold)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0], fold)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0], fold)
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
			if s.Op == syntax.OpLiteral {
				if l := literalOf(s, fold); l != nil {
					run = append(run, l[0]...)
					continue
				}
			}
			flush()
			best = betterLits(best, requiredLiterals(s, fold))
		}
		flush()
		return best
	case syntax.OpAlternate:
		var all [][]byte
		for _, s := range re.Sub {
			l := requiredLiterals(s, fold)
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

// literalOf returns an OpLiteral's text as a one-element set (see
// requiredLiterals), or nil.
func literalOf(re *syntax.Regexp, fold bool) [][]byte {
	if len(re.Rune) == 0 {
		return nil
	}
	b := []byte(string(re.Rune))
	if re.Flags&syntax.FoldCase != 0 {
		if !fold {
			return nil
		}
		for _, c := range b {
			if c >= utf8.RuneSelf {
				return nil
			}
		}
	}
	if fold {
		lowerASCII(b, b)
	}
	return [][]byte{b}
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
func (m *Matcher) scan(buf []byte, fn func(line int, text []byte) bool) {
	probes := m.probes
	if m.foldKS && (bytes.Contains(buf, kelvin) || bytes.Contains(buf, longS)) {
		probes = nil // let the expression itself find them
	}
	var (
		pos     int // start of the first line not yet examined
		lineNo  = 1 // the line number at countAt
		countAt int
		next    []int // next occurrence of each literal at or after pos
	)
	// Without a literal the expression scans the buffer, where "$" does
	// not match before "\r\n"; such text is searched line by line.
	perLine := m.perLine || (probes == nil && bytes.IndexByte(buf, '\r') >= 0)
	if probes != nil {
		next = make([]int, len(probes))
		for i := range next {
			next[i] = -2 // unknown
		}
	}
	for pos < len(buf) {
		// Find a candidate: the start of some possible match.
		var cand int
		if probes != nil {
			cand = -1
			for i := range probes {
				if next[i] == -2 || (next[i] >= 0 && next[i] < pos) {
					next[i] = probes[i].find(buf, pos)
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
		if start == len(buf) {
			return // an empty match after the final newline: no line there
		}
		end := bytes.IndexByte(buf[cand:], '\n')
		if end < 0 {
			end = len(buf)
		} else {
			end += cand
		}
		line := TrimEOL(buf[start:end])
		if (m.exact && probes != nil) || m.re.Match(line) {
			lineNo += bytes.Count(buf[countAt:start], []byte{'\n'})
			countAt = start
			if !fn(lineNo, line) {
				return
			}
		}
		pos = end + 1
	}
}

// The UTF-8 forms of KELVIN SIGN and LATIN SMALL LETTER LONG S, which
// simple case folding equates with k and s.
var (
	kelvin = []byte("\u212a")
	longS  = []byte("\u017f")
)

// lowerASCII writes src to dst (at least as long) with ASCII letters in
// lower case, eight bytes at a time.
func lowerASCII(dst, src []byte) {
	const ones = 0x0101010101010101
	i := 0
	for ; i+8 <= len(src); i += 8 {
		w := binary.LittleEndian.Uint64(src[i:])
		low := w & (0x7f * ones)               // each byte without its high bit
		ge := low + (0x80-'A')*ones            // high bit set where >= 'A'
		gt := low + (0x80-'Z'-1)*ones          // high bit set where > 'Z'
		upper := ge &^ gt &^ w & (0x80 * ones) // ASCII upper-case letters
		binary.LittleEndian.PutUint64(dst[i:], w|upper>>2)
	}
	for ; i < len(src); i++ {
		c := src[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
}

// searchPiece is about how much of a buffer a search examines between
// checks that it is to stop: a cancelled search ends within one piece.
const searchPiece = 64 << 10

// Search is scan over buf in pieces of about searchPiece bytes, each ending
// after a newline (a match never spans lines, so the pieces find what the
// whole would). It checks stopped before each piece and reports false if
// it stopped there.
func (m *Matcher) Search(buf []byte, stopped func() bool, fn func(line int, text []byte) bool) bool {
	lines := 0 // lines in the pieces before this one
	for len(buf) > 0 {
		if stopped() {
			return false
		}
		n := len(buf)
		if n > searchPiece {
			if i := bytes.IndexByte(buf[searchPiece:], '\n'); i >= 0 {
				n = searchPiece + i + 1
			}
		}
		more := true
		m.scan(buf[:n], func(line int, text []byte) bool {
			more = fn(lines+line, text)
			return more
		})
		if !more {
			return true
		}
		lines += bytes.Count(buf[:n], newline)
		buf = buf[n:]
	}
	return true
}

var newline = []byte{'\n'}

// TrimEOL drops a trailing "\n" and then a trailing "\r".
func TrimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}
