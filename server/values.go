package server

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/todos"
	"github.com/deepagents-go/deepagents/thread"
)

// A thread's state on the wire is LangGraph's: an object whose "messages"
// are LangChain message dicts, "todos" the plan and "files" the State
// backend's files as the Python deep agent keeps them ({"content": lines,
// "created_at", "modified_at"}), plus the custom values middleware keeps
// public.

// empty encodes as {}: LangChain messages always carry additional_kwargs
// and response_metadata, and clients read them.
type empty struct{}

// lcMessage is a LangChain message dict.
type lcMessage struct {
	Type             string             `json:"type"`
	ID               string             `json:"id"`
	Content          any                `json:"content"`
	Name             string             `json:"name,omitempty"`
	ToolCallID       string             `json:"tool_call_id,omitempty"`
	Status           string             `json:"status,omitempty"`
	ToolCalls        *[]lcToolCall      `json:"tool_calls,omitempty"`
	ToolCallChunks   *[]lcToolCallChunk `json:"tool_call_chunks,omitempty"`
	InvalidToolCalls *[]empty           `json:"invalid_tool_calls,omitempty"`
	AdditionalKwargs empty              `json:"additional_kwargs"`
	ResponseMetadata empty              `json:"response_metadata"`
}

type lcToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	Type string          `json:"type"` // "tool_call"
}

type lcToolCallChunk struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Args  string `json:"args"`
	Index int    `json:"index"`
	Type  string `json:"type"` // "tool_call_chunk"
}

type lcBlock struct {
	Type     string      `json:"type"`
	Text     string      `json:"text,omitempty"`
	ImageURL *lcImageURL `json:"image_url,omitempty"`
}

type lcImageURL struct {
	URL string `json:"url"`
}

// content is a message's content as LangChain writes it: a string, or
// blocks when the message holds images.
func content(m *llm.Message) any {
	var blocks []lcBlock
	var text strings.Builder
	images := false
	for _, p := range m.Parts {
		switch p.Type {
		case llm.PartText:
			text.WriteString(p.Text)
			blocks = append(blocks, lcBlock{Type: "text", Text: p.Text})
		case llm.PartImage:
			images = true
			url := p.URL
			if url == "" {
				url = "data:" + p.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
			}
			blocks = append(blocks, lcBlock{Type: "image_url", ImageURL: &lcImageURL{URL: url}})
		}
	}
	if images {
		return blocks
	}
	return text.String()
}

// toolCalls converts an assistant message's calls; never nil.
func toolCalls(m *llm.Message) []lcToolCall {
	out := make([]lcToolCall, 0, len(m.ToolCalls))
	for _, c := range m.ToolCalls {
		args := c.Args
		if len(args) == 0 || !json.Valid(args) || args[0] != '{' {
			args = json.RawMessage(`{}`)
		}
		out = append(out, lcToolCall{ID: c.ID, Name: c.Name, Args: args, Type: "tool_call"})
	}
	return out
}

// toLangChain converts a message of the conversation; id is used when the
// message has none (threads written before messages had IDs).
func toLangChain(m *llm.Message, id string) lcMessage {
	if m.ID != "" {
		id = m.ID
	}
	out := lcMessage{ID: id, Content: content(m)}
	switch m.Role {
	case llm.RoleUser:
		out.Type = "human"
	case llm.RoleSystem:
		out.Type = "system"
	case llm.RoleTool:
		out.Type, out.ToolCallID, out.Name, out.Status = "tool", m.ToolCallID, m.Name, "success"
		if m.IsError {
			out.Status = "error"
		}
	default:
		out.Type = "ai"
		calls := toolCalls(m)
		out.ToolCalls, out.InvalidToolCalls = &calls, &[]empty{}
	}
	return out
}

// messages converts a conversation, giving messages without an ID one
// derived from their place in the thread.
func messages(threadID string, msgs []llm.Message) []lcMessage {
	out := make([]lcMessage, len(msgs))
	for i := range msgs {
		out[i] = toLangChain(&msgs[i], fmt.Sprintf("%s-%d", threadID, i))
	}
	return out
}

// wireFile is a file as the Python deep agent keeps it in its state.
type wireFile struct {
	Content    []string `json:"content"`
	CreatedAt  string   `json:"created_at,omitempty"`
	ModifiedAt string   `json:"modified_at,omitempty"`
}

func fileToWire(d thread.FileData) wireFile {
	w := wireFile{Content: strings.Split(d.Content, "\n")}
	if !d.CreatedAt.IsZero() {
		w.CreatedAt = d.CreatedAt.UTC().Format(time.RFC3339Nano)
	}
	if !d.ModifiedAt.IsZero() {
		w.ModifiedAt = d.ModifiedAt.UTC().Format(time.RFC3339Nano)
	}
	return w
}

// fileFromWire reads a file a client sent: a string, or an object whose
// content is a string or lines.
func fileFromWire(raw json.RawMessage, now time.Time) (thread.FileData, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return thread.FileData{Content: s, CreatedAt: now, ModifiedAt: now}, nil
	}
	var w struct {
		Content    json.RawMessage `json:"content"`
		CreatedAt  time.Time       `json:"created_at"`
		ModifiedAt time.Time       `json:"modified_at"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return thread.FileData{}, errors.New("a file is a string or an object with content")
	}
	d := thread.FileData{CreatedAt: w.CreatedAt, ModifiedAt: now}
	if d.CreatedAt.IsZero() {
		d.CreatedAt = now
	}
	var lines []string
	switch {
	case json.Unmarshal(w.Content, &d.Content) == nil:
	case json.Unmarshal(w.Content, &lines) == nil:
		d.Content = strings.Join(lines, "\n")
	default:
		return thread.FileData{}, errors.New("a file's content is a string or a list of lines")
	}
	return d, nil
}

// values is a thread's state as clients see it.
func values(snap *checkpoint.Snapshot, private func(string) bool) map[string]any {
	out := map[string]any{
		"messages":  messages(snap.ThreadID, snap.Messages),
		todos.Value: json.RawMessage(`[]`),
	}
	// The plan is always there, as the references' state has it.
	if v := snap.Values[todos.Value]; len(v) > 0 && string(v) != "null" {
		out[todos.Value] = v
	}
	files := make(map[string]wireFile, len(snap.Files))
	for p, d := range snap.Files {
		files[p] = fileToWire(d)
	}
	out["files"] = files
	for k, v := range snap.Values {
		if _, taken := out[k]; !taken && !private(k) {
			out[k] = v
		}
	}
	return out
}

// inputMessage is a message a client sends: LangChain's dict ("type") or
// the OpenAI-style form ("role"), its content a string or blocks.
type inputMessage struct {
	Type       string          `json:"type"`
	Role       string          `json:"role"`
	ID         string          `json:"id"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
}

// fromLangChain converts a message a client sent.
func fromLangChain(raw json.RawMessage) (llm.Message, error) {
	var in inputMessage
	if err := json.Unmarshal(raw, &in); err != nil {
		return llm.Message{}, fmt.Errorf("a message is an object: %v", err)
	}
	kind := in.Type
	if kind == "" {
		kind = in.Role
	}
	m := llm.Message{ID: in.ID}
	switch kind {
	case "human", "user", "HumanMessage", "HumanMessageChunk":
		m.Role = llm.RoleUser
	case "ai", "assistant", "AIMessage", "AIMessageChunk":
		m.Role = llm.RoleAssistant
	case "system", "SystemMessage":
		m.Role = llm.RoleSystem
	case "tool", "ToolMessage":
		m.Role, m.ToolCallID, m.Name = llm.RoleTool, in.ToolCallID, in.Name
	default:
		return llm.Message{}, fmt.Errorf("unknown message type %q", kind)
	}
	var s string
	if err := json.Unmarshal(in.Content, &s); err == nil {
		m.Parts = []llm.Part{llm.Text(s)}
		return m, nil
	}
	var blocks []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		ImageURL json.RawMessage `json:"image_url"`
	}
	if err := json.Unmarshal(in.Content, &blocks); err != nil {
		return llm.Message{}, errors.New("a message's content is a string or a list of blocks")
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			m.Parts = append(m.Parts, llm.Text(b.Text))
		case "image_url":
			var url string
			if json.Unmarshal(b.ImageURL, &url) != nil {
				var o lcImageURL
				json.Unmarshal(b.ImageURL, &o) //nolint:errcheck // an empty URL is refused below
				url = o.URL
			}
			if url == "" {
				return llm.Message{}, errors.New("an image_url block needs a url")
			}
			m.Parts = append(m.Parts, imagePart(url))
		}
	}
	return m, nil
}

// imagePart reads a data: URL into bytes, and keeps any other URL as is.
func imagePart(url string) llm.Part {
	if rest, ok := strings.CutPrefix(url, "data:"); ok {
		if meta, data, ok := strings.Cut(rest, ","); ok && strings.HasSuffix(meta, ";base64") {
			if b, err := base64.StdEncoding.DecodeString(data); err == nil {
				return llm.Part{Type: llm.PartImage, MIMEType: strings.TrimSuffix(meta, ";base64"), Data: b}
			}
		}
	}
	return llm.Part{Type: llm.PartImage, URL: url}
}
