package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/internal/wire"
)

// emptySchema is the input schema of a tool that declares no parameters.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// params translates a provider-neutral request into Messages API
// parameters. The translation is deterministic: the same system prompt and
// tools always produce the same bytes, which the prompt cache relies on.
func (m *Model) params(req *llm.Request) (sdk.MessageNewParams, error) {
	var p sdk.MessageNewParams
	if req == nil {
		return p, fmt.Errorf("anthropic: nil request")
	}
	p.Model = m.name

	maxTok := req.MaxTokens
	if maxTok <= 0 {
		maxTok = m.maxTok
	}
	switch {
	case m.opts.AdaptiveThinking:
		p.Thinking.OfAdaptive = &sdk.ThinkingConfigAdaptiveParam{}
	case m.opts.ThinkingBudget > 0:
		if m.opts.ThinkingBudget >= maxTok {
			return p, fmt.Errorf("anthropic: thinking budget %d must be below max tokens %d", m.opts.ThinkingBudget, maxTok)
		}
		p.Thinking.OfEnabled = &sdk.ThinkingConfigEnabledParam{BudgetTokens: int64(m.opts.ThinkingBudget)}
	}
	p.MaxTokens = int64(maxTok)
	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}

	cache, err := cacheControl(req.Cache)
	if err != nil {
		return p, err
	}

	// Tools.
	if len(req.Tools) > 0 {
		p.Tools = make([]sdk.ToolUnionParam, len(req.Tools))
		for i, t := range req.Tools {
			tp, err := toolParam(t)
			if err != nil {
				return p, err
			}
			p.Tools[i].OfTool = tp
		}
		if req.Cache.Prefix {
			p.Tools[len(p.Tools)-1].OfTool.CacheControl = cache
		}
		if req.NoToolCalls {
			p.ToolChoice = sdk.ToolChoiceUnionParam{OfNone: &sdk.ToolChoiceNoneParam{}}
		}
	}

	// System prompt: Request.System, then any leading system messages.
	msgs := req.Messages
	if req.System != "" {
		p.System = append(p.System, sdk.TextBlockParam{Text: req.System})
	}
	for len(msgs) > 0 && msgs[0].Role == llm.RoleSystem {
		if t := msgs[0].Text(); t != "" {
			p.System = append(p.System, sdk.TextBlockParam{Text: t})
		}
		msgs = msgs[1:]
	}
	if req.Cache.Prefix && len(p.System) > 0 {
		p.System[len(p.System)-1].CacheControl = cache
	}

	p.Messages, err = messages(msgs)
	if err != nil {
		return p, err
	}
	if req.Cache.Tail {
		markTail(p.Messages, cache)
	}

	if len(req.ResponseSchema) > 0 {
		if !json.Valid(req.ResponseSchema) {
			return p, fmt.Errorf("anthropic: response schema is not valid JSON")
		}
		// Native structured output: the final text is JSON matching the
		// schema, while the model stays free to call tools first.
		p.OutputConfig.Format = param.Override[sdk.JSONOutputFormatParam](formatJSON{
			Type:   "json_schema",
			Schema: req.ResponseSchema,
		})
	}
	return p, nil
}

type formatJSON struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema"`
}

func cacheControl(h llm.CacheHints) (sdk.CacheControlEphemeralParam, error) {
	c := sdk.NewCacheControlEphemeralParam()
	switch h.TTL {
	case "":
	case "5m", "1h":
		c.TTL = sdk.CacheControlEphemeralTTL(h.TTL)
	default:
		if h.Prefix || h.Tail {
			return c, fmt.Errorf("anthropic: unsupported cache TTL %q (want 5m or 1h)", h.TTL)
		}
	}
	return c, nil
}

func toolParam(t llm.ToolSpec) (*sdk.ToolParam, error) {
	if t.Name == "" {
		return nil, fmt.Errorf("anthropic: tool without a name")
	}
	schema := bytes.TrimSpace(t.Parameters)
	if len(schema) == 0 || string(schema) == "null" {
		schema = emptySchema
	} else if !json.Valid(schema) {
		return nil, fmt.Errorf("anthropic: tool %q: parameters are not valid JSON", t.Name)
	}
	tp := &sdk.ToolParam{
		Name: t.Name,
		// The schema is sent as the caller wrote it, byte for byte (after
		// compaction), rather than through a map that would reorder it.
		InputSchema: param.Override[sdk.ToolInputSchemaParam](json.RawMessage(schema)),
	}
	if t.Description != "" {
		tp.Description = param.NewOpt(t.Description)
	}
	return tp, nil
}

// messages translates the conversation. Consecutive tool results, and a
// user message that follows them, are merged into one user message with the
// tool_result blocks first, as the API requires.
func messages(msgs []llm.Message) ([]sdk.MessageParam, error) {
	out := make([]sdk.MessageParam, 0, len(msgs))
	for i := range msgs {
		msg := &msgs[i]
		var (
			role   sdk.MessageParamRole
			blocks []sdk.ContentBlockParamUnion
			err    error
		)
		switch msg.Role {
		case llm.RoleUser, llm.RoleSystem:
			// A system message after the first user turn cannot join the
			// system prompt without breaking the cache; it is sent as
			// user text.
			role = sdk.MessageParamRoleUser
			blocks, err = contentBlocks(msg.Parts, false)
		case llm.RoleTool:
			role = sdk.MessageParamRoleUser
			var b sdk.ContentBlockParamUnion
			b, err = toolResult(msg)
			blocks = []sdk.ContentBlockParamUnion{b}
		case llm.RoleAssistant:
			role = sdk.MessageParamRoleAssistant
			blocks, err = contentBlocks(msg.Parts, true)
			for _, c := range msg.ToolCalls {
				blocks = append(blocks, sdk.ContentBlockParamUnion{OfToolUse: &sdk.ToolUseBlockParam{
					ID:    c.ID,
					Name:  c.Name,
					Input: wire.ArgsObject(c.Args),
				}})
			}
		default:
			return nil, fmt.Errorf("anthropic: message %d: unknown role %q", i, msg.Role)
		}
		if err != nil {
			return nil, fmt.Errorf("anthropic: message %d: %w", i, err)
		}
		if len(blocks) == 0 {
			continue // the API rejects empty messages
		}
		if n := len(out); n > 0 && out[n-1].Role == role && role == sdk.MessageParamRoleUser {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, sdk.MessageParam{Role: role, Content: blocks})
	}
	return out, nil
}

// contentBlocks translates text, image and (for assistant messages)
// reasoning parts. Empty text is dropped: the API rejects it. Reasoning
// without a signature (another provider's) cannot be verified by the API
// and is dropped too.
func contentBlocks(parts []llm.Part, assistant bool) ([]sdk.ContentBlockParamUnion, error) {
	blocks := make([]sdk.ContentBlockParamUnion, 0, len(parts))
	for _, p := range parts {
		switch p.Type {
		case llm.PartText:
			if p.Text != "" {
				blocks = append(blocks, sdk.NewTextBlock(p.Text))
			}
		case llm.PartImage:
			img, err := imageBlock(p)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, sdk.ContentBlockParamUnion{OfImage: img})
		case llm.PartReasoning:
			if !assistant {
				continue
			}
			switch {
			case p.Redacted:
				if len(p.Data) > 0 {
					blocks = append(blocks, sdk.NewRedactedThinkingBlock(string(p.Data)))
				}
			case p.Signature != "":
				blocks = append(blocks, sdk.NewThinkingBlock(p.Signature, p.Text))
			}
		default:
			return nil, fmt.Errorf("unknown part type %q", p.Type)
		}
	}
	return blocks, nil
}

func imageBlock(p llm.Part) (*sdk.ImageBlockParam, error) {
	img := &sdk.ImageBlockParam{}
	switch {
	case len(p.Data) > 0:
		if p.MIMEType == "" {
			return nil, fmt.Errorf("image without a MIME type")
		}
		img.Source.OfBase64 = &sdk.Base64ImageSourceParam{
			Data:      base64.StdEncoding.EncodeToString(p.Data),
			MediaType: sdk.Base64ImageSourceMediaType(p.MIMEType),
		}
	case p.URL != "":
		img.Source.OfURL = &sdk.URLImageSourceParam{URL: p.URL}
	default:
		return nil, fmt.Errorf("image without data or URL")
	}
	return img, nil
}

func toolResult(msg *llm.Message) (sdk.ContentBlockParamUnion, error) {
	if msg.ToolCallID == "" {
		return sdk.ContentBlockParamUnion{}, fmt.Errorf("tool result without a tool call id")
	}
	tr := &sdk.ToolResultBlockParam{ToolUseID: msg.ToolCallID}
	if msg.IsError {
		tr.IsError = param.NewOpt(true)
	}
	for _, p := range msg.Parts {
		switch p.Type {
		case llm.PartText:
			if p.Text != "" {
				tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: p.Text}})
			}
		case llm.PartImage:
			img, err := imageBlock(p)
			if err != nil {
				return sdk.ContentBlockParamUnion{}, err
			}
			tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfImage: img})
		case llm.PartReasoning:
		default:
			return sdk.ContentBlockParamUnion{}, fmt.Errorf("unknown part type %q", p.Type)
		}
	}
	return sdk.ContentBlockParamUnion{OfToolResult: tr}, nil
}

// markTail puts a cache breakpoint on the last block of the last message
// that can carry one (thinking blocks cannot).
func markTail(msgs []sdk.MessageParam, cache sdk.CacheControlEphemeralParam) {
	if len(msgs) == 0 {
		return
	}
	content := msgs[len(msgs)-1].Content
	for i := len(content) - 1; i >= 0; i-- {
		if cc := content[i].GetCacheControl(); cc != nil {
			*cc = cache
			return
		}
	}
}

// errorDetail extracts the type and message of an API error body
// ({"type":"error","error":{"type":...,"message":...}}); a body that is not
// such JSON is returned, shortened, as the message.
func errorDetail(raw string) (typ, msg string) {
	var env struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &env) == nil && (env.Error.Type != "" || env.Error.Message != "") {
		return env.Error.Type, env.Error.Message
	}
	raw = strings.Join(strings.Fields(raw), " ")
	if len(raw) > 200 {
		raw = raw[:200] + "…"
	}
	return "", raw
}
