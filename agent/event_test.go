package agent_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/internal/golden"
	"github.com/deepagents-go/deepagents/llm"
)

func sampleEvents() []agent.Event {
	msg := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("Let me look.")}, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "ls", Args: json.RawMessage(`{"path":"/"}`)}}}
	return []agent.Event{
		{Type: agent.EventRunStart, ThreadID: "t1"},
		{Type: agent.EventTextDelta, Step: 1, Delta: "Let me", MessageID: "m1"},
		{Type: agent.EventTextDelta, Step: 1, Delta: ""},
		{Type: agent.EventReasoningDelta, Step: 1, Delta: "thinking"},
		{Type: agent.EventMessage, Step: 1, Message: &msg},
		{Type: agent.EventUsage, Step: 1, Name: "anthropic:claude-sonnet-4-5", Usage: &llm.Usage{InputTokens: 10, OutputTokens: 3, CacheReadTokens: 8}},
		{Type: agent.EventToolCall, Step: 1, ToolCallID: "c1", Name: "ls", Args: json.RawMessage(`{"path":"/"}`)},
		{Type: agent.EventToolResult, Step: 1, MessageID: "m2", ToolCallID: "c1", Name: "ls", Content: "", IsError: false},
		{Type: agent.EventToolResult, Step: 1, ToolCallID: "c2", Name: "task", Content: "Error: boom", IsError: true, Namespace: []string{"researcher:c9"}},
		{Type: agent.EventState, Step: 1, Values: map[string]json.RawMessage{"todos": json.RawMessage(`[{"content":"a","status":"pending"},{"content":"run tests","status":"in_progress","activeForm":"Running tests"}]`)}},
		{Type: agent.EventState, Step: 2, Values: map[string]json.RawMessage{"todos": json.RawMessage(`[]`)}},
		{Type: agent.EventState, Step: 2, Files: []string{"/notes.md"}},
		{Type: agent.EventCheckpoint, Step: 2, ThreadID: "t1", CheckpointID: "cp2"},
		{Type: agent.EventInterrupt, Step: 2, Interrupts: []agent.ActionRequest{{ToolCallID: "c3", Tool: "execute", Args: json.RawMessage(`{"command":"rm -rf build"}`), Description: "Run a shell command", Allowed: []agent.DecisionType{agent.DecisionApprove, agent.DecisionReject}}}},
		{Type: agent.EventNotice, Step: 3, Name: "model_retry", Content: "The model call failed (rate limited); retrying in 2s (attempt 2 of 4).", Error: "rate limited"},
		{Type: agent.EventError, Step: 3, Error: "model call 3: rate limited"},
		{Type: agent.EventRunEnd, Step: 3, ThreadID: "t1", Status: agent.StatusFailed, Usage: &llm.Usage{InputTokens: 30, OutputTokens: 9}, Error: "model call 3: rate limited"},
	}
}

func TestEventJSONGolden(t *testing.T) {
	var buf bytes.Buffer
	for _, e := range sampleEvents() {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	golden.Check(t, "testdata/events.jsonl", buf.Bytes())
}

func TestEventJSONRoundTrip(t *testing.T) {
	for _, e := range sampleEvents() {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back agent.Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if e.Namespace == nil {
			e.Namespace = []string{}
		}
		if diff := cmp.Diff(e, back); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", e.Type, diff)
		}
	}
}
