package llm

import (
	"encoding/base64"

	"github.com/deepagents-go/deepagents/internal/jsonenc"
)

// AppendJSON appends m encoded as encoding/json encodes it, byte for byte,
// without reflection (FuzzAppendJSONMatchesEncodingJSON holds the two
// equal).
func (m *Message) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"role":`...)
	b = jsonenc.AppendString(b, string(m.Role))
	if len(m.Parts) > 0 {
		b = append(b, `,"parts":[`...)
		for i := range m.Parts {
			p := &m.Parts[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"type":`...)
			b = jsonenc.AppendString(b, string(p.Type))
			b = jsonenc.AppendField(b, "text", p.Text)
			b = jsonenc.AppendField(b, "mime_type", p.MIMEType)
			if len(p.Data) > 0 {
				b = append(b, `,"data":"`...)
				b = base64.StdEncoding.AppendEncode(b, p.Data)
				b = append(b, '"')
			}
			b = jsonenc.AppendField(b, "url", p.URL)
			b = jsonenc.AppendField(b, "signature", p.Signature)
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
			b = jsonenc.AppendString(b, c.ID)
			b = append(b, `,"name":`...)
			b = jsonenc.AppendString(b, c.Name)
			b = append(b, `,"args":`...)
			var err error
			if b, err = jsonenc.AppendRaw(b, c.Args); err != nil {
				return nil, err
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = jsonenc.AppendField(b, "tool_call_id", m.ToolCallID)
	b = jsonenc.AppendField(b, "name", m.Name)
	if m.IsError {
		b = append(b, `,"is_error":true`...)
	}
	b = jsonenc.AppendField(b, "id", m.ID)
	return append(b, '}'), nil
}
