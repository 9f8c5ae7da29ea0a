package agent

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
)

// referenceJSON encodes e with encoding/json through wireEvent: the
// definition appendEvent must match.
func referenceJSON(e Event) ([]byte, error) {
	w := wireEvent{
		V: EventVersion, Type: e.Type, Namespace: e.Namespace, Step: e.Step,
		ThreadID: e.ThreadID, CheckpointID: e.CheckpointID, MessageID: e.MessageID, Message: e.Message,
		ToolCallID: e.ToolCallID, Name: e.Name, Args: e.Args,
	}
	// The fields after the values, as wireEvent names them.
	tail := struct {
		Files      []string        `json:"files,omitempty"`
		Usage      *llm.Usage      `json:"usage,omitempty"`
		Context    *ContextWindow  `json:"context,omitempty"`
		Interrupts []ActionRequest `json:"interrupts,omitempty"`
		Status     RunStatus       `json:"status,omitempty"`
		Error      string          `json:"error,omitempty"`
		EndCode    EndCode         `json:"end_code,omitempty"`
		EndReason  string          `json:"end_reason,omitempty"`
	}{e.Files, e.Usage, e.Context, e.Interrupts, e.Status, e.Error, e.EndCode, e.EndReason}
	if w.Namespace == nil {
		w.Namespace = []string{}
	}
	switch e.Type {
	case EventTextDelta, EventReasoningDelta:
		w.Delta = &e.Delta
	case EventToolResult:
		w.Content, w.IsError = &e.Content, &e.IsError
	case EventNotice:
		w.Content = &e.Content
	}
	head, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	out := head[:len(head)-1]
	if e.Type == EventState {
		for _, k := range slices.Sorted(maps.Keys(e.Values)) {
			if len(e.Values[k]) == 0 || eventFields[k] {
				continue
			}
			key, _ := json.Marshal(k)
			v, err := json.Marshal(e.Values[k])
			if err != nil {
				return nil, err
			}
			out = append(append(append(append(out, ','), key...), ':'), v...)
		}
	}
	rest, err := json.Marshal(tail)
	if err != nil {
		return nil, err
	}
	if len(rest) > 2 {
		out = append(out, ',')
	}
	return append(out, rest[1:]...), nil
}

func FuzzEventEncoderMatchesEncodingJSON(f *testing.F) {
	f.Add("text_delta", "hi <b>&amp;</b>\u2028", "name", "\x00\x1f\"\\", []byte(`{"a": [1, 2]}`), 3, true)
	f.Add("tool_result", "", "", "\xff\xfe invalid", []byte(``), 0, false)
	f.Add("state", "é", "ns", "line\nbreak\ttab\r", []byte(`"x"`), 1, true)
	f.Add("message", "😀", "a/b", "\u2029", []byte(`{"path":"/x"}`), 7, false)
	f.Fuzz(func(t *testing.T, typ, s1, s2, s3 string, args []byte, n int, flag bool) {
		if !json.Valid(args) {
			args = nil
		}
		msg := &llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartText, Text: s1}, {Type: llm.PartImage, MIMEType: s2, Data: []byte(s3), URL: s1}, {Type: llm.PartReasoning, Text: s3, Signature: s2, Redacted: flag}},
			ToolCalls: []llm.ToolCall{{ID: s2, Name: s3, Args: args}}, ToolCallID: s1, Name: s2, IsError: flag, ID: s2}
		e := Event{Type: EventType(typ), Namespace: []string{s1, s2}, Step: n, ThreadID: s2, CheckpointID: s3, Delta: s1, MessageID: s3,
			Message: msg, ToolCallID: s3, Name: s1, Args: args, Content: s2, IsError: flag,
			Files: []string{s3}, Usage: &llm.Usage{InputTokens: n, OutputTokens: -n, CacheReadTokens: n % 3}, Status: RunStatus(s1), Error: s3,
			EndCode: EndCode(s2), EndReason: s1}
		if flag {
			type todo struct {
				Content    string `json:"content"`
				Status     string `json:"status"`
				ActiveForm string `json:"activeForm,omitempty"`
			}
			list, _ := json.Marshal([]todo{{Content: s1, Status: s2}, {Content: s2, Status: s1, ActiveForm: s3}})
			e.Values = map[string]json.RawMessage{"todos": list, s1: args, "files": json.RawMessage(`1`)}
		} else if n%2 == 0 {
			e.Values = map[string]json.RawMessage{"todos": json.RawMessage(`[]`)}
		}
		if n%3 == 1 {
			e.Context = &ContextWindow{System: n, Tools: -n, User: n % 7, Assistant: 1, Total: n, Window: n % 2}
			if flag {
				e.Context.ToolResults = map[string]int{s1: n, s2: 2, "read_file": 3}
			}
		}
		if n%5 == 0 {
			e.Message, e.Usage, e.Namespace = nil, nil, nil
		}
		want, werr := referenceJSON(e)
		got, gerr := e.MarshalJSON()
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("errors differ: %v / %v", werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("encodings differ:\n got %s\nwant %s", got, want)
		}
	})
}
