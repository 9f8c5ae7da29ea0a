package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/internal/wire"
)

// emptySchema is the parameter schema of a tool that declares none.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// functionJSON is a tool definition as sent on the wire. It is marshalled
// by this package so that the parameter schema goes out byte for byte as
// given (a map would reorder its keys).
type functionJSON struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type jsonSchemaFormat struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
}

// params translates a provider-neutral request into Chat Completions
// parameters.
func (m *Model) params(req *llm.Request) (sdk.ChatCompletionNewParams, error) {
	var p sdk.ChatCompletionNewParams
	if req == nil {
		return p, fmt.Errorf("%s: nil request", m.opts.Provider)
	}
	p.Model = m.name
	p.StreamOptions.IncludeUsage = param.NewOpt(true)
	if n := req.MaxTokens; n > 0 || m.opts.MaxTokens > 0 {
		if n <= 0 {
			n = m.opts.MaxTokens
		}
		if m.legacy {
			p.MaxTokens = param.NewOpt(int64(n))
		} else {
			p.MaxCompletionTokens = param.NewOpt(int64(n))
		}
	}
	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	if m.opts.ReasoningEffort != "" {
		p.ReasoningEffort = shared.ReasoningEffort(m.opts.ReasoningEffort)
	}
	// OpenAI caches prefixes by itself; a key routes a thread's requests
	// to the machine that holds its prefix, and "24h" keeps it longer.
	// A compatible server does not get them: it may refuse fields it does
	// not know (a subagent's local model under a GPT profile, say).
	if !m.opts.Compatible {
		if req.Cache.Key != "" {
			p.PromptCacheKey = param.NewOpt(req.Cache.Key)
		}
		if req.Cache.TTL == "24h" {
			p.PromptCacheRetention = sdk.ChatCompletionNewParamsPromptCacheRetention24h
		}
	}

	for _, t := range req.Tools {
		if t.Name == "" {
			return p, fmt.Errorf("%s: tool without a name", m.opts.Provider)
		}
		schema := bytes.TrimSpace(t.Parameters)
		if len(schema) == 0 || string(schema) == "null" {
			schema = emptySchema
		} else if !json.Valid(schema) {
			return p, fmt.Errorf("%s: tool %q: parameters are not valid JSON", m.opts.Provider, t.Name)
		}
		def := param.Override[shared.FunctionDefinitionParam](functionJSON{
			Name: t.Name, Description: t.Description, Parameters: schema,
		})
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(def))
	}
	if req.NoToolCalls && len(p.Tools) > 0 {
		p.ToolChoice = sdk.ChatCompletionToolChoiceOptionUnionParam{OfAuto: param.NewOpt(string(sdk.ChatCompletionToolChoiceOptionAutoNone))}
	}

	if len(req.ResponseSchema) > 0 {
		if !json.Valid(req.ResponseSchema) {
			return p, fmt.Errorf("%s: response schema is not valid JSON", m.opts.Provider)
		}
		p.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: param.Override[shared.ResponseFormatJSONSchemaJSONSchemaParam](jsonSchemaFormat{
				Name: "response", Schema: req.ResponseSchema,
			}),
		}
	}

	msgs, err := m.messages(req)
	if err != nil {
		return p, err
	}
	p.Messages = msgs
	return p, nil
}

func (m *Model) messages(req *llm.Request) ([]sdk.ChatCompletionMessageParamUnion, error) {
	out := make([]sdk.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if req.System != "" {
		out = append(out, sdk.SystemMessage(req.System))
	}
	// Images returned by tools wait here until the run of tool messages
	// ends: tool messages carry text only, and must follow their
	// assistant message without a gap.
	var toolImages []sdk.ChatCompletionContentPartUnionParam
	flush := func() {
		if len(toolImages) > 0 {
			parts := append([]sdk.ChatCompletionContentPartUnionParam{sdk.TextContentPart("Images returned by the tool calls above:")}, toolImages...)
			out = append(out, sdk.UserMessage(parts))
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
			out = append(out, sdk.SystemMessage(msg.Text()))
		case llm.RoleUser:
			u, err := userMessage(msg.Parts)
			if err != nil {
				return nil, fmt.Errorf("%s: message %d: %w", m.opts.Provider, i, err)
			}
			out = append(out, u)
		case llm.RoleAssistant:
			a := &sdk.ChatCompletionAssistantMessageParam{}
			// Reasoning is not sent back: Chat Completions has no field
			// for it, and servers that stream reasoning_content reject it
			// in requests.
			if t := msg.Text(); t != "" {
				a.Content.OfString = param.NewOpt(t)
			}
			for _, c := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
						ID: c.ID,
						Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name:      c.Name,
							Arguments: wire.ArgsText(c.Args),
						},
					},
				})
			}
			if len(a.ToolCalls) == 0 && !a.Content.OfString.Valid() {
				// An empty assistant turn (no text, no calls) is
				// rejected by some servers; it says nothing, so it goes.
				continue
			}
			out = append(out, sdk.ChatCompletionMessageParamUnion{OfAssistant: a})
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
			out = append(out, sdk.ToolMessage(msg.Text(), msg.ToolCallID))
		default:
			return nil, fmt.Errorf("%s: message %d: unknown role %q", m.opts.Provider, i, msg.Role)
		}
	}
	flush()
	return out, nil
}

// userMessage sends text alone as a string and anything with an image as
// an array of parts.
func userMessage(parts []llm.Part) (sdk.ChatCompletionMessageParamUnion, error) {
	simple := true
	for _, p := range parts {
		if p.Type == llm.PartImage {
			simple = false
			break
		}
	}
	if simple {
		m := llm.Message{Parts: parts}
		return sdk.UserMessage(m.Text()), nil
	}
	var cp []sdk.ChatCompletionContentPartUnionParam
	for _, p := range parts {
		switch p.Type {
		case llm.PartText:
			if p.Text != "" {
				cp = append(cp, sdk.TextContentPart(p.Text))
			}
		case llm.PartImage:
			img, err := imagePart(p)
			if err != nil {
				return sdk.ChatCompletionMessageParamUnion{}, err
			}
			cp = append(cp, img)
		case llm.PartReasoning:
		default:
			return sdk.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown part type %q", p.Type)
		}
	}
	return sdk.UserMessage(cp), nil
}

func imagePart(p llm.Part) (sdk.ChatCompletionContentPartUnionParam, error) {
	var u string
	switch {
	case len(p.Data) > 0:
		if p.MIMEType == "" {
			return sdk.ChatCompletionContentPartUnionParam{}, fmt.Errorf("image without a MIME type")
		}
		u = "data:" + p.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
	case p.URL != "":
		u = p.URL
	default:
		return sdk.ChatCompletionContentPartUnionParam{}, fmt.Errorf("image without data or URL")
	}
	return sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: u}), nil
}
