// Package cpcodec holds the encoding the durable Savers share: messages as
// compact JSON rows, and the checks that turn unreadable stored data into
// checkpoint.ErrCorrupt.
package cpcodec

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
)

// EncodeMessages encodes each message as JSON (without HTML escaping, which
// would only make rows larger) into one buffer and returns the encodings as
// slices of it.
func EncodeMessages(msgs []llm.Message) ([][]byte, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	buf.Grow(512 * len(msgs))
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	ends := make([]int, len(msgs))
	for i := range msgs {
		if err := enc.Encode(&msgs[i]); err != nil {
			return nil, fmt.Errorf("%w: message %d: %v", checkpoint.ErrInvalid, i, err)
		}
		buf.Truncate(buf.Len() - 1) // the Encoder's newline
		ends[i] = buf.Len()
	}
	b := buf.Bytes()
	out := make([][]byte, len(msgs))
	start := 0
	for i, end := range ends {
		out[i] = b[start:end:end]
		start = end
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
