package telemetry

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/deepagents-go/deepagents/internal/jsonenc"
	"github.com/deepagents-go/deepagents/llm"
)

// The content attributes are JSON strings in the shapes of the GenAI
// conventions' schemas (gen-ai-input-messages.json and its siblings):
// messages of a role and parts, a part being text, reasoning, tool_call,
// tool_call_response, or a media part described but not copied. Each is
// bounded by Tracing.limit: texts are cut to a quarter of it, and the
// oldest messages of a request left out when the newest fill it.

// bounded returns s cut to at most limit bytes (on a rune boundary), with
// a note of how much was cut.
func bounded(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	note := "…[" + strconv.Itoa(len(s)) + " bytes, cut]"
	n := max(limit-len(note), 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + note
}

// minTextBytes is the least a text is cut to, however small the limit.
const minTextBytes = 64

// textLimit is how long one text of a message may be.
func (t *Tracing) textLimit() int { return max(t.limit/4, minTextBytes) }

// messagesJSON encodes msgs for gen_ai.input.messages, newest kept first,
// and says how many of the oldest it left out to stay within the limit.
// The newest message is always kept, its texts cut harder if it alone
// exceeds the limit.
func (t *Tracing) messagesJSON(msgs []llm.Message) (string, int) {
	// Messages are encoded newest first into one buffer, then written out
	// oldest first.
	buf := make([]byte, 0, min(t.limit, 4096))
	ends := make([]int, 0, min(len(msgs), 64))
	size := 2 // [ ]
	for i := len(msgs) - 1; i >= 0; i-- {
		start := len(buf)
		buf = appendMessage(buf, &msgs[i], t.textLimit(), "")
		if n := len(buf) - start; size+n+1 > t.limit {
			if len(ends) > 0 {
				buf = buf[:start]
				break
			}
			buf = appendMessage(buf[:start], &msgs[i], minTextBytes, "")
		}
		size += len(buf) - start + 1
		ends = append(ends, len(buf))
	}
	out := make([]byte, 0, size)
	out = append(out, '[')
	for k := len(ends) - 1; k >= 0; k-- {
		start := 0
		if k > 0 {
			start = ends[k-1]
		}
		if k < len(ends)-1 {
			out = append(out, ',')
		}
		out = append(out, buf[start:ends[k]]...)
	}
	out = append(out, ']')
	return string(out), len(msgs) - len(ends)
}

// outputJSON encodes a model's message for gen_ai.output.messages.
func (t *Tracing) outputJSON(m *llm.Message, stop llm.StopReason) string {
	reason := finishReason(stop)
	if reason == "" {
		reason = "stop"
	}
	b := append([]byte{'['}, appendMessage(nil, m, t.textLimit(), reason)...)
	return string(append(b, ']'))
}

// systemJSON encodes a system prompt for gen_ai.system_instructions.
func (t *Tracing) systemJSON(s string) string {
	b := []byte(`[{"type":"text","content":`)
	b = jsonenc.AppendString(b, bounded(s, t.limit))
	return string(append(b, "}]"...))
}

// argsJSON returns tool arguments for gen_ai.tool.call.arguments: the JSON
// object as the model wrote it, or cut as text when it is too long or no
// JSON.
func (t *Tracing) argsJSON(args json.RawMessage) string {
	if len(args) <= t.limit && json.Valid(args) {
		return string(args)
	}
	return bounded(string(args), t.limit)
}

// appendMessage appends one message: {"role":..,"parts":[..]}, with a
// finish_reason when finish is set (an output message).
func appendMessage(b []byte, m *llm.Message, textLimit int, finish string) []byte {
	b = append(b, `{"role":`...)
	b = jsonenc.AppendString(b, string(m.Role))
	b = append(b, `,"parts":[`...)
	n := 0
	part := func() {
		if n > 0 {
			b = append(b, ',')
		}
		n++
	}
	if m.Role == llm.RoleTool {
		part()
		b = append(b, `{"type":"tool_call_response","id":`...)
		b = jsonenc.AppendString(b, m.ToolCallID)
		b = append(b, `,"result":`...)
		b = jsonenc.AppendString(b, bounded(m.Text(), textLimit))
		b = append(b, '}')
	} else {
		for i := range m.Parts {
			p := &m.Parts[i]
			part()
			switch p.Type {
			case llm.PartText, llm.PartReasoning:
				b = append(b, `{"type":`...)
				b = jsonenc.AppendString(b, string(p.Type))
				b = append(b, `,"content":`...)
				b = jsonenc.AppendString(b, bounded(p.Text, textLimit))
				b = append(b, '}')
			default: // media: described, not copied
				b = append(b, `{"type":`...)
				b = jsonenc.AppendString(b, string(p.Type))
				b = jsonenc.AppendField(b, "mime_type", p.MIMEType)
				b = jsonenc.AppendField(b, "uri", bounded(p.URL, textLimit))
				b = append(b, '}')
			}
		}
	}
	for i := range m.ToolCalls {
		c := &m.ToolCalls[i]
		part()
		b = append(b, `{"type":"tool_call","id":`...)
		b = jsonenc.AppendString(b, c.ID)
		b = append(b, `,"name":`...)
		b = jsonenc.AppendString(b, c.Name)
		b = append(b, `,"arguments":`...)
		if len(c.Args) <= textLimit && json.Valid(c.Args) {
			b = append(b, c.Args...) // JSON as the model wrote it
		} else {
			b = jsonenc.AppendString(b, bounded(string(c.Args), textLimit))
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	b = jsonenc.AppendField(b, "finish_reason", finish)
	return append(b, '}')
}
