package agent

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"github.com/deepagents-go/deepagents/internal/jsonenc"
)

// appendEvent encodes e as MarshalJSON documents it, byte for byte what
// encoding/json makes of wireEvent, without reflection: the CLI encodes
// several events per step, and reflection made that a large part of a
// step's cost. TestEventEncoderMatchesEncodingJSON holds the two equal.
func appendEvent(b []byte, e *Event) ([]byte, error) {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, EventVersion, 10)
	b = append(b, `,"type":`...)
	b = jsonenc.AppendString(b, string(e.Type))
	b = append(b, `,"namespace":[`...)
	for i, n := range e.Namespace {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, n)
	}
	b = append(b, ']')
	if e.Step != 0 {
		b = append(b, `,"step":`...)
		b = strconv.AppendInt(b, int64(e.Step), 10)
	}
	b = jsonenc.AppendField(b, "thread_id", e.ThreadID)
	b = jsonenc.AppendField(b, "checkpoint_id", e.CheckpointID)
	if e.Type == EventTextDelta || e.Type == EventReasoningDelta {
		b = append(b, `,"delta":`...)
		b = jsonenc.AppendString(b, e.Delta)
	}
	b = jsonenc.AppendField(b, "message_id", e.MessageID)
	if e.Message != nil {
		b = append(b, `,"message":`...)
		var err error
		if b, err = e.Message.AppendJSON(b); err != nil {
			return nil, err
		}
	}
	b = jsonenc.AppendField(b, "tool_call_id", e.ToolCallID)
	b = jsonenc.AppendField(b, "name", e.Name)
	if len(e.Args) > 0 {
		b = append(b, `,"args":`...)
		var err error
		if b, err = jsonenc.AppendRaw(b, e.Args); err != nil {
			return nil, err
		}
	}
	if e.Type == EventNotice {
		b = append(b, `,"content":`...)
		b = jsonenc.AppendString(b, e.Content)
	}
	if e.Type == EventToolResult {
		b = append(b, `,"content":`...)
		b = jsonenc.AppendString(b, e.Content)
		b = append(b, `,"is_error":`...)
		b = strconv.AppendBool(b, e.IsError)
	}
	if e.Type == EventState && len(e.Values) > 0 {
		var err error
		if b, err = appendValues(b, e.Values); err != nil {
			return nil, err
		}
	}
	if len(e.Files) > 0 {
		b = append(b, `,"files":[`...)
		for i, f := range e.Files {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, f)
		}
		b = append(b, ']')
	}
	if e.Usage != nil {
		u := e.Usage
		b = append(b, `,"usage":{"input_tokens":`...)
		b = strconv.AppendInt(b, int64(u.InputTokens), 10)
		b = append(b, `,"output_tokens":`...)
		b = strconv.AppendInt(b, int64(u.OutputTokens), 10)
		if u.CacheReadTokens != 0 {
			b = append(b, `,"cache_read_tokens":`...)
			b = strconv.AppendInt(b, int64(u.CacheReadTokens), 10)
		}
		if u.CacheWriteTokens != 0 {
			b = append(b, `,"cache_write_tokens":`...)
			b = strconv.AppendInt(b, int64(u.CacheWriteTokens), 10)
		}
		b = append(b, '}')
	}
	if e.Context != nil {
		b = append(b, `,"context":`...)
		b = e.Context.appendJSON(b)
	}
	if len(e.Interrupts) > 0 {
		// Rare: the general encoder is fine.
		raw, err := json.Marshal(e.Interrupts)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"interrupts":`...)
		b = append(b, raw...)
	}
	b = jsonenc.AppendField(b, "status", string(e.Status))
	b = jsonenc.AppendField(b, "error", e.Error)
	b = jsonenc.AppendField(b, "end_code", string(e.EndCode))
	b = jsonenc.AppendField(b, "end_reason", e.EndReason)
	return append(b, '}'), nil
}

// appendValues appends a state event's values as fields of their own, in
// the order of their keys (encoding/json's for a map), but those named
// like one of the event's fields and the empty ones.
func appendValues(b []byte, values map[string]json.RawMessage) ([]byte, error) {
	for _, k := range slices.Sorted(maps.Keys(values)) {
		v := values[k]
		if len(v) == 0 || eventFields[k] {
			continue
		}
		b = append(b, ',')
		b = jsonenc.AppendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = jsonenc.AppendRaw(b, v); err != nil {
			return nil, err
		}
	}
	return b, nil
}
