package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"slices"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

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
		wire.RetryStream(ctx, m.opts.Provider, m.opts.MaxRetries, m.opts.Logger, func(emit func(llm.Chunk) bool) (bool, error) {
			return m.stream(ctx, p, emit)
		}, yield)
	}
}

// stream makes one streaming request and passes its chunks, ChunkDone
// included, to yield. It returns nil after ChunkDone, wire.ErrStopped when yield
// returns false, or the error that ended the stream and whether a new
// request could succeed where this one failed.
func (m *Model) stream(ctx context.Context, p sdk.ChatCompletionNewParams, yield func(llm.Chunk) bool) (retryable bool, err error) {
	var (
		resp *http.Response
		spy  *doneSpy
	)
	stream := m.svc.NewStreaming(ctx, p,
		option.WithResponseInto(&resp),
		option.WithMiddleware(spyOnDone(&spy)))
	defer stream.Close()

	acc := accumulator{provider: m.opts.Provider}
	for stream.Next() {
		chunk := stream.Current()
		for c := range acc.add(&chunk) {
			if !yield(c) {
				return false, wire.ErrStopped
			}
		}
	}
	err = stream.Err()
	prov := m.opts.Provider
	switch {
	case ctx.Err() != nil:
		return false, fmt.Errorf("%s: %w", prov, context.Cause(ctx))
	case err != nil && (resp == nil || resp.StatusCode >= 300):
		// The request itself failed, after the SDK's retries.
		return false, m.wrapErr(ctx, err)
	case err != nil:
		return brokenErr(prov, err, acc.chunks)
	case spy == nil || !spy.done:
		return true, wire.Incomplete(fmt.Sprintf("%s: stream ended after %d chunks without [DONE]", prov, acc.chunks), nil)
	case acc.finish == "":
		return true, wire.Incomplete(fmt.Sprintf("%s: stream ended without a finish reason", prov), nil)
	}
	res, calls := acc.response()
	for i := range calls {
		if !yield(llm.Chunk{Type: llm.ChunkToolCall, ToolCall: &calls[i]}) {
			return false, wire.ErrStopped
		}
	}
	if !yield(llm.Chunk{Type: llm.ChunkDone, Response: res}) {
		return false, wire.ErrStopped
	}
	return false, nil
}

// brokenErr describes an error that ended a stream after it had started,
// and says whether a new request could fare better: after a lost
// connection or a server error payload, yes; after malformed data, no.
func brokenErr(provider string, err error, chunks int) (retryable bool, _ error) {
	var (
		se     *ssestream.StreamError
		synErr *json.SyntaxError
		typErr *json.UnmarshalTypeError
	)
	what := "connection lost"
	retryable = true
	switch {
	case errors.As(err, &se):
		what = "error event"
		var payload struct {
			Error struct {
				Type string `json:"type"`
			} `json:"error"`
		}
		_ = json.Unmarshal(se.Event.Data, &payload)
		switch payload.Error.Type {
		case "server_error", "rate_limit_error", "overloaded_error", "api_error", "":
		default:
			retryable = false
		}
	case errors.As(err, &synErr), errors.As(err, &typErr):
		what, retryable = "malformed chunk data", false
	}
	return retryable, wire.Incomplete(fmt.Sprintf("%s: %s after %d chunks", provider, what, chunks), err)
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
func (a *accumulator) add(c *sdk.ChatCompletionChunk) iter.Seq[llm.Chunk] {
	return func(yield func(llm.Chunk) bool) {
		a.chunks++
		if c.Model != "" {
			a.model = c.Model
		}
		if c.JSON.Usage.Valid() {
			u := &c.Usage
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
func reasoningDelta(d *sdk.ChatCompletionChunkChoiceDelta) string {
	if len(d.JSON.ExtraFields) == 0 {
		return ""
	}
	for _, key := range [...]string{"reasoning_content", "reasoning"} {
		f, ok := d.JSON.ExtraFields[key]
		if !ok {
			continue
		}
		raw := f.Raw()
		if len(raw) < 2 || raw[0] != '"' {
			continue
		}
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil && s != "" {
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

// doneSpy watches a response body for the "data: [DONE]" line that ends a
// complete stream, which the SDK consumes without telling.
type doneSpy struct {
	io.ReadCloser
	line []byte // the start of the current line, at most 16 bytes
	done bool
}

var donePrefix = []byte("[DONE]")

func (s *doneSpy) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	b := p[:n]
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			if room := 16 - len(s.line); room > 0 {
				s.line = append(s.line, b[:min(room, len(b))]...)
			}
			break
		}
		if room := 16 - len(s.line); room > 0 {
			s.line = append(s.line, b[:min(room, i)]...)
		}
		if v, ok := bytes.CutPrefix(s.line, []byte("data:")); ok && bytes.HasPrefix(bytes.TrimLeft(v, " "), donePrefix) {
			s.done = true
		}
		s.line = s.line[:0]
		b = b[i+1:]
	}
	return n, err
}

// Close lets the connection be reused when the stream was complete: the
// SDK closes the body as soon as it sees [DONE], before the end of the
// chunked encoding.
func (s *doneSpy) Close() error {
	if s.done {
		return wire.DrainClose(s.ReadCloser)
	}
	return s.ReadCloser.Close()
}

// spyOnDone is a per-request middleware that wraps a successful response's
// body in a doneSpy and stores it in *spy. Each attempt replaces it, so
// *spy watches the body that is finally streamed.
func spyOnDone(spy **doneSpy) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(req)
		if err == nil && res != nil && res.StatusCode < 300 && res.Body != nil {
			s := &doneSpy{ReadCloser: res.Body, line: make([]byte, 0, 16)}
			res.Body = s
			*spy = s
		}
		return res, err
	}
}
