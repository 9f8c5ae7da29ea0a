package backend

import (
	"unicode/utf8"
	"unsafe"

	"github.com/deepagents-go/deepagents/internal/search"
)

// compileMatcher compiles a grep pattern, its error a *PatternError.
func compileMatcher(pattern string) (*search.Matcher, error) {
	m, err := search.Compile(pattern)
	if err != nil {
		return nil, &PatternError{Pattern: pattern, Err: err}
	}
	return m, nil
}

// stringBytes views s as a byte slice without copying. The slice must not
// be written to.
func stringBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// match makes the GrepMatch of a line, cut as q says.
func (q *GrepQuery) match(path string, line int, text []byte) GrepMatch {
	cut := false
	if q.MaxLineBytes > 0 && len(text) > q.MaxLineBytes {
		n := q.MaxLineBytes
		for n > 0 && !utf8.RuneStart(text[n]) { // not inside a character
			n--
		}
		text, cut = text[:n], true
	}
	return GrepMatch{Path: path, Line: line, Text: string(text), Cut: cut}
}

// cap keeps the first q.Limit matches of sorted ones.
func (q *GrepQuery) cap(ms []GrepMatch) []GrepMatch {
	if q.Limit > 0 && len(ms) > q.Limit {
		return ms[:q.Limit]
	}
	return ms
}
