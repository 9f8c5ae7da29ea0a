package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/internal/wire"
)

// Stream sends req to the chat completions endpoint and yields the answer
// as it streams: text and reasoning deltas, then each tool call, fully
// assembled from its fragments, and finally a ChunkDone with the whole
// response.
//
// A stream that ends before "data: [DONE]" (a dropped connection, an error
// payload, malformed data) ends with an error wrapping [llm.ErrIncomplete]
// and no ChunkDone. If it breaks before anything was yielded, it is retried
// like a failed request, up to [Options].MaxRetries times. Cancelling ctx
// ends the stream with ctx's error.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		p, err := m.params(req)
		if err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		body, err := json.Marshal(p)
		if err != nil {
			yield(llm.Chunk{}, fmt.Errorf("%s: %w", m.opts.Provider, err))
			return
		}
		wire.RetryStream(ctx, m.opts.Provider, m.opts.MaxRetries, m.opts.Logger, func(emit func(llm.Chunk) bool) (bool, error) {
			return m.stream(ctx, body, emit)
		}, yield)
	}
}

// stream makes one streaming request and passes its chunks, ChunkDone
// included, to yield. It returns nil after ChunkDone, wire.ErrStopped when
// yield returns false, or the error that ended the stream and whether a
// new request could succeed where this one failed.
func (m *Model) stream(ctx context.Context, body []byte, yield func(llm.Chunk) bool) (retryable bool, err error) {
	res, err := m.post(ctx, body)
	if err != nil {
		// The request itself failed, after its retries.
		return false, err
	}
	complete := false
	defer func() {
		if complete {
			_ = wire.DrainClose(res.Body)
		} else {
			_ = res.Body.Close()
		}
	}()

	prov := m.opts.Provider
	acc := accumulator{provider: prov}
	events := newSSEReader(res.Body)
	for {
		data, err := events.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return false, fmt.Errorf("%s: %w", prov, context.Cause(ctx))
			}
			return brokenErr(prov, err, acc.chunks)
		}
		var chunk chatChunk
		if err := json.Unmarshal(data, &chunk); err != nil {
			return brokenErr(prov, err, acc.chunks)
		}
		if chunk.Error != nil {
			return brokenErr(prov, &streamError{obj: *chunk.Error}, acc.chunks)
		}
		for c := range acc.add(&chunk) {
			if !yield(c) {
				return false, wire.ErrStopped
			}
		}
	}
	switch {
	case ctx.Err() != nil:
		return false, fmt.Errorf("%s: %w", prov, context.Cause(ctx))
	case !events.done:
		return true, wire.Incomplete(fmt.Sprintf("%s: stream ended after %d chunks without [DONE]", prov, acc.chunks), nil)
	case acc.finish == "":
		return true, wire.Incomplete(fmt.Sprintf("%s: stream ended without a finish reason", prov), nil)
	}
	complete = true
	r, calls := acc.response()
	for i := range calls {
		if !yield(llm.Chunk{Type: llm.ChunkToolCall, ToolCall: &calls[i]}) {
			return false, wire.ErrStopped
		}
	}
	if !yield(llm.Chunk{Type: llm.ChunkDone, Response: r}) {
		return false, wire.ErrStopped
	}
	return false, nil
}

// streamError is an error payload in the stream ({"error": {...}}).
type streamError struct{ obj errorObject }

func (e *streamError) Error() string {
	msg := e.obj.Message
	if e.obj.Type != "" {
		msg = e.obj.Type + ": " + msg
	}
	return "received error while streaming: " + msg
}

// brokenErr describes an error that ended a stream after it had started,
// and says whether a new request could fare better: after a lost
// connection or a server error payload, yes; after malformed data, no.
func brokenErr(provider string, err error, chunks int) (retryable bool, _ error) {
	var (
		se     *streamError
		synErr *json.SyntaxError
		typErr *json.UnmarshalTypeError
	)
	what := "connection lost"
	retryable = true
	switch {
	case errors.As(err, &se):
		what = "error event"
		switch se.obj.Type {
		case "server_error", "rate_limit_error", "overloaded_error", "api_error", "":
		default:
			retryable = false
		}
	case errors.As(err, &synErr), errors.As(err, &typErr):
		what, retryable = "malformed chunk data", false
	}
	return retryable, wire.Incomplete(fmt.Sprintf("%s: %s after %d chunks", provider, what, chunks), err)
}

// chatChunk is one event of a chat completions stream.
type chatChunk struct {
	Model   string        `json:"model"`
	Usage   *chunkUsage   `json:"usage"`
	Choices []chunkChoice `json:"choices"`
	// Error is set in an error payload instead of a chunk.
	Error *errorObject `json:"error"`
}

type chunkUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens"`
	} `json:"prompt_tokens_details"`
}

type chunkChoice struct {
	Index        int64      `json:"index"`
	Delta        chunkDelta `json:"delta"`
	FinishReason string     `json:"finish_reason"`
}

type chunkDelta struct {
	Content string `json:"content"`
	Refusal string `json:"refusal"`
	// ReasoningContent and Reasoning are what some compatible servers
	// stream beside the content; only a string counts.
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	ToolCalls        []struct {
		Index    int64  `json:"index"`
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// accumulator assembles a message from streamed chunks.
type accumulator struct {
	provider string
	chunks   int
	model    string
	finish   string
	refusal  bool
	usage    llm.Usage

	text      []byte
	reasoning []byte
	calls     []callBuf
}

// callBuf is a tool call being streamed, keyed by its index.
type callBuf struct {
	index int64
	id    string
	name  string
	args  []byte
}

// add takes in one chunk and yields the deltas it carries. Tool calls are
// held back until the stream is complete.
func (a *accumulator) add(c *chatChunk) iter.Seq[llm.Chunk] {
	return func(yield func(llm.Chunk) bool) {
		a.chunks++
		if c.Model != "" {
			a.model = c.Model
		}
		if u := c.Usage; u != nil {
			a.usage = llm.Usage{
				// prompt_tokens already counts the cached tokens.
				InputTokens:      int(u.PromptTokens),
				OutputTokens:     int(u.CompletionTokens),
				CacheReadTokens:  int(u.PromptTokensDetails.CachedTokens),
				CacheWriteTokens: int(u.PromptTokensDetails.CacheWriteTokens),
			}
		}
		for i := range c.Choices {
			ch := &c.Choices[i]
			if ch.Index != 0 {
				continue // only one completion is asked for
			}
			d := &ch.Delta
			if r := reasoningDelta(d); r != "" {
				a.reasoning = append(a.reasoning, r...)
				if !yield(llm.Chunk{Type: llm.ChunkReasoning, Text: r}) {
					return
				}
			}
			if d.Content != "" {
				a.text = append(a.text, d.Content...)
				if !yield(llm.Chunk{Type: llm.ChunkText, Text: d.Content}) {
					return
				}
			}
			if d.Refusal != "" {
				a.refusal = true
				a.text = append(a.text, d.Refusal...)
				if !yield(llm.Chunk{Type: llm.ChunkText, Text: d.Refusal}) {
					return
				}
			}
			for j := range d.ToolCalls {
				tc := &d.ToolCalls[j]
				b := a.call(tc.Index)
				if tc.ID != "" {
					b.id = tc.ID
				}
				if tc.Function.Name != "" {
					// Some servers repeat the name in every fragment;
					// none splits it.
					b.name = tc.Function.Name
				}
				b.args = append(b.args, tc.Function.Arguments...)
			}
			if ch.FinishReason != "" {
				a.finish = ch.FinishReason
			}
		}
	}
}

func (a *accumulator) call(index int64) *callBuf {
	for i := range a.calls {
		if a.calls[i].index == index {
			return &a.calls[i]
		}
	}
	a.calls = append(a.calls, callBuf{index: index})
	return &a.calls[len(a.calls)-1]
}

// reasoningDelta returns the reasoning text some OpenAI-compatible servers
// stream beside the content: reasoning_content (vLLM, DeepSeek, llama.cpp)
// or reasoning (Ollama, OpenRouter).
func reasoningDelta(d *chunkDelta) string {
	for _, raw := range [...]json.RawMessage{d.ReasoningContent, d.Reasoning} {
		if len(raw) < 2 || raw[0] != '"' {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func (a *accumulator) response() (*llm.Response, []llm.ToolCall) {
	msg := llm.Message{Role: llm.RoleAssistant}
	if len(a.reasoning) > 0 {
		msg.Parts = append(msg.Parts, llm.Part{Type: llm.PartReasoning, Text: string(a.reasoning)})
	}
	if len(a.text) > 0 {
		msg.Parts = append(msg.Parts, llm.Text(string(a.text)))
	}
	slices.SortFunc(a.calls, func(x, y callBuf) int { return int(x.index - y.index) })
	for _, c := range a.calls {
		id := c.id
		if id == "" {
			id = wire.NewCallID()
		}
		msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: id, Name: c.name, Args: wire.Args(string(c.args))})
	}
	var calls []llm.ToolCall
	if len(msg.ToolCalls) > 0 {
		calls = slices.Clone(msg.ToolCalls)
	}
	return &llm.Response{
		Message:    msg,
		Usage:      a.usage,
		StopReason: a.stopReason(len(msg.ToolCalls) > 0),
		Model:      a.model,
	}, calls
}

func (a *accumulator) stopReason(hasCalls bool) llm.StopReason {
	switch a.finish {
	case "tool_calls", "function_call":
		return llm.StopToolUse
	case "length":
		return llm.StopMaxTokens
	case "content_filter":
		return llm.StopRefusal
	case "stop":
		if hasCalls {
			// Some compatible servers (older Ollama) report "stop" for
			// a turn that calls tools.
			return llm.StopToolUse
		}
		if a.refusal {
			return llm.StopRefusal
		}
		return llm.StopEnd
	}
	return llm.StopOther
}
