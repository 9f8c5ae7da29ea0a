package agent

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/deepagents-go/deepagents/llm"
)

// appendEvent encodes e as MarshalJSON documents it, byte for byte what
// encoding/json makes of wireEvent, without reflection: the CLI encodes
// several events per step, and reflection made that a large part of a
// step's cost. TestEventEncoderMatchesEncodingJSON holds the two equal.
func appendEvent(b []byte, e *Event) ([]byte, error) {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, EventVersion, 10)
	b = append(b, `,"type":`...)
	b = appendString(b, string(e.Type))
	b = append(b, `,"namespace":[`...)
	for i, n := range e.Namespace {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, n)
	}
	b = append(b, ']')
	if e.Step != 0 {
		b = append(b, `,"step":`...)
		b = strconv.AppendInt(b, int64(e.Step), 10)
	}
	b = appendField(b, "thread_id", e.ThreadID)
	b = appendField(b, "checkpoint_id", e.CheckpointID)
	if e.Type == EventTextDelta || e.Type == EventReasoningDelta {
		b = append(b, `,"delta":`...)
		b = appendString(b, e.Delta)
	}
	if e.Message != nil {
		b = append(b, `,"message":`...)
		var err error
		if b, err = appendMessage(b, e.Message); err != nil {
			return nil, err
		}
	}
	b = appendField(b, "tool_call_id", e.ToolCallID)
	b = appendField(b, "name", e.Name)
	if len(e.Args) > 0 {
		b = append(b, `,"args":`...)
		var err error
		if b, err = appendRaw(b, e.Args); err != nil {
			return nil, err
		}
	}
	if e.Type == EventNotice {
		b = append(b, `,"content":`...)
		b = appendString(b, e.Content)
	}
	if e.Type == EventToolResult {
		b = append(b, `,"content":`...)
		b = appendString(b, e.Content)
		b = append(b, `,"is_error":`...)
		b = strconv.AppendBool(b, e.IsError)
	}
	if e.Type == EventState && e.Todos != nil {
		b = append(b, `,"todos":[`...)
		for i, t := range e.Todos {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"content":`...)
			b = appendString(b, t.Content)
			b = append(b, `,"status":`...)
			b = appendString(b, string(t.Status))
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(e.Files) > 0 {
		b = append(b, `,"files":[`...)
		for i, f := range e.Files {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, f)
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
	if len(e.Interrupts) > 0 {
		// Rare: the general encoder is fine.
		raw, err := json.Marshal(e.Interrupts)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"interrupts":`...)
		b = append(b, raw...)
	}
	b = appendField(b, "status", string(e.Status))
	b = appendField(b, "error", e.Error)
	return append(b, '}'), nil
}

// appendField appends ,"name":"value" when value is not empty.
func appendField(b []byte, name, value string) []byte {
	if value == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendString(b, value)
}

// appendMessage encodes an llm.Message as encoding/json does.
func appendMessage(b []byte, m *llm.Message) ([]byte, error) {
	b = append(b, `{"role":`...)
	b = appendString(b, string(m.Role))
	if len(m.Parts) > 0 {
		b = append(b, `,"parts":[`...)
		for i := range m.Parts {
			p := &m.Parts[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":`...)
			b = appendString(b, string(p.Type))
			b = appendField(b, "text", p.Text)
			b = appendField(b, "mime_type", p.MIMEType)
			if len(p.Data) > 0 {
				b = append(b, `,"data":"`...)
				b = base64.StdEncoding.AppendEncode(b, p.Data)
				b = append(b, '"')
			}
			b = appendField(b, "url", p.URL)
			b = appendField(b, "signature", p.Signature)
			if p.Redacted {
				b = append(b, `,"redacted":true`...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i := range m.ToolCalls {
			c := &m.ToolCalls[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = appendString(b, c.ID)
			b = append(b, `,"name":`...)
			b = appendString(b, c.Name)
			b = append(b, `,"args":`...)
			var err error
			if b, err = appendRaw(b, c.Args); err != nil {
				return nil, err
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendField(b, "tool_call_id", m.ToolCallID)
	b = appendField(b, "name", m.Name)
	if m.IsError {
		b = append(b, `,"is_error":true`...)
	}
	return append(b, '}'), nil
}

// appendRaw appends raw JSON compacted and HTML-escaped, as encoding/json
// writes a json.RawMessage (null when empty).
func appendRaw(b []byte, raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return append(b, "null"...), nil
	}
	start := len(b)
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		return nil, err
	}
	b = buf.Bytes()
	if seg := b[start:]; bytes.ContainsAny(seg, "<>&") || bytes.Contains(seg, []byte("\u2028")) ||
		bytes.Contains(seg, []byte("\u2029")) || bytes.Contains(seg, []byte(" ")) || bytes.Contains(seg, []byte(" ")) {
		var esc bytes.Buffer
		json.HTMLEscape(&esc, seg)
		b = append(b[:start], esc.Bytes()...)
	}
	return b, nil
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaped as encoding/json
// escapes it by default (HTML characters, U+2028 and U+2029 included;
// invalid UTF-8 as U+FFFD).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
