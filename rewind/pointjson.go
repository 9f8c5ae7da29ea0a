package rewind

import (
	"encoding/base64"
	"slices"
	"strconv"

	"github.com/deepagents-go/deepagents/internal/jsonenc"
)

// appendPoint appends sp as json.Marshal encodes it, without reflection: a
// point is encoded at every step that changes the folder
// (TestAppendPointAsJSON holds the two to the same bytes).
func appendPoint(b []byte, sp *storedPoint) []byte {
	b = append(b, `{"kind":`...)
	b = jsonenc.AppendString(b, string(sp.Kind))
	b = jsonenc.AppendField(b, "dir", sp.Dir)
	b = jsonenc.AppendField(b, "prompt", sp.Prompt)
	b = jsonenc.AppendField(b, "checkpoint_id", sp.CheckpointID)
	b = append(b, `,"created_at":"`...)
	b = append(b, sp.CreatedAt.String()...)
	b = append(b, `","changes":`...)
	if sp.Changes == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		for i, p := range slices.Sorted(mapKeys(sp.Changes)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, p)
			b = append(b, ':')
			b = appendEntry(b, sp.Changes[p])
		}
		b = append(b, '}')
	}
	if len(sp.Notes) > 0 {
		b = append(b, `,"notes":[`...)
		for i, n := range sp.Notes {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, n)
		}
		b = append(b, ']')
	}
	if sp.Bytes != 0 {
		b = append(b, `,"bytes":`...)
		b = strconv.AppendInt(b, sp.Bytes, 10)
	}
	return append(b, '}')
}

// appendEntry appends e as json.Marshal encodes it (null for nil).
func appendEntry(b []byte, e *Entry) []byte {
	if e == nil {
		return append(b, "null"...)
	}
	b = append(b, '{')
	if e.Hash != "" {
		b = append(b, `"h":`...)
		b = jsonenc.AppendString(b, e.Hash)
		b = append(b, ',')
	}
	if e.Size != 0 {
		b = append(b, `"s":`...)
		b = strconv.AppendInt(b, e.Size, 10)
		b = append(b, ',')
	}
	b = append(b, `"m":`...)
	b = strconv.AppendUint(b, uint64(e.Mode), 10)
	b = jsonenc.AppendField(b, "l", e.Link)
	if e.Stored {
		b = append(b, `,"b":true`...)
	}
	if len(e.Data) > 0 {
		b = append(b, `,"d":"`...)
		b = base64.StdEncoding.AppendEncode(b, e.Data)
		b = append(b, '"')
	}
	if e.MTime != 0 {
		b = append(b, `,"t":`...)
		b = strconv.AppendInt(b, e.MTime, 10)
	}
	return append(b, '}')
}

func mapKeys(m map[string]*Entry) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
