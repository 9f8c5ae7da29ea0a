package backend

import (
	"context"
	"time"
)

// FileInfo describes one entry of a listing or glob.
type FileInfo struct {
	Path    string    `json:"path"`
	IsDir   bool      `json:"is_dir,omitempty"`
	Size    int64     `json:"size,omitempty"`
	ModTime time.Time `json:"modified_at,omitzero"`
}

// ReadResult is a window of a file's lines.
type ReadResult struct {
	// Lines holds the lines of the window without their line terminators.
	// A trailing newline at the end of the file does not start a line.
	Lines []string
	// Offset is the 0-based index of Lines[0] in the file.
	Offset int
	// Truncated reports that the window reached the backend's limit on
	// the bytes one read returns: its last line is cut there, and the
	// lines after it were not read.
	Truncated bool
}

// GrepMode says how much a grep reports.
type GrepMode uint8

// Grep modes.
const (
	// GrepContent reports every matching line.
	GrepContent GrepMode = iota
	// GrepFiles reports one match per matching file (its first), so a
	// backend may stop reading a file at its first match.
	GrepFiles
)

// GrepQuery describes a search of file contents.
type GrepQuery struct {
	// Pattern is a regular expression in RE2 syntax.
	Pattern string
	// Path is the file or directory to search; "" means "/".
	Path string
	// Glob, when set, keeps only files whose path relative to Path (or,
	// for a pattern without a slash, whose base name; for a pattern
	// starting with "/", whose whole path) matches it.
	Glob string
	Mode GrepMode
	// Limit, when positive, caps the matches returned, and lets the
	// search stop once it has found that many. Which matches a search
	// that found more returns is unspecified (a parallel walk finds them
	// in no fixed order); they are still sorted. A caller that must know
	// whether matches were left out asks for one more than it shows.
	Limit int
	// MaxLineBytes, when positive, cuts each match's Text to at most
	// that many bytes, at a UTF-8 character boundary, and sets Cut, so
	// that a match in a huge line (minified code) cannot hold the line.
	MaxLineBytes int
}

// GrepMatch is one matching line.
type GrepMatch struct {
	Path string `json:"path"`
	Line int    `json:"line"` // 1-based
	Text string `json:"text"`
	// Cut reports that Text was cut at GrepQuery.MaxLineBytes.
	Cut bool `json:"cut,omitempty"`
}

// File is a path with its content, for uploads and downloads.
type File struct {
	Path    string
	Content []byte
}

// FileResult is the outcome for one path of an upload or download. Err is nil
// on success; otherwise [ErrorCode] names it.
type FileResult struct {
	Path    string
	Content []byte // downloads only
	Err     error
}

// Backend is the protocol every file store implements. Paths are virtual
// (see the package comment). Implementations must be safe for concurrent use.
type Backend interface {
	// List returns the direct children of the directory at path, sorted
	// by path; directories have IsDir set (their Path has no trailing
	// slash). A missing directory yields an empty list, not an error.
	List(ctx context.Context, path string) ([]FileInfo, error)

	// Read returns up to limit lines of the file starting at 0-based line
	// offset. Reading an empty file returns no lines and no error. An
	// offset at or past the end of a non-empty file is an *OffsetError.
	// A limit of zero or less means no limit; a negative offset counts as
	// zero. Lines end at "\n"; a "\r" before it is dropped too.
	Read(ctx context.Context, path string, offset, limit int) (ReadResult, error)

	// Write creates a file; it fails with ErrExists when the path exists.
	Write(ctx context.Context, path, content string) error

	// Edit replaces oldString with newString in the file and returns the
	// number of replacements. Without replaceAll, oldString must occur
	// exactly once: no occurrence is ErrNoMatch, several are a
	// *MatchCountError.
	Edit(ctx context.Context, path, oldString, newString string, replaceAll bool) (int, error)

	// Grep searches file contents line by line (a match never spans
	// lines). An invalid pattern is an error wrapping ErrInvalidPattern
	// (a *PatternError). Binary files (a NUL byte in the first 8 KiB) are
	// skipped. A missing path yields no matches, not an error. Matches are
	// sorted by path, then line.
	Grep(ctx context.Context, q GrepQuery) ([]GrepMatch, error)

	// Glob returns the files under path whose path relative to it matches
	// pattern; "**" crosses directories, "*" does not. A pattern starting
	// with "/" is matched against whole paths instead. An invalid pattern
	// is an error wrapping ErrInvalidPattern. Sorted by path.
	Glob(ctx context.Context, pattern, path string) ([]FileInfo, error)

	// Upload writes files, replacing existing ones, and reports one result
	// per file in order. One file failing does not stop the others.
	Upload(ctx context.Context, files []File) []FileResult

	// Download reads files and reports one result per path in order.
	Download(ctx context.Context, paths []string) []FileResult
}

// ExecResult is the outcome of a shell command.
type ExecResult struct {
	// Output is standard output and standard error, interleaved.
	Output string
	// ExitCode is the command's exit status; -1 when it was killed.
	ExitCode int
	// Truncated reports that Output was cut at the backend's limit.
	Truncated bool
}

// Sandbox is a Backend that can also run shell commands.
type Sandbox interface {
	Backend
	// Execute runs command through a shell. A timeout of zero means the
	// backend's default; a timeout past the backend's maximum is lowered
	// to it, so a caller (the model) can shorten the limit but never
	// lengthen it beyond what the operator allows. When the call returns,
	// no process the command started may still run. A command that runs but fails is not an error:
	// its exit code says so. A command that times out is killed and
	// reported with ErrTimeout alongside whatever output it produced.
	Execute(ctx context.Context, command string, timeout time.Duration) (ExecResult, error)
	// ID identifies the sandbox instance.
	ID() string
}

// TimeoutLimiter is implemented by sandboxes that say their limits: the
// timeout of a command given none, and the longest one a caller may ask
// for (sandbox.LocalShell's Timeout and MaxTimeout). A wrapper of a Sandbox
// forwards them (see Limits).
type TimeoutLimiter interface {
	TimeoutLimits() (def, max time.Duration)
}

// Limits returns sb's default and longest timeouts; zeros when it does not
// say.
func Limits(sb Sandbox) (def, max time.Duration) {
	if l, ok := sb.(TimeoutLimiter); ok {
		return l.TimeoutLimits()
	}
	return 0, 0
}
