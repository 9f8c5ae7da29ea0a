package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/deepagents-go/deepagents/llm/internal/wire"
)

// userAgent names this client to the server.
const userAgent = "deepagents-go (llm/openai)"

// errorBodyLimit bounds what is read of an error response.
const errorBodyLimit = 64 << 10

// post sends one chat completions request, retrying as [Options] says,
// and returns the response of the attempt that succeeded, its body
// unread. An error response that is not retried becomes an [*APIError].
func (m *Model) post(ctx context.Context, body []byte) (*http.Response, error) {
	for n := 0; ; n++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.endpoint, bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.opts.Provider, err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("User-Agent", userAgent)
		if m.opts.APIKey != "" {
			req.Header.Set("Authorization", "Bearer "+m.opts.APIKey)
		}
		res, retry, wait, err := m.attempts.Round(req, n, m.hc.Do)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, fmt.Errorf("%s: %w", m.opts.Provider, context.Cause(ctx))
		case err != nil && !retry:
			return nil, fmt.Errorf("%s: request failed: %w", m.opts.Provider, err)
		case err == nil && res.StatusCode < 300:
			return res, nil
		case err == nil && !retry:
			return nil, fmt.Errorf("%s: %w", m.opts.Provider, readAPIError(res))
		case err == nil:
			_ = wire.DrainClose(res.Body)
		}
		if err := wire.Sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("%s: %w", m.opts.Provider, err)
		}
	}
}

// APIError is an error response of the server: its HTTP status and what
// its body says. Errors of [Model] wrap it; get it with errors.As.
type APIError struct {
	// StatusCode is the HTTP status of the response.
	StatusCode int
	// Type, Code, Param and Message are the fields of the body's "error"
	// object, where it has one ("invalid_request_error",
	// "context_length_exceeded", ...). Code holds a number as its
	// decimal text.
	Type, Code, Param, Message string
	// RequestID is the x-request-id header, for the provider's support.
	RequestID string
	// Body is the start of the response body, at most 64 KiB.
	Body []byte
}

// Error is the error in a line: status, error type and message.
func (e *APIError) Error() string {
	var b strings.Builder
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, "%d ", e.StatusCode)
	}
	msg := e.Message
	if msg == "" {
		msg = strings.Join(strings.Fields(string(e.Body)), " ")
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
	}
	switch {
	case e.Type != "" && msg != "":
		fmt.Fprintf(&b, "%s: %s", e.Type, msg)
	case msg != "":
		b.WriteString(msg)
	case e.Type != "":
		b.WriteString(e.Type)
	default:
		b.WriteString(http.StatusText(e.StatusCode))
	}
	return b.String()
}

// readAPIError reads and closes the body of an error response.
func readAPIError(res *http.Response) *APIError {
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, errorBodyLimit))
	e := &APIError{StatusCode: res.StatusCode, RequestID: res.Header.Get("X-Request-Id"), Body: body}
	var payload struct {
		Error *errorObject `json:"error"`
	}
	if json.Unmarshal(body, &payload) == nil && payload.Error != nil {
		o := payload.Error
		e.Type, e.Code, e.Param, e.Message = o.Type, scalar(o.Code), scalar(o.Param), o.Message
	}
	return e
}

// errorObject is the "error" object of an error body, in a response or in
// a stream.
type errorObject struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Param   json.RawMessage `json:"param"`
}

// scalar returns a JSON string's value or a number's text; anything else
// (null, absent) is empty.
func scalar(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}
