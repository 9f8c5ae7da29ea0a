package search

import (
	"regexp/syntax"
	"unicode/utf8"
)

// A classRun is a sequence of byte sets that every match of a pattern
// holds at consecutive bytes: "[a-z][0-9][0-9][0-9]" for
// `[A-Z][a-z]+[0-9]{3}\b`. When a pattern has no literal to look for, a
// selective run found by a table lookup per byte rules out most of the
// text, and only the lines around its hits go through the regular
// expression, whose automaton costs tens of nanoseconds a byte.
type classRun struct {
	sets [][256]bool
	key  int // the most selective position, tested first
}

// maxRunDensity is the largest expected share of positions where a run may
// match (as if bytes were uniform) for it to be worth scanning for.
const maxRunDensity = 1.0 / 2000

// requiredClassRun returns the most selective run every match of re
// contains, or nil when there is none worth using.
func requiredClassRun(re *syntax.Regexp) *classRun {
	var best *classRun
	bestDensity := maxRunDensity
	consider := func(run [][256]bool) {
		if len(run) < 2 {
			return
		}
		d, key, keyN := 1.0, 0, 257
		for i := range run {
			n := 0
			for _, in := range run[i] {
				if in {
					n++
				}
			}
			d *= float64(n) / 256
			if n < keyN {
				key, keyN = i, n
			}
		}
		if d < bestDensity {
			bestDensity = d
			best = &classRun{sets: append([][256]bool(nil), run...), key: key}
		}
	}
	var walk func(re *syntax.Regexp)
	walk = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpCapture:
			walk(re.Sub[0])
		case syntax.OpConcat:
			var run [][256]bool
			for _, s := range flatConcat(re, nil) {
				if zeroWidth(s) {
					continue // adjacency holds across an assertion
				}
				if sets, ok := positions(s); ok {
					run = append(run, sets...)
					continue
				}
				// A repetition of one byte class: its first min bytes
				// follow the run, its last min bytes precede what
				// comes next.
				if c, min, fixed := repeatedClass(s); c != nil && min >= 1 {
					for range min {
						run = append(run, *c)
					}
					if fixed {
						continue
					}
					consider(run)
					run = run[:0]
					for range min {
						run = append(run, *c)
					}
					continue
				}
				consider(run)
				run = run[:0]
				walk(s)
			}
			consider(run)
		case syntax.OpPlus:
			walk(re.Sub[0])
		case syntax.OpRepeat:
			if re.Min >= 1 {
				walk(re.Sub[0])
			}
		}
	}
	walk(re)
	return best
}

// flatConcat lists the elements of a concatenation, nested ones and
// captures opened up (Simplify turns x{3} into a concatenation of its own).
func flatConcat(re *syntax.Regexp, out []*syntax.Regexp) []*syntax.Regexp {
	for _, s := range re.Sub {
		for s.Op == syntax.OpCapture {
			s = s.Sub[0]
		}
		if s.Op == syntax.OpConcat {
			out = flatConcat(s, out)
			continue
		}
		out = append(out, s)
	}
	return out
}

func zeroWidth(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	return false
}

// positions returns the byte sets of a literal or a one-byte class, one
// per byte it matches, or false for anything else.
func positions(re *syntax.Regexp) ([][256]bool, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		var out [][256]bool
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				if r >= utf8.RuneSelf || r == 'k' || r == 'K' || r == 's' || r == 'S' {
					// Folds to multi-byte forms (KELVIN SIGN, LONG S).
					return nil, false
				}
				var s [256]bool
				s[r] = true
				if 'a' <= r && r <= 'z' {
					s[r-'a'+'A'] = true
				} else if 'A' <= r && r <= 'Z' {
					s[r-'A'+'a'] = true
				}
				out = append(out, s)
				continue
			}
			var buf [utf8.UTFMax]byte
			for _, b := range buf[:utf8.EncodeRune(buf[:], r)] {
				var s [256]bool
				s[b] = true
				out = append(out, s)
			}
		}
		return out, len(out) > 0
	case syntax.OpCharClass:
		if s, ok := byteClass(re); ok {
			return [][256]bool{*s}, true
		}
	}
	return nil, false
}

// byteClass returns the bytes of a class that matches only ASCII
// characters (never a newline, which no line holds).
func byteClass(re *syntax.Regexp) (*[256]bool, bool) {
	if re.Op != syntax.OpCharClass {
		return nil, false
	}
	var s [256]bool
	for i := 0; i+1 < len(re.Rune); i += 2 {
		lo, hi := re.Rune[i], re.Rune[i+1]
		if hi >= utf8.RuneSelf {
			return nil, false
		}
		for r := lo; r <= hi; r++ {
			s[r] = true
		}
	}
	s['\n'] = false
	return &s, true
}

// repeatedClass recognises c+ and c{min,max} over a one-byte class c.
func repeatedClass(re *syntax.Regexp) (c *[256]bool, min int, fixed bool) {
	var sub *syntax.Regexp
	switch re.Op {
	case syntax.OpPlus:
		sub, min = re.Sub[0], 1
	case syntax.OpRepeat:
		sub, min, fixed = re.Sub[0], re.Min, re.Min == re.Max
	default:
		return nil, 0, false
	}
	if s, ok := positions(sub); ok && len(s) == 1 {
		return &s[0], min, fixed
	}
	return nil, 0, false
}

// find returns the start of the first place at or after from where the run
// matches, or -1.
func (c *classRun) find(hay []byte, from int) int {
	n := len(c.sets)
	key := &c.sets[c.key]
next:
	for j := from + c.key; j+n-c.key <= len(hay); j++ {
		if !key[hay[j]] {
			continue
		}
		start := j - c.key
		for i := range c.sets {
			if !c.sets[i][hay[start+i]] {
				continue next
			}
		}
		return start
	}
	return -1
}
