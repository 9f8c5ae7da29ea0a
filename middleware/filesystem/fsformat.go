package filesystem

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/internal/clip"
)

// The texts the model sees from the filesystem tools. They are the
// contract (CONTRACT.md): prompts tuned for DeepAgents rely on them.
const (
	// MaxLineChars is how long a line of an evicted result's preview is
	// on one row; longer lines continue on rows numbered N.1, N.2, ...
	MaxLineChars = 10000
	// lineNumberWidth is the width of read_file's line-number gutter.
	lineNumberWidth = 6

	emptyFileReminder = "System reminder: File exists but has empty contents"
	noFilesFound      = "No files found"
	noMatchesFound    = "No matches found"
	// noLinesRequested answers a read_file with limit 0: nothing was read,
	// which must not look like an empty file.
	noLinesRequested = "System reminder: no lines were read because `limit` was %d. The file was not inspected and may have contents; retry with `limit` >= 1 to read it."
	// clampedOffsetNotice precedes the header of a read_file whose offset
	// was negative.
	clampedOffsetNotice = "[Requested offset %d is before the start of the file; read from line 1 instead.]\n"
	// readCutNotice precedes the header of a read_file result that reached
	// the backend's limit on one read's bytes.
	readCutNotice = "[Read stopped at the backend's size limit for one read: line %d is cut there; continue with offset=%d.]\n"
	// longLineNotice precedes the header of a read_file whose first line
	// alone is more than a result holds.
	longLineNotice = "[Line %d is longer than one result can hold: only its start is shown; continue with offset=%d.]\n"
	// readReserve is what of a result's bound read_file keeps for its
	// header and notices.
	readReserve = 512
	// lineCutMark ends a grep line cut at GrepLimits.MaxLineBytes.
	lineCutMark = " [... line truncated]"
	// grepCappedNote ends a grep result that stopped at its match cap.
	grepCappedNote = "\n\nNote: the search stopped at its limit of %d matches. The matches above are valid but incomplete; narrow the search (a more specific pattern, path or glob) to see the rest."
	// grepRaiseNote follows grepCappedNote when max_count set a lower cap.
	grepRaiseNote = " Or raise max_count (up to %d)."
	// regexpHint follows "No matches found" for a literal pattern that
	// looks like a regular expression.
	regexpHint = "\n\nNote: grep searches for the literal text, so regular expression syntax such as `|`, `.*` or `\\d` is searched as written. Search for the words you want; for alternatives, run one search each."
	// globTimeoutText answers a glob that ran past its time limit.
	globTimeoutText = "Error: glob timed out after %v. Try a more specific pattern or a narrower path."
	// notUTF8Text answers read_file on a file that is not UTF-8 text, as
	// the Python reference does (it decodes strictly): shown with U+FFFD,
	// an edit copied from it would never match the file's bytes.
	notUTF8Text = "Error reading file '%s': it is not UTF-8 text (line %d holds the byte 0x%02x)"
	// truncatedNote ends a tool result cut at the size limit.
	truncatedNote = "\n... [results truncated, try being more specific with your parameters]"
)

// formatLines renders lines cat -n style, the first numbered start
// (1-based): the previews of an evicted result, which, unlike read_file,
// the model reads only to decide what to read.
func formatLines(b *strings.Builder, lines []string, start int) {
	for i, line := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		n := start + i
		line = strings.ToValidUTF8(line, "\uFFFD") // shown, not refused
		if len(line) <= MaxLineChars || utf8.RuneCountInString(line) <= MaxLineChars {
			writeGutter(b, strconv.Itoa(n))
			b.WriteString(line)
			continue
		}
		for chunk := 0; line != ""; chunk++ {
			cut := clip.RuneOffset(line, MaxLineChars)
			if chunk == 0 {
				writeGutter(b, strconv.Itoa(n))
			} else {
				b.WriteByte('\n')
				writeGutter(b, strconv.Itoa(n)+"."+strconv.Itoa(chunk))
			}
			b.WriteString(line[:cut])
			line = line[cut:]
		}
	}
}

// writeGutter writes a line marker right-aligned in the gutter, then a tab.
func writeGutter(b *strings.Builder, mark string) {
	for i := len(mark); i < lineNumberWidth; i++ {
		b.WriteByte(' ')
	}
	b.WriteString(mark)
	b.WriteByte('\t')
}

// pathErrorText renders a refused path the way the contract words it.
func pathErrorText(path string, err error) string {
	switch {
	case errors.Is(err, backend.ErrTraversal):
		return "Error: Path traversal not allowed: " + path
	case errors.Is(err, backend.ErrWindowsPath):
		return "Error: Windows absolute paths are not supported: " + path + ". Please use virtual paths starting with / (e.g., /workspace/file.txt)"
	}
	return fmt.Sprintf("Error: Invalid path: %s", path)
}

// prefixErrorText renders a path outside the allowed prefixes.
func prefixErrorText(path string, prefixes []string) string {
	quoted := make([]string, len(prefixes))
	for i, p := range prefixes {
		quoted[i] = "'" + p + "'"
	}
	return fmt.Sprintf("Error: Path must start with one of [%s]: %s", strings.Join(quoted, ", "), path)
}

// backendErrorText renders a backend error for the model.
func backendErrorText(path string, err error) string {
	var oe *backend.OffsetError
	var me *backend.MatchCountError
	switch {
	case errors.As(err, &oe):
		return fmt.Sprintf("Error: Line offset %d exceeds file length (%d lines)", oe.Offset, oe.Lines)
	case errors.As(err, &me):
		return "" // needs the old string; the edit tool words it
	case errors.Is(err, backend.ErrNotFound):
		return fmt.Sprintf("Error: File '%s' not found", path)
	case errors.Is(err, backend.ErrExists):
		return fmt.Sprintf("Error: Cannot write to %s because it already exists. Read and then make an edit, or write to a new path.", path)
	case errors.Is(err, backend.ErrIsDir):
		return fmt.Sprintf("Error: '%s' is a directory, not a file", path)
	case errors.Is(err, backend.ErrPermission):
		return fmt.Sprintf("Error: Permission denied: %s (%v)", path, err)
	case backend.IsPathError(err):
		var pe *backend.PathError
		errors.As(err, &pe)
		return pathErrorText(path, pe.Err)
	}
	return fmt.Sprintf("Error: %v", err)
}

// capOutput cuts s to max characters, ending with a note that tells the
// model to narrow its query.
func capOutput(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	cut := strings.LastIndexByte(s[:max], '\n')
	if cut <= 0 {
		cut = max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
	}
	return s[:cut] + truncatedNote
}

// firstInvalidByte returns the first byte of s that starts no valid UTF-8
// sequence.
func firstInvalidByte(s string) byte {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return s[i]
			}
		}
	}
	return 0
}
