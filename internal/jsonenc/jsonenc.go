// Package jsonenc appends JSON values to byte slices exactly as
// encoding/json encodes them, without reflection: the encoders of events
// and messages, which run several times per step, are built on it.
package jsonenc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Escaping says whether <, > and & are escaped, as encoding/json does by
// default (EscapeHTML) or as an Encoder after SetEscapeHTML(false) (NoHTML).
type Escaping bool

const (
	EscapeHTML Escaping = true
	NoHTML     Escaping = false
)

// AppendField appends ,"name":"value" when value is not empty (a string
// field with omitempty); name must need no escaping.
func AppendField(b []byte, name, value string) []byte {
	return EscapeHTML.AppendField(b, name, value)
}

// AppendField is AppendField escaped as e says.
func (e Escaping) AppendField(b []byte, name, value string) []byte {
	if value == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return e.AppendString(b, value)
}

// AppendRaw appends raw JSON compacted and HTML-escaped, as encoding/json
// writes a json.RawMessage (null when empty).
func AppendRaw(b []byte, raw json.RawMessage) ([]byte, error) {
	return EscapeHTML.AppendRaw(b, raw)
}

// AppendRaw is AppendRaw escaped as e says.
func (e Escaping) AppendRaw(b []byte, raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return append(b, "null"...), nil
	}
	start := len(b)
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		return nil, err
	}
	b = buf.Bytes()
	if !e {
		return b, nil
	}
	if seg := b[start:]; bytes.ContainsAny(seg, "<>&") || bytes.Contains(seg, []byte("\u2028")) ||
		bytes.Contains(seg, []byte("\u2029")) || bytes.Contains(seg, []byte(" ")) || bytes.Contains(seg, []byte(" ")) {
		var esc bytes.Buffer
		json.HTMLEscape(&esc, seg)
		b = append(b[:start], esc.Bytes()...)
	}
	return b, nil
}

const hexDigits = "0123456789abcdef"

// safeHTML and safeNoHTML hold the ASCII bytes a JSON string keeps as they
// are, with and without HTML escaping; other bytes are escaped or, from
// 0x80, decoded as UTF-8.
var safeHTML, safeNoHTML = safeBytes(true), safeBytes(false)

func safeBytes(html bool) (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && !(html && (c == '<' || c == '>' || c == '&'))
	}
	return t
}

// AppendString appends s as a JSON string, escaped as encoding/json
// escapes it by default (HTML characters, U+2028 and U+2029 included;
// invalid UTF-8 as U+FFFD).
func AppendString(b []byte, s string) []byte {
	return EscapeHTML.AppendString(b, s)
}

// AppendString is AppendString escaped as e says.
func (e Escaping) AppendString(b []byte, s string) []byte {
	safe := &safeNoHTML
	if e {
		safe = &safeHTML
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Most bytes need no escaping: skip them in a tight loop.
		for i < len(s) && safe[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
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
