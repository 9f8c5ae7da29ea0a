package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"sync/atomic"
)

// ToolSpec describes a tool to the model. Parameters is a JSON Schema for the
// tool's argument object, kept as raw bytes so that it is byte-identical from
// one request to the next (which prompt caches depend on).
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// CacheHints asks a model that supports prompt caching to place cache
// breakpoints, or to send a cache key. Models without prompt caching
// ignore it.
type CacheHints struct {
	// Prefix marks the end of the stable prefix: the tool definitions and
	// the system prompt.
	Prefix bool `json:"prefix,omitempty"`
	// Tail marks the end of the conversation, so the next request can read
	// everything up to here from the cache.
	Tail bool `json:"tail,omitempty"`
	// TTL is a provider-specific cache lifetime such as "5m" or "1h"; empty
	// means the provider's default.
	TTL string `json:"ttl,omitempty"`
	// Key, for providers that route requests by a cache key (OpenAI's
	// prompt_cache_key), groups requests that share a prefix so that they
	// reach the same cache; empty sends none.
	Key string `json:"key,omitempty"`
}

// Request is everything a model needs for one call.
type Request struct {
	// System is the system prompt.
	System   string     `json:"system,omitempty"`
	Messages []Message  `json:"messages"`
	Tools    []ToolSpec `json:"tools,omitempty"`
	// NoToolCalls asks for an answer without tool calls, the tools still
	// defined (a conversation with tool calls in it needs them): the
	// providers' tool_choice "none". A harness's last turn, when a budget
	// is spent, asks it.
	NoToolCalls bool `json:"no_tool_calls,omitempty"`

	// MaxTokens caps the output; zero means the model's default.
	MaxTokens int `json:"max_tokens,omitempty"`
	// Temperature, when set, overrides the model's default.
	Temperature *float64 `json:"temperature,omitempty"`
	// ResponseSchema, when set, asks for a final answer that is a JSON
	// value matching this JSON Schema.
	ResponseSchema json.RawMessage `json:"response_schema,omitempty"`
	// Cache places prompt-cache breakpoints for models that support them.
	Cache CacheHints `json:"cache,omitzero"`
}

// AppendSystem adds a section to the end of the system prompt, after a
// blank line (none before the first): how middleware add what they know to
// the prompt of a call.
func (r *Request) AppendSystem(section string) {
	if r.System == "" {
		r.System = section
		return
	}
	r.System += "\n\n" + section
}

// SystemMemo appends sections to system prompts as Request.AppendSystem
// does, remembering the last prompt it appended to and what that made: a
// middleware that adds the same section to the same prompt at every step
// copies the prompt once, not once a step. Its zero value is ready to use;
// it is safe for concurrent use, and stays right (if no faster) when its
// prompts or sections change from one call to the next.
type SystemMemo struct{ last atomic.Pointer[systemJoin] }

type systemJoin struct{ base, section, joined string }

// Append adds section to the end of r's system prompt.
func (m *SystemMemo) Append(r *Request, section string) {
	// Strings that share their bytes compare in constant time: the
	// prompt a step's middleware pass on is, step after step, the one
	// this memo made the step before.
	if j := m.last.Load(); j != nil && j.base == r.System && j.section == section {
		r.System = j.joined
		return
	}
	base := r.System
	r.AppendSystem(section)
	m.last.Store(&systemJoin{base: base, section: section, joined: r.System})
}

// StopReason says why the model stopped generating.
type StopReason string

// Stop reasons common to providers; providers map theirs onto these.
const (
	StopEnd       StopReason = "end_turn"   // the model finished its answer
	StopToolUse   StopReason = "tool_use"   // the model wants tools to run
	StopMaxTokens StopReason = "max_tokens" // the output limit was reached
	StopRefusal   StopReason = "refusal"    // the model declined
	StopOther     StopReason = "other"
)

// Response is a complete model turn.
type Response struct {
	Message    Message    `json:"message"`
	Usage      Usage      `json:"usage"`
	StopReason StopReason `json:"stop_reason,omitempty"`
	// Model is the model that answered, as the provider names it.
	Model string `json:"model,omitempty"`
}

// ChunkType names the kind of a streamed [Chunk].
type ChunkType uint8

// Chunk kinds, in the order a stream typically produces them.
const (
	// ChunkText carries a piece of answer text in Text.
	ChunkText ChunkType = iota + 1
	// ChunkReasoning carries a piece of reasoning in Text.
	ChunkReasoning
	// ChunkToolCall carries one tool call, fully assembled from the
	// fragments the provider streamed.
	ChunkToolCall
	// ChunkDone carries the complete Response; it is always the last chunk
	// of a successful stream.
	ChunkDone
)

// Chunk is one element of a model's stream.
type Chunk struct {
	Type     ChunkType
	Text     string
	ToolCall *ToolCall
	Response *Response
}

// Model is a language model. Stream yields the answer as it is produced and
// ends with a ChunkDone chunk carrying the complete Response, or with an
// error. Stopping the iteration early, or cancelling ctx, stops the request.
//
// Implementations must be safe for concurrent use.
type Model interface {
	Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error]
}

// Info describes a model's capabilities. Zero fields mean unknown.
type Info struct {
	Provider      string `json:"provider,omitempty"`
	Name          string `json:"name,omitempty"`
	ContextWindow int    `json:"context_window,omitempty"` // input tokens
	// PromptCaching reports whether the model honours Request.Cache.
	PromptCaching bool `json:"prompt_caching,omitempty"`
}

// Spec names the model as "provider:model" (as usage events and prices
// do), or by its name alone when it names no provider.
func (i Info) Spec() string {
	if i.Provider == "" {
		return i.Name
	}
	return i.Provider + ":" + i.Name
}

// Describer is implemented by models that can say what they are.
type Describer interface {
	Info() Info
}

// Describe returns m's Info, or the zero Info when m does not implement
// [Describer].
func Describe(m Model) Info {
	if d, ok := m.(Describer); ok {
		return d.Info()
	}
	return Info{}
}

// TokenCounter is implemented by models that can count a request's input
// tokens the way the provider does.
type TokenCounter interface {
	CountTokens(ctx context.Context, req *Request) (int, error)
}

// ErrIncomplete reports a stream that ended before the model finished its
// message (a dropped connection, for example). The partial message must not
// be treated as complete.
var ErrIncomplete = errors.New("llm: stream ended before the message was complete")

// Generate runs m and returns the complete response, discarding the
// intermediate chunks.
func Generate(ctx context.Context, m Model, req *Request) (*Response, error) {
	for c, err := range m.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		if c.Type == ChunkDone {
			if c.Response == nil {
				return nil, fmt.Errorf("llm: done chunk without a response: %w", ErrIncomplete)
			}
			return c.Response, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, ErrIncomplete
}
