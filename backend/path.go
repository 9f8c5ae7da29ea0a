package backend

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// Path errors returned by [Clean]. Both also match ErrInvalidPath.
var (
	ErrTraversal   = &pathKindError{"path traversal not allowed"}
	ErrWindowsPath = &pathKindError{"windows absolute paths are not supported"}
)

type pathKindError struct{ msg string }

func (e *pathKindError) Error() string        { return e.msg }
func (e *pathKindError) Is(target error) bool { return target == ErrInvalidPath }

// PathError reports a path [Clean] refused. Err is ErrTraversal,
// ErrWindowsPath or ErrInvalidPath.
type PathError struct {
	Path string
	Err  error
}

// Error names the refused path and why.
func (e *PathError) Error() string { return fmt.Sprintf("%v: %q", e.Err, e.Path) }

// Unwrap returns ErrTraversal, ErrWindowsPath or ErrInvalidPath.
func (e *PathError) Unwrap() error { return e.Err }

// Clean validates a path given by a model and returns its normal form: absolute,
// slash-separated, without "." components or repeated slashes. "foo\bar"
// becomes "/foo/bar" and "" becomes "/".
//
// It refuses a ".." component or a leading "~" (ErrTraversal), a Windows drive
// path such as "C:\x" (ErrWindowsPath), and a NUL byte (ErrInvalidPath).
func Clean(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", &PathError{Path: p, Err: ErrInvalidPath}
	}
	if strings.HasPrefix(p, "~") {
		return "", &PathError{Path: p, Err: ErrTraversal}
	}
	if len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0]) {
		return "", &PathError{Path: p, Err: ErrWindowsPath}
	}
	s := strings.ReplaceAll(p, `\`, "/")
	for part := range strings.SplitSeq(s, "/") {
		if part == ".." {
			return "", &PathError{Path: p, Err: ErrTraversal}
		}
	}
	if !strings.HasPrefix(s, "/") {
		s = "/" + s
	}
	return path.Clean(s), nil
}

// IsPathError reports whether err is a path [Clean] refused.
func IsPathError(err error) bool {
	var pe *PathError
	return errors.As(err, &pe)
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
