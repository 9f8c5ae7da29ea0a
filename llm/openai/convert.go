package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/internal/wire"
)

// emptySchema is the parameter schema of a tool that declares none.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// chatRequest is the body of a streaming chat completions request. The
// fields go out in this order, the messages first, so that requests of
// one thread share their longest prefix.
type chatRequest struct {
	Messages             []chatMessage   `json:"messages"`
	Model                string          `json:"model"`
	MaxCompletionTokens  int             `json:"max_completion_tokens,omitempty"`
	MaxTokens            int             `json:"max_tokens,omitempty"`
	PromptCacheKey       string          `json:"prompt_cache_key,omitempty"`
	PromptCacheRetention string          `json:"prompt_cache_retention,omitempty"`
	ReasoningEffort      string          `json:"reasoning_effort,omitempty"`
	ResponseFormat       *responseFormat `json:"response_format,omitempty"`
	StreamOptions        streamOptions   `json:"stream_options"`
	Temperature          *float64        `json:"temperature,omitempty"`
	ToolChoice           string          `json:"tool_choice,omitempty"`
	Tools                []chatTool      `json:"tools,omitempty"`
	Stream               bool            `json:"stream"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatMessage is a message of any role. Content is a string, a list of
// [contentPart], or nil (an assistant message of tool calls alone).
type chatMessage struct {
	Content    any        `json:"content,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolCalls  []wireCall `json:"tool_calls,omitempty"`
	Role       string     `json:"role"`
}

type contentPart struct {
	ImageURL *imageURL `json:"image_url,omitempty"`
	Text     string    `json:"text,omitempty"`
	Type     string    `json:"type"`
}

type imageURL struct {
	URL string `json:"url"`
}

type wireCall struct {
	ID       string       `json:"id"`
	Function wireFunction `json:"function"`
	Type     string       `json:"type"`
}

type wireFunction struct {
	Arguments string `json:"arguments"`
	Name      string `json:"name"`
}

type chatTool struct {
	Function functionJSON `json:"function"`
	Type     string       `json:"type"`
}

// functionJSON is a tool definition. Its parameter schema goes out byte
// for byte as given, compacted (a map would reorder its keys).
type functionJSON struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type responseFormat struct {
	JSONSchema jsonSchemaFormat `json:"json_schema"`
	Type       string           `json:"type"`
}

type jsonSchemaFormat struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
}

// params translates a provider-neutral request into the body of a
// streaming chat completions request.
func (m *Model) params(req *llm.Request) (*chatRequest, error) {
	if req == nil {
		return nil, fmt.Errorf("%s: nil request", m.opts.Provider)
	}
	p := &chatRequest{Model: m.name, Stream: true, StreamOptions: streamOptions{IncludeUsage: true}}
	if n := req.MaxTokens; n > 0 || m.opts.MaxTokens > 0 {
		if n <= 0 {
			n = m.opts.MaxTokens
		}
		if m.legacy {
			p.MaxTokens = n
		} else {
			p.MaxCompletionTokens = n
		}
	}
	p.Temperature = req.Temperature
	p.ReasoningEffort = m.opts.ReasoningEffort
	// OpenAI caches prefixes by itself; a key routes a thread's requests
	// to the machine that holds its prefix, and "24h" keeps it longer.
	// A compatible server does not get them: it may refuse fields it does
	// not know (a subagent's local model under a GPT profile, say).
	if !m.opts.Compatible {
		p.PromptCacheKey = req.Cache.Key
		if req.Cache.TTL == "24h" {
			p.PromptCacheRetention = "24h"
		}
	}

	for _, t := range req.Tools {
		if t.Name == "" {
			return nil, fmt.Errorf("%s: tool without a name", m.opts.Provider)
		}
		schema := bytes.TrimSpace(t.Parameters)
		if len(schema) == 0 || string(schema) == "null" {
			schema = emptySchema
		} else if !json.Valid(schema) {
			return nil, fmt.Errorf("%s: tool %q: parameters are not valid JSON", m.opts.Provider, t.Name)
		}
		p.Tools = append(p.Tools, chatTool{Type: "function", Function: functionJSON{
			Name: t.Name, Description: t.Description, Parameters: schema,
		}})
	}
	if req.NoToolCalls && len(p.Tools) > 0 {
		p.ToolChoice = "none"
	}

	if len(req.ResponseSchema) > 0 {
		if !json.Valid(req.ResponseSchema) {
			return nil, fmt.Errorf("%s: response schema is not valid JSON", m.opts.Provider)
		}
		p.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: jsonSchemaFormat{Name: "response", Schema: req.ResponseSchema}}
	}

	msgs, err := m.messages(req)
	if err != nil {
		return nil, err
	}
	p.Messages = msgs
	return p, nil
}

func (m *Model) messages(req *llm.Request) ([]chatMessage, error) {
	out := make([]chatMessage, 0, len(req.Messages)+1)
	if req.System != "" {
		out = append(out, chatMessage{Role: "system", Content: req.System})
	}
	// Images returned by tools wait here until the run of tool messages
	// ends: tool messages carry text only, and must follow their
	// assistant message without a gap.
	var toolImages []contentPart
	flush := func() {
		if len(toolImages) > 0 {
			parts := append([]contentPart{textPart("Images returned by the tool calls above:")}, toolImages...)
			out = append(out, chatMessage{Role: "user", Content: parts})
			toolImages = nil
		}
	}
	for i := range req.Messages {
		msg := &req.Messages[i]
		if msg.Role != llm.RoleTool {
			flush()
		}
		switch msg.Role {
		case llm.RoleSystem:
			out = append(out, chatMessage{Role: "system", Content: msg.Text()})
		case llm.RoleUser:
			u, err := userMessage(msg.Parts)
			if err != nil {
				return nil, fmt.Errorf("%s: message %d: %w", m.opts.Provider, i, err)
			}
			out = append(out, u)
		case llm.RoleAssistant:
			a := chatMessage{Role: "assistant"}
			// Reasoning is not sent back: Chat Completions has no field
			// for it, and servers that stream reasoning_content reject it
			// in requests.
			if t := msg.Text(); t != "" {
				a.Content = t
			}
			for _, c := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, wireCall{
					ID:       c.ID,
					Type:     "function",
					Function: wireFunction{Name: c.Name, Arguments: wire.ArgsText(c.Args)},
				})
			}
			if len(a.ToolCalls) == 0 && a.Content == nil {
				// An empty assistant turn (no text, no calls) is
				// rejected by some servers; it says nothing, so it goes.
				continue
			}
			out = append(out, a)
		case llm.RoleTool:
			if msg.ToolCallID == "" {
				return nil, fmt.Errorf("%s: message %d: tool result without a tool call id", m.opts.Provider, i)
			}
			for _, p := range msg.Parts {
				if p.Type == llm.PartImage {
					img, err := imagePart(p)
					if err != nil {
						return nil, fmt.Errorf("%s: message %d: %w", m.opts.Provider, i, err)
					}
					toolImages = append(toolImages, img)
				}
			}
			out = append(out, chatMessage{Role: "tool", Content: msg.Text(), ToolCallID: msg.ToolCallID})
		default:
			return nil, fmt.Errorf("%s: message %d: unknown role %q", m.opts.Provider, i, msg.Role)
		}
	}
	flush()
	return out, nil
}

// userMessage sends text alone as a string and anything with an image as
// an array of parts.
func userMessage(parts []llm.Part) (chatMessage, error) {
	simple := true
	for _, p := range parts {
		if p.Type == llm.PartImage {
			simple = false
			break
		}
	}
	if simple {
		m := llm.Message{Parts: parts}
		return chatMessage{Role: "user", Content: m.Text()}, nil
	}
	var cp []contentPart
	for _, p := range parts {
		switch p.Type {
		case llm.PartText:
			if p.Text != "" {
				cp = append(cp, textPart(p.Text))
			}
		case llm.PartImage:
			img, err := imagePart(p)
			if err != nil {
				return chatMessage{}, err
			}
			cp = append(cp, img)
		case llm.PartReasoning:
		default:
			return chatMessage{}, fmt.Errorf("unknown part type %q", p.Type)
		}
	}
	return chatMessage{Role: "user", Content: cp}, nil
}

func textPart(text string) contentPart { return contentPart{Type: "text", Text: text} }

func imagePart(p llm.Part) (contentPart, error) {
	var u string
	switch {
	case len(p.Data) > 0:
		if p.MIMEType == "" {
			return contentPart{}, fmt.Errorf("image without a MIME type")
		}
		u = "data:" + p.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
	case p.URL != "":
		u = p.URL
	default:
		return contentPart{}, fmt.Errorf("image without data or URL")
	}
	return contentPart{Type: "image_url", ImageURL: &imageURL{URL: u}}, nil
}
