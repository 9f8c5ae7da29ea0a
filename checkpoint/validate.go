package checkpoint

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxIDLen is the longest thread or checkpoint ID a Saver accepts, in bytes.
const MaxIDLen = 256

// ValidateID reports whether s can name a thread or a checkpoint: it must be
// non-empty, at most [MaxIDLen] bytes of valid UTF-8, and free of control
// characters. The error wraps ErrInvalid.
func ValidateID(kind, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty %s", ErrInvalid, kind)
	case len(s) > MaxIDLen:
		return fmt.Errorf("%w: %s longer than %d bytes", ErrInvalid, kind, MaxIDLen)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalid, kind)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: %s %q contains a control character", ErrInvalid, kind, s)
		}
	}
	return nil
}

// ValidateMetadata reports whether m is acceptable thread metadata: nil,
// JSON null, or a JSON object. The error wraps ErrInvalid.
func ValidateMetadata(m json.RawMessage) error {
	if m == nil {
		return nil
	}
	if !json.Valid(m) {
		return fmt.Errorf("%w: metadata is not valid JSON", ErrInvalid)
	}
	switch firstByte(m) {
	case '{', 'n':
		return nil
	}
	return fmt.Errorf("%w: metadata must be a JSON object", ErrInvalid)
}

// firstByte returns the first non-space byte of b, or 0.
func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}

// Valid reports whether s is one of the four known statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusIdle, StatusBusy, StatusInterrupted, StatusError:
		return true
	}
	return false
}

// ValidateRelease reports whether a run may end with status s: any known
// status but busy. The error wraps ErrInvalid.
func ValidateRelease(s Status) error {
	if !s.Valid() || s == StatusBusy {
		return fmt.Errorf("%w: a run cannot end with status %q", ErrInvalid, s)
	}
	return nil
}

// Validate checks what a Saver can check of cp without reading storage: the
// thread, checkpoint and parent IDs, Keep (not negative; zero without a
// parent), the JSON of Values, Meta and tool call arguments, and the
// file paths. It does not check that the parent exists or holds Keep
// messages. The error wraps ErrInvalid. Every Saver calls it at the start
// of Put.
func (cp *Checkpoint) Validate() error {
	if cp == nil {
		return fmt.Errorf("%w: nil checkpoint", ErrInvalid)
	}
	if err := ValidateID("thread id", cp.ThreadID); err != nil {
		return err
	}
	if err := ValidateID("checkpoint id", cp.ID); err != nil {
		return err
	}
	if cp.ParentID != "" {
		if err := ValidateID("parent checkpoint id", cp.ParentID); err != nil {
			return err
		}
		if cp.ParentID == cp.ID {
			return fmt.Errorf("%w: checkpoint %q is its own parent", ErrInvalid, cp.ID)
		}
	}
	if cp.Keep < 0 {
		return fmt.Errorf("%w: negative keep %d", ErrInvalid, cp.Keep)
	}
	if cp.ParentID == "" && cp.Keep != 0 {
		return fmt.Errorf("%w: keep %d without a parent checkpoint", ErrInvalid, cp.Keep)
	}
	if cp.Meta != nil && !json.Valid(cp.Meta) {
		return fmt.Errorf("%w: meta is not valid JSON", ErrInvalid)
	}
	for i := range cp.Messages {
		for _, tc := range cp.Messages[i].ToolCalls {
			if tc.Args != nil && !json.Valid(tc.Args) {
				return fmt.Errorf("%w: message %d: arguments of tool call %q are not valid JSON", ErrInvalid, i, tc.ID)
			}
		}
	}
	for k, v := range cp.Values {
		if k == "" {
			return fmt.Errorf("%w: empty value key", ErrInvalid)
		}
		if v != nil && !json.Valid(v) {
			return fmt.Errorf("%w: value %q is not valid JSON", ErrInvalid, k)
		}
	}
	for p := range cp.Files {
		if err := validFilePath(p); err != nil {
			return err
		}
	}
	for p := range cp.Appends {
		if err := validFilePath(p); err != nil {
			return err
		}
		if _, both := cp.Files[p]; both {
			return fmt.Errorf("%w: file %q is both written and appended to", ErrInvalid, p)
		}
	}
	return nil
}

func validFilePath(p string) error {
	if p == "" || !utf8.ValidString(p) || strings.IndexByte(p, 0) >= 0 {
		return fmt.Errorf("%w: file path %q", ErrInvalid, p)
	}
	return nil
}
