package langgraph

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/internal/clip"
)

// Doer sends HTTP requests; *http.Client is one.
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// Client calls a LangGraph API server: the calls of a program that starts
// runs on another server and follows them (remote background subagents,
// replicas cancelling each other's runs). Its methods are safe for
// concurrent use.
type Client struct {
	// URL is the server's base URL (http(s)://host[:port][/path]),
	// without a trailing slash.
	URL string
	// Headers are set on every request: the key (HeaderAPIKey), say.
	Headers map[string]string
	// HTTP sends the requests; nil means http.DefaultClient.
	HTTP Doer
	// Timeout bounds each request; zero means only the context does.
	Timeout time.Duration
}

// MaxAnswer bounds an answer a Client reads.
const MaxAnswer = 32 << 20

// Error is an answer a Client cannot use: an HTTP status that is not a
// success, an answer larger than MaxAnswer, or one that is not the JSON
// expected. Errors of the connection are not Errors.
type Error struct {
	Method, Path string // the request's; Path with its query
	// StatusCode is the answer's HTTP status (a success when its body
	// could not be used).
	StatusCode int
	// Message says what is wrong: the status and what the server said of
	// it, or why the answer could not be read.
	Message string
}

// Error implements error: the request, then what is wrong.
func (e *Error) Error() string { return e.Method + " " + e.Path + ": " + e.Message }

// path fills pattern with ids escaped.
func (c *Client) path(pattern string, ids ...string) string {
	for i, id := range ids {
		ids[i] = url.PathEscape(id)
	}
	return Path(pattern, ids...)
}

// Do sends one request, with body encoded as JSON (nil for none), to path
// (with its query) under the client's URL, and decodes the JSON answer
// into out (nil to ignore it). An answer that is not a success, or that
// does not decode, is an *Error; an empty 202 or a 204 decodes as
// nothing.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	res, err := c.send(ctx, method, path, body, "application/json")
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, MaxAnswer+1))
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	fail := func(msg string) error {
		return &Error{Method: method, Path: path, StatusCode: res.StatusCode, Message: msg}
	}
	if len(data) > MaxAnswer {
		return fail(fmt.Sprintf("the answer is larger than %d MiB", MaxAnswer>>20))
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fail(res.Status + detail(data))
	}
	if out == nil || res.StatusCode == http.StatusNoContent || res.StatusCode == http.StatusAccepted && len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fail(fmt.Sprintf("the answer is not the JSON expected: %v", err))
	}
	return nil
}

// send sends one request, with body encoded as JSON (nil for none), to
// path under the client's URL, accepting accept, with the client's
// headers and then hdr (name, value, ...); the caller closes the answer's
// body.
func (c *Client) send(ctx context.Context, method, path string, body any, accept string, hdr ...string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encoding the body: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	doer := c.HTTP
	if doer == nil {
		doer = http.DefaultClient
	}
	return doer.Do(req)
}

// detail is what an error answer says, shortened: LangGraph's servers put
// it under detail (Python), message or error, or answer it as text
// (JavaScript).
func detail(data []byte) string {
	var v struct {
		Detail  any    `json:"detail"`
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	text := ""
	if json.Unmarshal(data, &v) == nil {
		switch {
		case v.Detail != nil:
			text = fmt.Sprint(v.Detail)
		case v.Message != "":
			text = v.Message
		case v.Error != "":
			text = v.Error
		}
	}
	if text == "" {
		text = strings.TrimSpace(string(data))
	}
	if text == "" {
		return ""
	}
	return ": " + clip.Text(text, 300)
}
