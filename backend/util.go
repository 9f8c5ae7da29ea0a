package backend

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/deepagents-go/deepagents/internal/search"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// under reports whether the virtual path p is dir or lies below it.
func under(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || (len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir)
}

// relTo returns p relative to dir ("" when p is dir). p must be under dir.
func relTo(p, dir string) string {
	if p == dir {
		return ""
	}
	if dir == "/" {
		return p[1:]
	}
	return p[len(dir)+1:]
}

// joinPath appends name to the virtual directory dir.
func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// parentDir returns the virtual directory holding p ("/" for "/").
func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// baseName returns the last element of the virtual path p.
func baseName(p string) string {
	return p[strings.LastIndexByte(p, '/')+1:]
}

// noMatch is the error of an edit whose oldString occurs nowhere in
// content: a *TrailingNewlineError when only a final newline the file lacks
// stops it from matching at the end, ErrNoMatch otherwise.
func noMatch(content, oldString string) error {
	stripped, ok := strings.CutSuffix(oldString, "\n")
	if !ok || stripped == "" {
		return ErrNoMatch
	}
	content = strings.ReplaceAll(content, "\r\n", "\n") // CRLF files match LF strings too
	stripped = strings.ReplaceAll(stripped, "\r\n", "\n")
	if !strings.HasSuffix(content, stripped) {
		return ErrNoMatch
	}
	return &TrailingNewlineError{Count: strings.Count(content, stripped)}
}

// ReplaceIn performs an edit on content, as every backend's Edit does: it
// is shared by the in-memory backends and Filesystem so that all count and
// report alike, and by the tools that work out several edits before they
// write one (multi_edit). Its errors are Edit's: ErrNoMatch, a
// *MatchCountError, a *TrailingNewlineError.
//
// An empty oldString edits only an empty file, whose content becomes
// newString (so a file created empty is not a dead end). In a file with
// CRLF line endings, an oldString written with LF (as models write) that
// does not match as is matches with CRLF, and newString is written with
// CRLF too, so the file keeps its endings. In a file with LF line endings
// (and no CRLF), the strings' CRLF are read as LF, so that a model writing
// CRLF matches and no \r enters the file.
func ReplaceIn(content, oldString, newString string, replaceAll bool) (string, int, error) {
	if strings.Contains(content, "\n") && !strings.Contains(content, "\r\n") && strings.Contains(oldString+newString, "\r\n") {
		oldString = strings.ReplaceAll(oldString, "\r\n", "\n")
		newString = strings.ReplaceAll(newString, "\r\n", "\n")
	}
	if oldString == "" {
		if content == "" {
			return newString, 1, nil
		}
		return "", 0, fmt.Errorf("%w: the string to replace is empty", ErrNoMatch)
	}
	n := strings.Count(content, oldString)
	if n == 0 && strings.Contains(oldString, "\n") && strings.Contains(content, "\r\n") {
		if crlf := toCRLF(oldString); crlf != oldString {
			if n = strings.Count(content, crlf); n > 0 {
				oldString, newString = crlf, toCRLF(newString)
			}
		}
	}
	switch {
	case n == 0:
		return "", 0, noMatch(content, oldString)
	case n > 1 && !replaceAll:
		return "", 0, &MatchCountError{Count: n}
	case replaceAll:
		return strings.ReplaceAll(content, oldString, newString), n, nil
	}
	return strings.Replace(content, oldString, newString, 1), 1, nil
}

// toCRLF writes s's line breaks as CRLF.
func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// scanLines reads the window of lines [offset, offset+limit) from r, with
// the semantics of Backend.Read. It stops reading as soon as the window is
// full, so paging through a large file does not load it whole.
func scanLines(r io.Reader, offset, limit int) (ReadResult, error) {
	return scanLinesMax(r, offset, limit, -1)
}

// scanLinesMax is scanLines holding at most maxBytes of line text (no limit
// when negative): past that the last line is cut at a character boundary,
// reading stops and the result says Truncated. So a window of a huge file,
// or one huge line, costs at most maxBytes of memory.
func scanLinesMax(r io.Reader, offset, limit int, maxBytes int64) (ReadResult, error) {
	if offset < 0 {
		offset = 0
	}
	res := ReadResult{Offset: offset}
	br := bufio.NewReaderSize(&lfReader{r: r}, 64<<10)
	var (
		line    int    // index of the current line
		partial bool   // bytes of the current line were seen
		acc     []byte // the current line, when inside the window
		held    int64  // bytes of the lines already in res
	)
	inWindow := func() bool { return line >= offset && (limit <= 0 || len(res.Lines) < limit) }
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			partial = true
			if inWindow() {
				if maxBytes >= 0 && held+int64(len(acc)+len(chunk)) > maxBytes {
					acc = append(acc, chunk[:maxBytes-held-int64(len(acc))]...)
					res.Lines = append(res.Lines, string(cutRune(acc)))
					res.Truncated = true
					return res, nil
				}
				acc = append(acc, chunk...)
			}
		}
		switch err {
		case nil: // a complete line
			if inWindow() {
				res.Lines = append(res.Lines, string(search.TrimEOL(acc)))
				held += int64(len(acc))
				acc = acc[:0]
			}
			line++
			partial = false
			if limit > 0 && len(res.Lines) == limit {
				return res, nil
			}
			continue
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			if partial {
				if inWindow() {
					res.Lines = append(res.Lines, string(search.TrimEOL(acc)))
				}
				line++
			}
			if line == 0 { // empty file
				return res, nil
			}
			if offset >= line {
				return ReadResult{}, &OffsetError{Offset: offset, Lines: line}
			}
			return res, nil
		default:
			return ReadResult{}, err
		}
	}
}

// cutRune drops an incomplete UTF-8 sequence that a cut left at the end of b.
func cutRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

// errNoResult stands for a result an inner backend failed to return.
var errNoResult = errors.New("the backend returned no result for this file")

func isDirErr(err error) bool { return errors.Is(err, ErrIsDir) }

// pathLocks serialises read-modify-write cycles (edits, uploads) on the same
// path within one process. Paths hash onto a fixed set of mutexes.
type pathLocks struct {
	mu [64]sync.Mutex
}

// lock locks p's mutex and returns its unlock function.
func (l *pathLocks) lock(p string) func() {
	h := uint32(2166136261) // FNV-1a
	for i := 0; i < len(p); i++ {
		h ^= uint32(p[i])
		h *= 16777619
	}
	m := &l.mu[h%uint32(len(l.mu))]
	m.Lock()
	return m.Unlock
}

// stringLines is scanLines for content already in memory: the lines are
// substrings of s, so nothing is copied or buffered.
func stringLines(s string, offset, limit int) (ReadResult, error) {
	if offset < 0 {
		offset = 0
	}
	res := ReadResult{Offset: offset}
	line := 0
	for len(s) > 0 {
		var l string
		// A line ends at \n, \r\n or a bare \r, as the references count.
		switch i := strings.IndexAny(s, "\r\n"); {
		case i < 0:
			l, s = s, ""
		case s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n':
			l, s = s[:i], s[i+2:]
		default:
			l, s = s[:i], s[i+1:]
		}
		if line >= offset {
			if limit > 0 && len(res.Lines) == limit {
				return res, nil
			}
			res.Lines = append(res.Lines, l)
		}
		line++
	}
	if line > 0 && offset >= line {
		return ReadResult{}, &OffsetError{Offset: offset, Lines: line}
	}
	return res, nil
}

// lfReader turns the line breaks of what it reads into \n: \r\n becomes
// \n and a bare \r becomes \n, so that scanLines counts lines as
// stringLines does. A \r is written as \n at once; a \n right after it is
// then dropped, so the output is never longer than the input.
type lfReader struct {
	r      io.Reader
	skipLF bool // the last byte read was \r
}

func (l *lfReader) Read(p []byte) (int, error) {
	for {
		n, err := l.r.Read(p)
		out := 0
		for _, c := range p[:n] {
			switch {
			case l.skipLF && c == '\n':
				l.skipLF = false
				continue
			case c == '\r':
				l.skipLF = true
				c = '\n'
			default:
				l.skipLF = false
			}
			p[out] = c
			out++
		}
		if out > 0 || err != nil || n == 0 {
			return out, err
		}
		// only the \n of a \r\n split across reads: read on
	}
}
