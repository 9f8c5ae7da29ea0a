package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/internal/wire"
)

// Stream sends req to the Messages API and yields the answer as it streams:
// text and thinking deltas, each tool call once its input JSON is complete,
// and finally a ChunkDone with the whole response.
//
// A stream that breaks before message_stop (a dropped connection, an
// error event, malformed data) ends with an error wrapping
// [llm.ErrIncomplete] and no ChunkDone. If it breaks before anything was
// yielded (an "overloaded" error event right after the headers, say), it
// is retried like a failed request, up to [Options].MaxRetries times.
// Cancelling ctx ends the stream with ctx's error.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		p, err := m.params(req)
		if err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		wire.RetryStream(ctx, "anthropic", m.opts.MaxRetries, m.opts.Logger, func(emit func(llm.Chunk) bool) (bool, error) {
			return m.stream(ctx, p, emit)
		}, yield)
	}
}

// stream makes one streaming request and passes its chunks, ChunkDone
// included, to yield. It returns nil after ChunkDone, wire.ErrStopped when yield
// returns false, or the error that ended the stream and whether a new
// request could succeed where this one failed.
func (m *Model) stream(ctx context.Context, p sdk.MessageNewParams, yield func(llm.Chunk) bool) (retryable bool, err error) {
	var (
		resp *http.Response
		body *completeBody
	)
	stream := m.client.Messages.NewStreaming(ctx, p,
		option.WithResponseInto(&resp),
		option.WithMiddleware(wrapBody(&body)))
	defer stream.Close()

	var acc accumulator
	for stream.Next() {
		ev := stream.Current()
		c, ok, err := acc.add(&ev)
		if err != nil {
			return false, err
		}
		if ok && !yield(c) {
			return false, wire.ErrStopped
		}
		if acc.stopped {
			if body != nil {
				body.complete = true
			}
			break
		}
	}
	err = stream.Err()
	switch {
	case ctx.Err() != nil:
		return false, fmt.Errorf("anthropic: %w", context.Cause(ctx))
	case err != nil && (resp == nil || resp.StatusCode >= 300):
		// The request itself failed, after the SDK's retries.
		return false, wrapErr(ctx, err)
	case err != nil:
		return brokenErr(err, acc.events)
	case !acc.stopped:
		return true, wire.Incomplete(fmt.Sprintf("anthropic: stream ended after %d events without message_stop", acc.events), nil)
	}
	if !yield(llm.Chunk{Type: llm.ChunkDone, Response: acc.response()}) {
		return false, wire.ErrStopped
	}
	return false, nil
}

// completeBody is a response body that, once its message is complete, is
// drained before it is closed so that the connection can be reused (the
// stream stops reading at message_stop).
type completeBody struct {
	io.ReadCloser
	complete bool
}

func (b *completeBody) Close() error {
	if b.complete {
		return wire.DrainClose(b.ReadCloser)
	}
	return b.ReadCloser.Close()
}

// wrapBody is a per-request middleware that wraps a successful response's
// body in a completeBody and stores it in *body. Each attempt replaces it,
// so *body is the body that is finally streamed.
func wrapBody(body **completeBody) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(req)
		if err == nil && res != nil && res.StatusCode < 300 && res.Body != nil {
			b := &completeBody{ReadCloser: res.Body}
			res.Body = b
			*body = b
		}
		return res, err
	}
}

// accumulator assembles a message from stream events.
type accumulator struct {
	events  int
	started bool
	stopped bool

	model      string
	stopReason string
	usage      sdk.Usage
	outTokens  int64

	msg    llm.Message
	blocks []block // by index
}

// block is one content block being streamed.
type block struct {
	kind      string // text, thinking, redacted_thinking, tool_use, or another type (ignored)
	part      int    // index in msg.Parts for text and thinking, -1 otherwise
	text      []byte
	signature string
	id, name  string
	closed    bool
}

func (a *accumulator) add(ev *sdk.MessageStreamEventUnion) (llm.Chunk, bool, error) {
	a.events++
	switch ev.Type {
	case "message_start":
		if a.started {
			return llm.Chunk{}, false, a.protocolErr("second message_start")
		}
		a.started = true
		a.model = ev.Message.Model
		a.usage = ev.Message.Usage
		a.outTokens = ev.Message.Usage.OutputTokens
		a.msg.Role = llm.RoleAssistant
		return llm.Chunk{}, false, nil
	case "content_block_start":
		if !a.started {
			return llm.Chunk{}, false, a.protocolErr("content_block_start before message_start")
		}
		idx := int(ev.Index)
		if idx != len(a.blocks) {
			return llm.Chunk{}, false, a.protocolErr(fmt.Sprintf("content block %d started out of order", idx))
		}
		cb := &ev.ContentBlock
		b := block{kind: cb.Type, part: -1}
		switch cb.Type {
		case "text":
			b.text = append(b.text, cb.Text...)
			b.part = len(a.msg.Parts)
			a.msg.Parts = append(a.msg.Parts, llm.Part{Type: llm.PartText})
		case "thinking":
			b.text = append(b.text, cb.Thinking...)
			b.signature = cb.Signature
			b.part = len(a.msg.Parts)
			a.msg.Parts = append(a.msg.Parts, llm.Part{Type: llm.PartReasoning})
		case "redacted_thinking":
			b.part = len(a.msg.Parts)
			a.msg.Parts = append(a.msg.Parts, llm.Part{Type: llm.PartReasoning, Redacted: true, Data: []byte(cb.Data)})
		case "tool_use":
			if cb.ID == "" || cb.Name == "" {
				return llm.Chunk{}, false, a.protocolErr("tool_use block without id or name")
			}
			b.id, b.name = cb.ID, cb.Name
		}
		a.blocks = append(a.blocks, b)
		// Text that arrives in the start event itself is passed on too.
		if cb.Type == "text" && cb.Text != "" {
			return llm.Chunk{Type: llm.ChunkText, Text: cb.Text}, true, nil
		}
		if cb.Type == "thinking" && cb.Thinking != "" {
			return llm.Chunk{Type: llm.ChunkReasoning, Text: cb.Thinking}, true, nil
		}
		return llm.Chunk{}, false, nil
	case "content_block_delta":
		b, err := a.open(ev.Index)
		if err != nil {
			return llm.Chunk{}, false, err
		}
		d := &ev.Delta
		switch d.Type {
		case "text_delta":
			if b.kind != "text" {
				return llm.Chunk{}, false, a.protocolErr("text_delta in a " + b.kind + " block")
			}
			b.text = append(b.text, d.Text...)
			if d.Text == "" {
				return llm.Chunk{}, false, nil
			}
			return llm.Chunk{Type: llm.ChunkText, Text: d.Text}, true, nil
		case "thinking_delta":
			if b.kind != "thinking" {
				return llm.Chunk{}, false, a.protocolErr("thinking_delta in a " + b.kind + " block")
			}
			b.text = append(b.text, d.Thinking...)
			if d.Thinking == "" {
				return llm.Chunk{}, false, nil
			}
			return llm.Chunk{Type: llm.ChunkReasoning, Text: d.Thinking}, true, nil
		case "signature_delta":
			if b.kind != "thinking" {
				return llm.Chunk{}, false, a.protocolErr("signature_delta in a " + b.kind + " block")
			}
			b.signature += d.Signature
		case "input_json_delta":
			if b.kind != "tool_use" {
				return llm.Chunk{}, false, a.protocolErr("input_json_delta in a " + b.kind + " block")
			}
			b.text = append(b.text, d.PartialJSON...)
		}
		// Other deltas (citations) carry nothing this package keeps.
		return llm.Chunk{}, false, nil
	case "content_block_stop":
		b, err := a.open(ev.Index)
		if err != nil {
			return llm.Chunk{}, false, err
		}
		b.closed = true
		switch b.kind {
		case "text":
			a.msg.Parts[b.part].Text = string(b.text)
		case "thinking":
			a.msg.Parts[b.part].Text = string(b.text)
			a.msg.Parts[b.part].Signature = b.signature
		case "tool_use":
			call := llm.ToolCall{ID: b.id, Name: b.name, Args: wire.Args(string(b.text))}
			a.msg.ToolCalls = append(a.msg.ToolCalls, call)
			return llm.Chunk{Type: llm.ChunkToolCall, ToolCall: &call}, true, nil
		}
		return llm.Chunk{}, false, nil
	case "message_delta":
		if !a.started {
			return llm.Chunk{}, false, a.protocolErr("message_delta before message_start")
		}
		if ev.Delta.StopReason != "" {
			a.stopReason = string(ev.Delta.StopReason)
		}
		// Counts in message_delta are cumulative; input counts appear
		// there only on some API versions, so each is taken when present.
		u := &ev.Usage
		a.outTokens = u.OutputTokens
		if u.JSON.InputTokens.Valid() {
			a.usage.InputTokens = u.InputTokens
		}
		if u.JSON.CacheCreationInputTokens.Valid() {
			a.usage.CacheCreationInputTokens = u.CacheCreationInputTokens
		}
		if u.JSON.CacheReadInputTokens.Valid() {
			a.usage.CacheReadInputTokens = u.CacheReadInputTokens
		}
		return llm.Chunk{}, false, nil
	case "message_stop":
		if !a.started {
			return llm.Chunk{}, false, a.protocolErr("message_stop before message_start")
		}
		for i := range a.blocks {
			if !a.blocks[i].closed {
				return llm.Chunk{}, false, a.protocolErr(fmt.Sprintf("message_stop with content block %d still open", i))
			}
		}
		a.stopped = true
		return llm.Chunk{}, false, nil
	}
	// ping is filtered by the SDK; unknown event types are ignored, as the
	// API's versioning policy asks.
	return llm.Chunk{}, false, nil
}

func (a *accumulator) open(index int64) (*block, error) {
	if index < 0 || int(index) >= len(a.blocks) {
		return nil, a.protocolErr(fmt.Sprintf("event for unknown content block %d", index))
	}
	b := &a.blocks[index]
	if b.closed {
		return nil, a.protocolErr(fmt.Sprintf("event for closed content block %d", index))
	}
	return b, nil
}

func (a *accumulator) protocolErr(what string) error {
	return wire.Incomplete(fmt.Sprintf("anthropic: malformed stream at event %d", a.events), errors.New(what))
}

// brokenErr describes an error that ended a stream after it had started,
// and says whether a new request could fare better: after a lost
// connection or a server-side error event, yes; after malformed data, no.
func brokenErr(err error, events int) (retryable bool, _ error) {
	var (
		apiErr *sdk.Error
		synErr *json.SyntaxError
		typErr *json.UnmarshalTypeError
	)
	what := "connection lost"
	retryable = true
	switch {
	case errors.As(err, &apiErr):
		what, err = "error event", &apiError{err: apiErr}
		switch apiErr.Type() {
		case "overloaded_error", "api_error", "rate_limit_error", "timeout_error":
		default:
			retryable = false
		}
	case errors.As(err, &synErr), errors.As(err, &typErr):
		what, retryable = "malformed event data", false
	}
	return retryable, wire.Incomplete(fmt.Sprintf("anthropic: %s after %d events", what, events), err)
}

func (a *accumulator) response() *llm.Response {
	u := a.usage
	return &llm.Response{
		Message: a.msg,
		Usage: llm.Usage{
			// The API's input_tokens excludes cached tokens; llm.Usage
			// counts every input token.
			InputTokens:      int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens),
			OutputTokens:     int(a.outTokens),
			CacheReadTokens:  int(u.CacheReadInputTokens),
			CacheWriteTokens: int(u.CacheCreationInputTokens),
		},
		StopReason: stopReason(a.stopReason),
		Model:      a.model,
	}
}

func stopReason(s string) llm.StopReason {
	switch sdk.StopReason(s) {
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence:
		return llm.StopEnd
	case sdk.StopReasonToolUse:
		return llm.StopToolUse
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		return llm.StopMaxTokens
	case sdk.StopReasonRefusal:
		return llm.StopRefusal
	}
	return llm.StopOther
}
