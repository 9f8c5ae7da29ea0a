package main

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Parts of a request, as the tables split them.
const (
	kindSystem    = "system"
	kindTools     = "tools"
	kindUser      = "user"
	kindAssistant = "assistant"
	// kindResult prefixes the tool's name: "result:read_file".
	kindResult = "result:"
	kindOther  = "other"
)

// segment is one piece of a request's content, in the order the provider
// reads it: a tool definition, a system block, a message's content block
// (Anthropic) or a message or tool call (OpenAI).
type segment struct {
	// Kind is the part of the request it belongs to (kindSystem, ...).
	Kind string
	// Text is what is tokenized: the text the model reads.
	Text string
	// Key identifies the segment's whole content (its JSON without
	// cache_control), for the prefix hashes of the cache model.
	Key string
	// Breakpoint: the block carries cache_control (Anthropic).
	Breakpoint bool
}

// request is a recorded model request, parsed.
type request struct {
	// System and Tools are the request's system prompt and tool
	// definitions, their JSON as the body holds it, byte for byte, to check
	// the prefix is stable.
	System, Tools string
	Segments      []segment
}

// anthropicBody is what the bench reads of a Messages API request.
type anthropicBody struct {
	System json.RawMessage `json:"system"`
	Tools  json.RawMessage `json:"tools"`
	// CacheControl at the top level is Anthropic's automatic caching: a
	// breakpoint on the request's last block (deepagents-js sends it).
	CacheControl json.RawMessage `json:"cache_control"`
	Messages     []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// anthropicBlock is a content block of the Messages API.
type anthropicBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	Content      json.RawMessage `json:"content"`
	CacheControl json.RawMessage `json:"cache_control"`
}

// parseAnthropic splits a Messages API request body into segments: the
// tools, then the system blocks, then every message's content blocks,
// which is the order of Anthropic's cache prefix.
func parseAnthropic(body []byte) (request, error) {
	var b anthropicBody
	if err := json.Unmarshal(body, &b); err != nil {
		return request{}, fmt.Errorf("anthropic request: %w", err)
	}
	r := request{System: string(b.System), Tools: string(b.Tools)}
	var tools []json.RawMessage
	if len(b.Tools) > 0 {
		if err := json.Unmarshal(b.Tools, &tools); err != nil {
			return request{}, fmt.Errorf("anthropic request: tools: %w", err)
		}
	}
	for _, raw := range tools {
		var t struct {
			Name         string          `json:"name"`
			Description  string          `json:"description"`
			InputSchema  json.RawMessage `json:"input_schema"`
			CacheControl json.RawMessage `json:"cache_control"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return request{}, fmt.Errorf("anthropic request: tool: %w", err)
		}
		r.Segments = append(r.Segments, segment{
			Kind: kindTools, Text: t.Name + "\n" + t.Description + "\n" + compact(t.InputSchema),
			Key: key(raw), Breakpoint: len(t.CacheControl) > 0,
		})
	}
	system, err := anthropicBlocks(b.System)
	if err != nil {
		return request{}, fmt.Errorf("anthropic request: system: %w", err)
	}
	for _, blk := range system {
		r.Segments = append(r.Segments, segment{Kind: kindSystem, Text: blk.Text, Key: key(blk.json), Breakpoint: len(blk.CacheControl) > 0})
	}
	names := map[string]string{} // tool_use id -> tool name
	for _, m := range b.Messages {
		blocks, err := anthropicBlocks(m.Content)
		if err != nil {
			return request{}, fmt.Errorf("anthropic request: message: %w", err)
		}
		for _, blk := range blocks {
			s := segment{Key: key(blk.json), Breakpoint: len(blk.CacheControl) > 0}
			switch blk.Type {
			case "text":
				s.Kind, s.Text = kindUser, blk.Text
				if m.Role == "assistant" {
					s.Kind = kindAssistant
				}
			case "tool_use":
				names[blk.ID] = blk.Name
				s.Kind, s.Text = kindAssistant, blk.Name+" "+compact(blk.Input)
			case "tool_result":
				inner, err := anthropicBlocks(blk.Content)
				if err != nil {
					return request{}, fmt.Errorf("anthropic request: tool result: %w", err)
				}
				s.Kind = kindResult + names[blk.ToolUseID]
				for _, c := range inner {
					s.Text += c.Text
				}
			default:
				s.Kind = kindOther
			}
			r.Segments = append(r.Segments, s)
		}
	}
	if len(b.CacheControl) > 0 && len(r.Segments) > 0 {
		r.Segments[len(r.Segments)-1].Breakpoint = true
	}
	return r, nil
}

// rawBlock is an anthropicBlock with the JSON it was decoded from.
type rawBlock struct {
	anthropicBlock
	json json.RawMessage
}

// anthropicBlocks decodes content that is either a string (one text block)
// or an array of blocks.
func anthropicBlocks(raw json.RawMessage) ([]rawBlock, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []rawBlock{{anthropicBlock: anthropicBlock{Type: "text", Text: s}, json: raw}}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	out := make([]rawBlock, len(items))
	for i, it := range items {
		if err := json.Unmarshal(it, &out[i].anthropicBlock); err != nil {
			return nil, err
		}
		out[i].json = it
	}
	return out, nil
}

// openaiBody is what the bench reads of a Chat Completions request.
type openaiBody struct {
	Messages []json.RawMessage `json:"messages"`
	Tools    json.RawMessage   `json:"tools"`
}

// openaiMessage is a message of the Chat Completions API.
type openaiMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolCallID string `json:"tool_call_id"`
}

// openaiTool is a tool definition of the Chat Completions API.
type openaiTool struct {
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// parseOpenAI splits a Chat Completions request body into segments: the
// tool definitions, then the messages (the system message first), each
// assistant tool call a segment of its own.
func parseOpenAI(body []byte) (request, error) {
	var b openaiBody
	if err := json.Unmarshal(body, &b); err != nil {
		return request{}, fmt.Errorf("openai request: %w", err)
	}
	r := request{Tools: string(b.Tools)}
	var tools []openaiTool
	if len(b.Tools) > 0 {
		if err := json.Unmarshal(b.Tools, &tools); err != nil {
			return request{}, fmt.Errorf("openai request: tools: %w", err)
		}
	}
	for _, t := range tools {
		text := t.Function.Name + "\n" + t.Function.Description + "\n" + compact(t.Function.Parameters)
		r.Segments = append(r.Segments, segment{Kind: kindTools, Text: text, Key: text})
	}
	names := map[string]string{} // tool call id -> tool name
	for _, raw := range b.Messages {
		var m openaiMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return request{}, fmt.Errorf("openai request: message: %w", err)
		}
		text, err := openaiText(m.Content)
		if err != nil {
			return request{}, fmt.Errorf("openai request: %s message: %w", m.Role, err)
		}
		var kind string
		switch m.Role {
		case "system", "developer":
			kind = kindSystem
			r.System += string(raw)
		case "user":
			kind = kindUser
		case "assistant":
			kind = kindAssistant
		case "tool":
			kind = kindResult + names[m.ToolCallID]
		default:
			kind = kindOther
		}
		if text != "" || m.Role != "assistant" {
			r.Segments = append(r.Segments, segment{Kind: kind, Text: text, Key: m.Role + "\x00" + m.ToolCallID + "\x00" + text})
		}
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Function.Name
			t := c.Function.Name + " " + c.Function.Arguments
			r.Segments = append(r.Segments, segment{Kind: kindAssistant, Text: t, Key: "call\x00" + c.ID + t})
		}
	}
	return r, nil
}

// openaiText returns the text of message content that is either a string
// or an array of parts.
func openaiText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	var s string
	for _, p := range parts {
		s += p.Text
	}
	return s, nil
}

// compact returns JSON without insignificant space.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// key returns a block's JSON without its cache_control, which marks where
// the cache may end but is not part of the cached content.
func key(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return string(raw) // a string block: its JSON is its content
	}
	delete(m, "cache_control")
	b, err := json.Marshal(m) // sorted keys: the same content, the same key
	if err != nil {
		return string(raw)
	}
	return string(b)
}
