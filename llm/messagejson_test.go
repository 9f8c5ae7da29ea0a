package llm_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
)

func FuzzAppendJSONMatchesEncodingJSON(f *testing.F) {
	f.Add("hi <b>&amp;</b>\u2028", "image/png", "\x00\x1f\"\\", []byte(`{"a": [1, 2]}`), true)
	f.Add("", "", "\xff\xfe invalid", []byte(``), false)
	f.Add("é", "ns", "line\nbreak\ttab\r", []byte(`"x"`), true)
	f.Add("😀", "a/b", "\u2029", []byte(`{"path":"/x"}`), false)
	f.Fuzz(func(t *testing.T, s1, s2, s3 string, args []byte, flag bool) {
		if !json.Valid(args) {
			args = nil
		}
		msgs := []llm.Message{
			{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartText, Text: s1}, {Type: llm.PartImage, MIMEType: s2, Data: []byte(s3), URL: s1}, {Type: llm.PartReasoning, Text: s3, Signature: s2, Redacted: flag}},
				ToolCalls: []llm.ToolCall{{ID: s2, Name: s3, Args: args}}, ID: s1},
			{Role: llm.RoleTool, Parts: []llm.Part{{Type: llm.PartText, Text: s3}}, ToolCallID: s1, Name: s2, IsError: flag, ID: s3},
			{Role: llm.Role(s1)},
		}
		for _, m := range msgs {
			for _, html := range []bool{true, false} {
				var buf bytes.Buffer
				enc := json.NewEncoder(&buf)
				enc.SetEscapeHTML(html)
				werr := enc.Encode(m)
				want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
				got, gerr := m.AppendJSON([]byte("prefix"))
				if !html {
					got, gerr = m.AppendJSONNoHTMLEscape([]byte("prefix"))
				}
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("html %v: errors differ: %v / %v", html, werr, gerr)
				}
				if werr == nil && !bytes.Equal(got, append([]byte("prefix"), want...)) {
					t.Fatalf("html %v: encodings differ:\n got %s\nwant prefix%s", html, got, want)
				}
			}
		}
	})
}
