package llm

import (
	"encoding/json"
	"strings"
)

// Role says who authored a [Message].
type Role string

// The four roles a conversation is made of.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// PartType names the kind of a content [Part].
type PartType string

// Content part kinds.
const (
	PartText      PartType = "text"
	PartImage     PartType = "image"
	PartReasoning PartType = "reasoning"
)

// Part is one piece of a message's content. Which fields are set depends on
// Type: Text for text and reasoning; MIMEType with Data or URL for images.
type Part struct {
	Type PartType `json:"type"`
	Text string   `json:"text,omitempty"`

	// Image content: inline bytes (Data, with MIMEType) or a URL.
	MIMEType string `json:"mime_type,omitempty"`
	Data     []byte `json:"data,omitempty"`
	URL      string `json:"url,omitempty"`

	// Signature authenticates a reasoning part; providers that sign their
	// reasoning (Anthropic's extended thinking) require it to be sent back
	// unchanged. Redacted marks reasoning the provider returned encrypted, in
	// which case Data holds the opaque payload.
	Signature string `json:"signature,omitempty"`
	Redacted  bool   `json:"redacted,omitempty"`
}

// Text returns a text part.
func Text(s string) Part { return Part{Type: PartText, Text: s} }

// ToolCall is a request by the model to run a tool. Args holds the JSON
// object of arguments exactly as the model produced it.
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// Message is one entry of a conversation.
//
// Assistant messages may carry ToolCalls; tool messages answer exactly one
// call, named by ToolCallID, and IsError marks a failed call.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts,omitempty"`

	ToolCalls []ToolCall `json:"tool_calls,omitempty"` // assistant

	ToolCallID string `json:"tool_call_id,omitempty"` // tool
	Name       string `json:"name,omitempty"`         // tool: the tool's name
	IsError    bool   `json:"is_error,omitempty"`     // tool

	// ID identifies the message within its thread. The agent gives every
	// message it appends one (a message that arrives with an ID keeps it),
	// so that clients streaming a thread can match the deltas of a
	// message with the message itself. Providers ignore it.
	ID string `json:"id,omitempty"`
}

// UserText returns a user message holding text.
func UserText(s string) Message {
	return Message{Role: RoleUser, Parts: []Part{Text(s)}}
}

// AssistantText returns an assistant message holding text and no tool calls.
func AssistantText(s string) Message {
	return Message{Role: RoleAssistant, Parts: []Part{Text(s)}}
}

// ToolResult returns the tool message answering the call with the given id.
func ToolResult(callID, name, content string, isError bool) Message {
	return Message{Role: RoleTool, ToolCallID: callID, Name: name, IsError: isError, Parts: []Part{Text(content)}}
}

// Unfence returns s without a Markdown code fence around it (a first
// line of ``` or ```json and a last of ```), as models often wrap the
// JSON they were asked for; trimmed of space.
func Unfence(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "```") {
		if nl := strings.IndexByte(s, '\n'); nl >= 0 {
			s = s[nl+1:]
		}
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	}
	return strings.TrimSpace(s)
}

// Text concatenates the message's text parts. Reasoning is not included.
func (m Message) Text() string {
	switch len(m.Parts) {
	case 0:
		return ""
	case 1:
		if m.Parts[0].Type == PartText {
			return m.Parts[0].Text
		}
		return ""
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Clone returns a deep copy of m, so that the copy can be changed without
// touching the original.
func (m Message) Clone() Message {
	if m.Parts != nil {
		parts := make([]Part, len(m.Parts))
		copy(parts, m.Parts)
		for i := range parts {
			if parts[i].Data != nil {
				parts[i].Data = append([]byte(nil), parts[i].Data...)
			}
		}
		m.Parts = parts
	}
	if m.ToolCalls != nil {
		calls := make([]ToolCall, len(m.ToolCalls))
		copy(calls, m.ToolCalls)
		for i := range calls {
			calls[i].Args = append(json.RawMessage(nil), calls[i].Args...)
		}
		m.ToolCalls = calls
	}
	return m
}
