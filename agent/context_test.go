package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
)

func TestMeasureContext(t *testing.T) {
	req := &llm.Request{
		System: strings.Repeat("s", 400),
		Tools:  []llm.ToolSpec{{Name: "read_file", Description: strings.Repeat("d", 91), Parameters: json.RawMessage(`{}`)}},
		Messages: []llm.Message{
			llm.UserText(strings.Repeat("u", 40)),
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("ok")}, ToolCalls: []llm.ToolCall{{ID: "1", Name: "read_file", Args: json.RawMessage(`{"file_path":"/a"}`)}}},
			llm.ToolResult("1", "read_file", strings.Repeat("f", 800), false),
			llm.ToolResult("2", "task", strings.Repeat("t", 8), false),
			{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartImage, MIMEType: "image/png"}}},
		},
	}
	// Tools: 9+91+2 bytes; assistant: "ok", the call's name and arguments, 29 bytes;
	// the image counts imageBytes.
	got := MeasureContext(req, 200000)
	want := ContextWindow{System: 100, Tools: 26, User: 10 + 1000, Assistant: 8, ToolResults: map[string]int{"read_file": 200, "task": 2}, Window: 200000}
	want.Total = want.System + want.Tools + want.User + want.Assistant + 202
	b1, _ := json.Marshal(got)
	b2, _ := json.Marshal(&want)
	if string(b1) != string(b2) {
		t.Errorf("measureContext =\n %s\nwant\n %s", b1, b2)
	}
	if enc := got.appendJSON(nil); string(enc) != string(b1) {
		t.Errorf("appendJSON %s, encoding/json %s", enc, b1)
	}
}

// TestContextMeter checks that counting only what a request adds gives
// what counting it whole does, and that a changed conversation (a summary
// in place of earlier messages) is counted whole.
func TestContextMeter(t *testing.T) {
	msg := func(id string, role llm.Role, name, text string) llm.Message {
		return llm.Message{ID: id, Role: role, Name: name, Parts: []llm.Part{llm.Text(text)}}
	}
	var m contextMeter
	var msgs []llm.Message
	steps := [][]llm.Message{
		{msg("1", llm.RoleUser, "", "hello there")},
		{msg("2", llm.RoleAssistant, "", "calling"), msg("3", llm.RoleTool, "read_file", strings.Repeat("x", 100))},
		{msg("4", llm.RoleAssistant, "", "again"), msg("5", llm.RoleTool, "grep", "hits")},
		nil, // a summary replaces the conversation below
		{msg("7", llm.RoleAssistant, "", "done")},
	}
	for i, add := range steps {
		if add == nil {
			msgs = []llm.Message{msg("6", llm.RoleUser, "", "summary of it all")}
		}
		msgs = append(msgs, add...)
		req := &llm.Request{System: "sys", Messages: msgs}
		got, _ := json.Marshal(m.measure(req, 0))
		want, _ := json.Marshal(MeasureContext(req, 0))
		if string(got) != string(want) {
			t.Fatalf("step %d: counted on %s, whole %s", i, got, want)
		}
	}
}
