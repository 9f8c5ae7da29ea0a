// Package cpcodec holds the encoding the durable Savers share: messages as
// compact JSON rows, and the checks that turn unreadable stored data into
// checkpoint.ErrCorrupt.
package cpcodec

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/thread"
)

// EncodeMessages encodes each message as JSON, as encoding/json does
// without HTML escaping (which would only make rows larger), but without
// reflection (llm.Message.AppendJSON, which runs on every message of
// every step), into one buffer sized from the messages, and returns the
// encodings as slices of it.
func EncodeMessages(msgs []llm.Message) ([][]byte, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	n := 0
	for i := range msgs {
		n += 128
		for _, p := range msgs[i].Parts {
			n += len(p.Text) + len(p.Data)*4/3
		}
		for _, c := range msgs[i].ToolCalls {
			n += len(c.Args)
		}
	}
	b := make([]byte, 0, n+n/8) // a little room for escapes
	out := make([][]byte, len(msgs))
	for i := range msgs {
		start := len(b)
		var err error
		if b, err = msgs[i].AppendJSONNoHTMLEscape(b); err != nil {
			return nil, fmt.Errorf("%w: message %d: %v", checkpoint.ErrInvalid, i, err)
		}
		out[i] = b[start:len(b):len(b)]
	}
	return out, nil
}

// DecodeMessage decodes a stored message; bad data is ErrCorrupt.
func DecodeMessage(data []byte, m *llm.Message, where string) error {
	if err := json.Unmarshal(data, m); err != nil {
		return Corrupt(where, err)
	}
	return nil
}

// CheckJSON returns b, or ErrCorrupt if it is not valid JSON.
func CheckJSON(b []byte, where string) (json.RawMessage, error) {
	if b == nil {
		return nil, nil
	}
	if !json.Valid(b) {
		return nil, Corrupt(where, fmt.Errorf("invalid JSON %q", clip(b)))
	}
	return json.RawMessage(b), nil
}

// Corrupt wraps err as ErrCorrupt with where the bad data was found.
func Corrupt(where string, err error) error {
	return fmt.Errorf("%w: %s: %v", checkpoint.ErrCorrupt, where, err)
}

func clip(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

// FileRow is one stored file change of a checkpoint's ancestry.
type FileRow struct {
	Path     string
	Deleted  bool // content NULL: the file was deleted
	Appended bool // Content is text appended to the file
	Data     thread.FileData
}

// AssembleFiles builds a snapshot's files from the rows that matter for each
// path: its newest rewrite (or deletion) and the appends after it, oldest
// first, the rows of one path together. A path whose first row is an
// append has no rewrite in the ancestry: the append creates it.
func AssembleFiles(rows func(yield func(FileRow) bool) error) (map[string]thread.FileData, error) {
	out := map[string]thread.FileData{}
	var (
		cur     string
		b       strings.Builder
		d       thread.FileData
		present bool
		started bool
	)
	flush := func() {
		if started && present {
			d.Content = b.String()
			out[cur] = d
		}
		b.Reset()
		present, started = false, false
	}
	err := rows(func(r FileRow) bool {
		if !started || r.Path != cur {
			flush()
			cur, started = r.Path, true
		}
		switch {
		case r.Deleted:
			b.Reset()
			present = false
		case r.Appended && present:
			b.WriteString(r.Data.Content)
			d.ModifiedAt = r.Data.ModifiedAt
		default: // a rewrite, or an append creating the file
			b.Reset()
			b.WriteString(r.Data.Content)
			d, present = r.Data, true
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	flush()
	return out, nil
}
