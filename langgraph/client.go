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

// CreateThread creates a thread.
func (c *Client) CreateThread(ctx context.Context, q ThreadCreate) (*Thread, error) {
	return c.thread(ctx, http.MethodPost, PathThreads, q)
}

// GetThread returns a thread, its values a json.RawMessage.
func (c *Client) GetThread(ctx context.Context, threadID string) (*Thread, error) {
	return c.thread(ctx, http.MethodGet, c.path(PathThread, threadID), nil)
}

// thread answers a thread, leaving its values as they came.
func (c *Client) thread(ctx context.Context, method, path string, body any) (*Thread, error) {
	var t struct {
		Thread
		Values json.RawMessage `json:"values"` // over Thread's
	}
	if err := c.Do(ctx, method, path, body, &t); err != nil {
		return nil, err
	}
	th := t.Thread
	if len(t.Values) > 0 && string(t.Values) != "null" {
		th.Values = t.Values
	}
	return &th, nil
}

// DeleteThread deletes a thread, cancelling its runs.
func (c *Client) DeleteThread(ctx context.Context, threadID string) error {
	return c.Do(ctx, http.MethodDelete, c.path(PathThread, threadID), nil, nil)
}

// CreateRun starts a run on a thread in the background.
func (c *Client) CreateRun(ctx context.Context, threadID string, q RunCreate) (*Run, error) {
	var rn Run
	if err := c.Do(ctx, http.MethodPost, c.path(PathRuns, threadID), q, &rn); err != nil {
		return nil, err
	}
	return &rn, nil
}

// GetRun returns a run.
func (c *Client) GetRun(ctx context.Context, threadID, runID string) (*Run, error) {
	var rn Run
	if err := c.Do(ctx, http.MethodGet, c.path(PathRun, threadID, runID), nil, &rn); err != nil {
		return nil, err
	}
	return &rn, nil
}

// JoinRun waits for a run to end and returns its final values: a JSON
// object, with a Failure under ErrorKey when the run failed.
func (c *Client) JoinRun(ctx context.Context, threadID, runID string) (json.RawMessage, error) {
	var v json.RawMessage
	if err := c.Do(ctx, http.MethodGet, c.path(PathRunJoin, threadID, runID), nil, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// CancelRun cancels a run, waiting for it to end when wait is set; action
// is CancelInterrupt, CancelRollback, or "" for the server's default.
func (c *Client) CancelRun(ctx context.Context, threadID, runID string, wait bool, action string) error {
	q := "?wait=0"
	if wait {
		q = "?wait=1"
	}
	if action != "" {
		q += "&action=" + url.QueryEscape(action)
	}
	return c.Do(ctx, http.MethodPost, c.path(PathRunCancel, threadID, runID)+q, nil, nil)
}

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
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	doer := c.HTTP
	if doer == nil {
		doer = http.DefaultClient
	}
	res, err := doer.Do(req)
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
