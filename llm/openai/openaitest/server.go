package openaitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/llm/internal/streamtest"
)

// Turn is one scripted answer to a chat completions request.
type Turn struct {
	// Status, when set to anything but 200, answers with this HTTP status
	// and an API error body instead of a completion.
	Status int
	// RetryAfter is sent as the retry-after header of an error answer.
	RetryAfter string
	// ErrorType and ErrorMessage fill the error body; defaults follow the
	// status.
	ErrorType    string
	ErrorMessage string

	// Reasoning streams reasoning_content deltas first, as vLLM and
	// other compatible servers do.
	Reasoning string
	// Text streams content deltas.
	Text string
	// ToolCalls stream after the text, their arguments in fragments.
	ToolCalls []ToolCall
	// Usage is sent in the final usage chunk when the request asks for it
	// (stream_options.include_usage).
	Usage Usage
	// FinishReason defaults to "tool_calls" when there are tool calls and
	// "stop" otherwise.
	FinishReason string
	// Model defaults to the model of the request.
	Model string
	// Pace, when set, is the pause before each frame after the first:
	// the answer arrives over time, as a real provider's does, for
	// whatever shows it as it streams.
	Pace time.Duration
	// Hold, when set, stops the stream after the frame that carries the
	// word HoldAfter until the channel is closed: a test acts on what has
	// streamed so far with the stream still.
	Hold      <-chan struct{}
	HoldAfter string
}

// ToolCall is a scripted tool call.
type ToolCall struct {
	ID   string // defaults to call_N
	Name string
	// Arguments is the JSON text of the arguments; empty streams none.
	Arguments string
}

// Usage holds token counts in the API's terms: PromptTokens includes the
// CachedTokens.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	CachedTokens     int
}

// Request is a request the server received.
type Request = streamtest.Request

// Server is an httptest server speaking the Chat Completions API. It
// answers each POST to …/chat/completions with the next scripted [Turn]
// and records every request. A request with no turn left gets a 500 error
// marked not to be retried.
type Server struct {
	// URL is the base URL to give the provider; it ends in /v1.
	URL string

	srv *httptest.Server
	// Script holds the turns left to play and the requests received:
	// Add, Remaining and Requests come from it.
	streamtest.Script[Turn]
}

// NewServer starts a server that plays turns in order. Close it when done.
func NewServer(turns ...Turn) *Server {
	s := &Server{}
	s.Add(turns...)
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// Bodies returns the bodies of the chat completions requests received so
// far, in order.
func (s *Server) Bodies() [][]byte {
	var out [][]byte
	for _, r := range s.Requests() {
		if strings.HasSuffix(r.Path, "/chat/completions") {
			out = append(out, r.Body)
		}
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "reading body: "+err.Error(), "")
		return
	}
	s.Log(r, body)

	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		writeError(w, http.StatusNotFound, "invalid_request_error", "no route for "+r.Method+" "+r.URL.Path, "")
		return
	}
	var req struct {
		Model         string `json:"model"`
		Stream        bool   `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "body is not JSON: "+err.Error(), "")
		return
	}

	t, call, ok := s.Take()
	if !ok {
		w.Header().Set("X-Should-Retry", "false")
		writeError(w, http.StatusInternalServerError, "server_error",
			fmt.Sprintf("openaitest: no scripted turn left for request %d", call), "")
		return
	}

	if t.Status != 0 && t.Status != http.StatusOK {
		typ, msg := t.ErrorType, t.ErrorMessage
		if typ == "" {
			typ = errorType(t.Status)
		}
		if msg == "" {
			msg = http.StatusText(t.Status)
		}
		writeError(w, t.Status, typ, msg, t.RetryAfter)
		return
	}
	if !req.Stream {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "openaitest serves streaming requests only", "")
		return
	}
	if t.Model == "" {
		t.Model = req.Model
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for i, ev := range Events(t, fmt.Sprintf("chatcmpl-test%d", call), req.StreamOptions.IncludeUsage) {
		if i > 0 && t.Pace > 0 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(t.Pace):
			}
		}
		if _, err := io.WriteString(w, ev); err != nil {
			return
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		if t.Hold != nil && t.HoldAfter != "" && strings.Contains(ev, t.HoldAfter) {
			select {
			case <-r.Context().Done():
				return
			case <-t.Hold:
			}
		}
	}
}

// Events renders a turn as the "data: …\n\n" frames the API streams for
// it, ending with the usage chunk (when includeUsage) and "data: [DONE]".
// Tests that need to cut or corrupt a stream can start from these.
func Events(t Turn, id string, includeUsage bool) []string {
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	var evs []string
	type m = map[string]any
	chunk := func(delta m, finish any) {
		c := m{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": t.Model,
			"system_fingerprint": "fp_test",
			"choices":            []any{m{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		}
		if includeUsage {
			c["usage"] = nil
		}
		b, _ := json.Marshal(c) // maps of strings and numbers always marshal
		evs = append(evs, "data: "+string(b)+"\n\n")
	}
	chunk(m{"role": "assistant", "content": "", "refusal": nil}, nil)
	for _, piece := range streamtest.Words(t.Reasoning) {
		chunk(m{"reasoning_content": piece}, nil)
	}
	for _, piece := range streamtest.Words(t.Text) {
		chunk(m{"content": piece}, nil)
	}
	for i, c := range t.ToolCalls {
		cid := c.ID
		if cid == "" {
			cid = fmt.Sprintf("call_%s_%d", id, i)
		}
		chunk(m{"tool_calls": []any{m{"index": i, "id": cid, "type": "function",
			"function": m{"name": c.Name, "arguments": ""}}}}, nil)
		for _, frag := range streamtest.Fragments(c.Arguments, 6) {
			chunk(m{"tool_calls": []any{m{"index": i, "function": m{"arguments": frag}}}}, nil)
		}
	}
	finish := t.FinishReason
	if finish == "" {
		finish = "stop"
		if len(t.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	chunk(m{}, finish)
	if includeUsage {
		b, _ := json.Marshal(m{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": t.Model,
			"system_fingerprint": "fp_test", "choices": []any{},
			"usage": m{
				"prompt_tokens":     t.Usage.PromptTokens,
				"completion_tokens": t.Usage.CompletionTokens,
				"total_tokens":      t.Usage.PromptTokens + t.Usage.CompletionTokens,
				"prompt_tokens_details": m{
					"cached_tokens": t.Usage.CachedTokens, "audio_tokens": 0,
				},
				"completion_tokens_details": m{"reasoning_tokens": 0},
			},
		})
		evs = append(evs, "data: "+string(b)+"\n\n")
	}
	evs = append(evs, "data: [DONE]\n\n")
	return evs
}

func errorType(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusNotFound:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	}
	return "server_error"
}

func writeError(w http.ResponseWriter, status int, typ, msg, retryAfter string) {
	b, _ := json.Marshal(map[string]any{
		"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil},
	})
	w.Header().Set("Content-Type", "application/json")
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
