package backend

import (
	"errors"
	"fmt"
)

// Errors returned by backends. Test with errors.Is.
var (
	ErrNotFound       = errors.New("file not found")
	ErrExists         = errors.New("file already exists")
	ErrIsDir          = errors.New("is a directory")
	ErrPermission     = errors.New("permission denied")
	ErrInvalidPath    = errors.New("invalid path")
	ErrNoMatch        = errors.New("string not found in file")
	ErrMultipleMatch  = errors.New("string appears more than once in file")
	ErrInvalidPattern = errors.New("invalid pattern")
	ErrOffset         = errors.New("line offset exceeds file length")
	ErrTooLarge       = errors.New("file too large")
	ErrTimeout        = errors.New("command timed out")
	// ErrNoState is returned by the State backend when it is used outside a
	// run and was not given files of its own.
	ErrNoState = errors.New("no thread state: the State backend needs a run's files (see thread.WithFiles)")
)

// MatchCountError reports an edit whose old string occurs Count times when it
// had to occur exactly once. It matches ErrMultipleMatch.
type MatchCountError struct{ Count int }

// Error says how often the string occurs.
func (e *MatchCountError) Error() string {
	return fmt.Sprintf("string appears %d times in file", e.Count)
}

// Is reports whether target is ErrMultipleMatch.
func (e *MatchCountError) Is(target error) bool { return target == ErrMultipleMatch }

// TrailingNewlineError reports an edit that found nothing because its old
// string ends with a newline the file lacks at its end, the slip models
// make most with a file's last line. Without that newline the string occurs
// Count times. It matches ErrNoMatch.
type TrailingNewlineError struct{ Count int }

// Error says why the string was not found.
func (e *TrailingNewlineError) Error() string {
	return fmt.Sprintf("string not found in file: it ends with a newline the file lacks at its end (without it, it occurs %d times)", e.Count)
}

// Is reports whether target is ErrNoMatch.
func (e *TrailingNewlineError) Is(target error) bool { return target == ErrNoMatch }

// OffsetError reports a read whose offset is past the end of the file. It
// matches ErrOffset.
type OffsetError struct {
	Offset int
	Lines  int // the file's length in lines
}

// Error says the offset and the file's length.
func (e *OffsetError) Error() string {
	return fmt.Sprintf("line offset %d exceeds file length (%d lines)", e.Offset, e.Lines)
}

// Is reports whether target is ErrOffset.
func (e *OffsetError) Is(target error) bool { return target == ErrOffset }

// ErrorCode names an upload or download error the way the protocol does:
// "file_not_found", "permission_denied", "is_directory" or "invalid_path".
// Other errors, and nil, give "".
func ErrorCode(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrNotFound):
		return "file_not_found"
	case errors.Is(err, ErrPermission):
		return "permission_denied"
	case errors.Is(err, ErrIsDir):
		return "is_directory"
	case errors.Is(err, ErrInvalidPath):
		return "invalid_path"
	}
	return ""
}

// PatternError reports a regular expression or glob pattern that does not
// parse. It matches ErrInvalidPattern; Err holds the parser's error, whose
// text is the reason to show (for example "error parsing regexp: missing
// closing ): `(`").
type PatternError struct {
	Pattern string
	Err     error
}

// Error gives the reason the pattern was refused.
func (e *PatternError) Error() string {
	return fmt.Sprintf("invalid pattern %q: %v", e.Pattern, e.Err)
}

// Unwrap returns the parser's error.
func (e *PatternError) Unwrap() error { return e.Err }

// Is reports whether target is ErrInvalidPattern.
func (e *PatternError) Is(target error) bool { return target == ErrInvalidPattern }
