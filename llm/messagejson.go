package llm

import (
	"encoding/base64"

	"github.com/deepagents-go/deepagents/internal/jsonenc"
)

// AppendJSON appends m encoded as encoding/json encodes it, byte for byte,
// without reflection (FuzzAppendJSONMatchesEncodingJSON holds the two
// equal).
func (m *Message) AppendJSON(b []byte) ([]byte, error) {
	return m.appendJSON(b, jsonenc.EscapeHTML)
}

// AppendJSONNoHTMLEscape is AppendJSON as an encoding/json Encoder after
// SetEscapeHTML(false) writes it: <, > and & stay as they are, which keeps
// stored code and markup smaller.
func (m *Message) AppendJSONNoHTMLEscape(b []byte) ([]byte, error) {
	return m.appendJSON(b, jsonenc.NoHTML)
}

func (m *Message) appendJSON(b []byte, e jsonenc.Escaping) ([]byte, error) {
	b = append(b, `{"role":`...)
	b = e.AppendString(b, string(m.Role))
	if len(m.Parts) > 0 {
		b = append(b, `,"parts":[`...)
		for i := range m.Parts {
			p := &m.Parts[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":`...)
			b = e.AppendString(b, string(p.Type))
			b = e.AppendField(b, "text", p.Text)
			b = e.AppendField(b, "mime_type", p.MIMEType)
			if len(p.Data) > 0 {
				b = append(b, `,"data":"`...)
				b = base64.StdEncoding.AppendEncode(b, p.Data)
				b = append(b, '"')
			}
			b = e.AppendField(b, "url", p.URL)
			b = e.AppendField(b, "signature", p.Signature)
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
			b = e.AppendString(b, c.ID)
			b = append(b, `,"name":`...)
			b = e.AppendString(b, c.Name)
			b = append(b, `,"args":`...)
			var err error
			if b, err = e.AppendRaw(b, c.Args); err != nil {
				return nil, err
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = e.AppendField(b, "tool_call_id", m.ToolCallID)
	b = e.AppendField(b, "name", m.Name)
	if m.IsError {
		b = append(b, `,"is_error":true`...)
	}
	b = e.AppendField(b, "id", m.ID)
	return append(b, '}'), nil
}
