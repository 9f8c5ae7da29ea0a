package cpcodec

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
)

func TestMessagesRoundTrip(t *testing.T) {
	msgs := []llm.Message{llm.UserText("<b>&</b>"), llm.AssistantText("x"), {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "1", Name: "ls", Args: json.RawMessage(`{"a": 1}`)}}}}
	enc, err := EncodeMessages(msgs)
	if err != nil || len(enc) != 3 {
		t.Fatal(enc, err)
	}
	if string(enc[0]) != `{"role":"user","parts":[{"type":"text","text":"<b>&</b>"}]}` {
		t.Errorf("encoding = %s", enc[0])
	}
	for i, b := range enc {
		var m llm.Message
		if err := DecodeMessage(b, &m, "x"); err != nil {
			t.Fatal(err)
		}
		if m.Text() != msgs[i].Text() || len(m.ToolCalls) != len(msgs[i].ToolCalls) {
			t.Errorf("message %d = %+v", i, m)
		}
	}
	var m llm.Message
	if err := DecodeMessage([]byte(`{"role":`), &m, "x"); !errors.Is(err, checkpoint.ErrCorrupt) {
		t.Errorf("bad JSON: %v", err)
	}
	if _, err := CheckJSON([]byte(`{`), "x"); !errors.Is(err, checkpoint.ErrCorrupt) {
		t.Errorf("CheckJSON: %v", err)
	}
	// A tool call whose arguments are not JSON cannot be stored.
	bad := []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "1", Args: json.RawMessage(`{`)}}}}
	if _, err := EncodeMessages(bad); !errors.Is(err, checkpoint.ErrInvalid) {
		t.Errorf("bad args: %v", err)
	}
}

func FuzzDecodeMessage(f *testing.F) {
	f.Add([]byte(`{"role":"user","parts":[{"type":"text","text":"hi"}]}`))
	f.Add([]byte(`{"role":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m llm.Message
		if err := DecodeMessage(b, &m, "fuzz"); err != nil && !errors.Is(err, checkpoint.ErrCorrupt) {
			t.Fatalf("error %v is not ErrCorrupt", err)
		}
	})
}
