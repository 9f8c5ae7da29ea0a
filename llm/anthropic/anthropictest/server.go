package anthropictest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/deepagents-go/deepagents/llm/internal/streamtest"
)

// Turn is one scripted answer to a messages request.
type Turn struct {
	// Status, when set to anything but 200, answers with this HTTP status
	// and an API error body instead of a message (429 and 529 are the
	// usual ones to test retries with).
	Status int
	// RetryAfter is sent as the retry-after header of an error answer.
	RetryAfter string
	// ErrorType and ErrorMessage fill the error body; defaults follow the
	// status.
	ErrorType    string
	ErrorMessage string

	// Thinking, with Signature, streams a thinking block first.
	Thinking  string
	Signature string
	// Text streams a text block, in several deltas.
	Text string
	// ToolCalls stream tool_use blocks after the text, their input in
	// fragments.
	ToolCalls []ToolCall
	// Usage is reported as the API reports it.
	Usage Usage
	// StopReason defaults to "tool_use" when there are tool calls and
	// "end_turn" otherwise.
	StopReason string
	// Model defaults to the model of the request.
	Model string
}

// ToolCall is a scripted tool_use block.
type ToolCall struct {
	ID   string // defaults to toolu_N
	Name string
	// Input is the tool input as JSON text; empty means no input ({}).
	Input string
}

// Usage holds token counts in the API's terms: InputTokens excludes the
// cache reads and writes.
type Usage struct {
	InputTokens              int
	OutputTokens             int
	CacheCreationInputTokens int
	CacheReadInputTokens     int
}

// Request is a request the server received.
type Request = streamtest.Request

// Server is an httptest server speaking the Messages API. It answers each
// POST to /v1/messages with the next scripted [Turn], and records every
// request. A request with no turn left gets a 500 error marked not to be
// retried. POST /v1/messages/count_tokens answers a rough count (a token
// per four bytes of the body) without using a turn.
type Server struct {
	// URL is the base URL to give the provider.
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
	s.URL = s.srv.URL
	return s
}

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// MessageRequests returns the bodies of the messages requests received so
// far (count_tokens requests excluded), in order.
func (s *Server) MessageRequests() [][]byte {
	var out [][]byte
	for _, r := range s.Requests() {
		if isMessages(r.Path) {
			out = append(out, r.Body)
		}
	}
	return out
}

func isMessages(path string) bool {
	return strings.HasSuffix(path, "/messages")
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "reading body: "+err.Error(), "")
		return
	}
	s.Log(r, body)

	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method not allowed", "")
		return
	}
	switch {
	case strings.HasSuffix(r.URL.Path, "/messages/count_tokens"):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"input_tokens":%d}`, len(body)/4+1)
		return
	case !isMessages(r.URL.Path):
		writeError(w, http.StatusNotFound, "not_found_error", "no route for "+r.URL.Path, "")
		return
	}
	if r.Header.Get("Anthropic-Version") == "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "anthropic-version header is required", "")
		return
	}
	if r.Header.Get("X-Api-Key") == "" && r.Header.Get("Authorization") == "" {
		writeError(w, http.StatusUnauthorized, "authentication_error", "x-api-key header is required", "")
		return
	}
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "body is not JSON: "+err.Error(), "")
		return
	}

	t, call, ok := s.Take()
	if !ok {
		w.Header().Set("X-Should-Retry", "false")
		writeError(w, http.StatusInternalServerError, "api_error",
			fmt.Sprintf("anthropictest: no scripted turn left for request %d", call), "")
		return
	}

	if t.Status != 0 && t.Status != http.StatusOK {
		typ, msg := t.ErrorType, t.ErrorMessage
		if typ == "" {
			typ = errorType(t.Status)
		}
		if msg == "" {
			msg = http.StatusText(t.Status)
			if t.Status == 529 {
				msg = "Overloaded"
			}
		}
		writeError(w, t.Status, typ, msg, t.RetryAfter)
		return
	}
	if !req.Stream {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "anthropictest serves streaming requests only", "")
		return
	}
	if t.Model == "" {
		t.Model = req.Model
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Request-Id", fmt.Sprintf("req_test_%d", call))
	w.WriteHeader(http.StatusOK)
	for _, ev := range Events(t, fmt.Sprintf("msg_test_%d", call)) {
		if _, err := io.WriteString(w, ev); err != nil {
			return
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

// Events renders a turn as the server-sent events the API streams for it,
// each a complete "event: …\ndata: …\n\n" frame. Tests that need to cut or
// corrupt a stream can start from these.
func Events(t Turn, id string) []string {
	var evs []string
	add := func(name string, v any) {
		b, _ := json.Marshal(v) // maps of strings and numbers always marshal
		evs = append(evs, "event: "+name+"\ndata: "+string(b)+"\n\n")
	}
	type m = map[string]any
	add("message_start", m{"type": "message_start", "message": m{
		"id": id, "type": "message", "role": "assistant", "model": t.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": m{
			"input_tokens":                t.Usage.InputTokens,
			"cache_creation_input_tokens": t.Usage.CacheCreationInputTokens,
			"cache_read_input_tokens":     t.Usage.CacheReadInputTokens,
			"output_tokens":               1,
		},
	}})
	evs = append(evs, "event: ping\ndata: {\"type\": \"ping\"}\n\n")
	idx := 0
	if t.Thinking != "" || t.Signature != "" {
		add("content_block_start", m{"type": "content_block_start", "index": idx,
			"content_block": m{"type": "thinking", "thinking": "", "signature": ""}})
		for _, piece := range Split(t.Thinking) {
			add("content_block_delta", m{"type": "content_block_delta", "index": idx,
				"delta": m{"type": "thinking_delta", "thinking": piece}})
		}
		add("content_block_delta", m{"type": "content_block_delta", "index": idx,
			"delta": m{"type": "signature_delta", "signature": t.Signature}})
		add("content_block_stop", m{"type": "content_block_stop", "index": idx})
		idx++
	}
	if t.Text != "" {
		add("content_block_start", m{"type": "content_block_start", "index": idx,
			"content_block": m{"type": "text", "text": ""}})
		for _, piece := range Split(t.Text) {
			add("content_block_delta", m{"type": "content_block_delta", "index": idx,
				"delta": m{"type": "text_delta", "text": piece}})
		}
		add("content_block_stop", m{"type": "content_block_stop", "index": idx})
		idx++
	}
	for i, c := range t.ToolCalls {
		cid := c.ID
		if cid == "" {
			cid = fmt.Sprintf("toolu_%s_%d", id, i)
		}
		add("content_block_start", m{"type": "content_block_start", "index": idx,
			"content_block": m{"type": "tool_use", "id": cid, "name": c.Name, "input": m{}}})
		add("content_block_delta", m{"type": "content_block_delta", "index": idx,
			"delta": m{"type": "input_json_delta", "partial_json": ""}})
		for _, frag := range Fragments(c.Input, 7) {
			add("content_block_delta", m{"type": "content_block_delta", "index": idx,
				"delta": m{"type": "input_json_delta", "partial_json": frag}})
		}
		add("content_block_stop", m{"type": "content_block_stop", "index": idx})
		idx++
	}
	stop := t.StopReason
	if stop == "" {
		stop = "end_turn"
		if len(t.ToolCalls) > 0 {
			stop = "tool_use"
		}
	}
	add("message_delta", m{"type": "message_delta",
		"delta": m{"stop_reason": stop, "stop_sequence": nil},
		"usage": m{"output_tokens": t.Usage.OutputTokens}})
	add("message_stop", m{"type": "message_stop"})
	return evs
}

// Split cuts text into deltas of about three words, the way the API streams
// text.
func Split(text string) []string { return streamtest.Words(text) }

// Fragments cuts s into pieces of n bytes, the way the API streams tool
// input JSON (fragments need not end at a token boundary).
func Fragments(s string, n int) []string { return streamtest.Fragments(s, n) }

func errorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func writeError(w http.ResponseWriter, status int, typ, msg, retryAfter string) {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(map[string]any{
		"type":  "error",
		"error": map[string]any{"type": typ, "message": msg},
	})
	w.Header().Set("Content-Type", "application/json")
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
