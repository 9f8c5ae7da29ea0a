package subagents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// HTTPDoer sends HTTP requests; *http.Client is one.
type HTTPDoer interface {
	Do(req *http.Request) (*http.Response, error)
}

// ErrRemote is wrapped by the errors a remote subagent's server answers
// (an HTTP status that is not a success, or an answer that cannot be
// read).
var ErrRemote = errors.New("remote subagent server")

// maxRemoteBody bounds an answer read from a remote server.
const maxRemoteBody = 32 << 20

// remoteAgent is a plain client of the LangGraph API for one remote
// subagent: a task is a thread there, each start or update a run on it.
type remoteAgent struct {
	base, graphID string
	headers       map[string]string
	client        HTTPDoer
	timeout       time.Duration
}

func newRemoteAgent(sa Async, timeout time.Duration) (*remoteAgent, error) {
	if sa.URL == "" || sa.GraphID == "" {
		return nil, errors.New("a remote subagent needs both URL and GraphID")
	}
	if sa.Runnable != nil || sa.SystemPrompt != "" || sa.Model != nil || sa.Tools != nil || sa.Middleware != nil || sa.InterruptOn != nil || sa.AllowedTools != nil {
		return nil, errors.New("a remote subagent is defined by its server: set only Name, Description, URL, GraphID, Headers and Client")
	}
	base, err := validBaseURL(sa.URL)
	if err != nil {
		return nil, err
	}
	client := sa.Client
	if client == nil {
		client = &http.Client{}
	}
	return &remoteAgent{base: base, graphID: sa.GraphID, headers: sa.Headers, client: client, timeout: timeout}, nil
}

// do sends one request with a JSON body (nil for none) and decodes the
// JSON answer into out (nil to ignore it).
func (r *remoteAgent) do(ctx context.Context, method, path string, body, out any) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	res, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxRemoteBody+1))
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if len(data) > maxRemoteBody {
		return fmt.Errorf("%w: %s %s: the answer is larger than %d MiB", ErrRemote, method, path, maxRemoteBody>>20)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fmt.Errorf("%w: %s %s: %s%s", ErrRemote, method, path, res.Status, detail(data))
	}
	if out == nil || res.StatusCode == http.StatusNoContent || res.StatusCode == http.StatusAccepted && len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%w: %s %s: the answer is not the JSON expected: %v", ErrRemote, method, path, err)
	}
	return nil
}

// detail is what an error answer says, shortened.
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
	return ": " + clip(text, 300)
}

func threadPath(tid string) string { return "/threads/" + url.PathEscape(tid) }

func runPath(tid, rid string) string { return threadPath(tid) + "/runs/" + url.PathEscape(rid) }

// start creates a thread and starts a run on it with the task.
func (r *remoteAgent) start(ctx context.Context, description string) (threadID, runID string, err error) {
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	meta := map[string]any{"metadata": map[string]any{"graph_id": r.graphID, "created_by": "async_subagent"}}
	if err := r.do(ctx, http.MethodPost, "/threads", meta, &th); err != nil {
		return "", "", err
	}
	if th.ThreadID == "" {
		return "", "", fmt.Errorf("%w: POST /threads: the answer has no thread_id", ErrRemote)
	}
	rid, err := r.run(ctx, th.ThreadID, description, "")
	if err != nil {
		// Leave no empty thread behind (best effort).
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		r.do(dctx, http.MethodDelete, threadPath(th.ThreadID), nil, nil) //nolint:errcheck // the start's error matters
		cancel()
		return "", "", err
	}
	return th.ThreadID, rid, nil
}

// run starts a run on a thread with a user message.
func (r *remoteAgent) run(ctx context.Context, threadID, message, multitask string) (string, error) {
	body := map[string]any{
		"assistant_id": r.graphID,
		"input":        map[string]any{"messages": []map[string]string{{"role": "user", "content": message}}},
	}
	if multitask != "" {
		body["multitask_strategy"] = multitask
	}
	var rn struct {
		RunID string `json:"run_id"`
	}
	if err := r.do(ctx, http.MethodPost, threadPath(threadID)+"/runs", body, &rn); err != nil {
		return "", err
	}
	if rn.RunID == "" {
		return "", fmt.Errorf("%w: POST /threads/…/runs: the answer has no run_id", ErrRemote)
	}
	return rn.RunID, nil
}

// followUp starts a new run on the task's thread, interrupting the
// current one.
func (r *remoteAgent) followUp(ctx context.Context, threadID, message string) (string, error) {
	return r.run(ctx, threadID, message, "interrupt")
}

// status returns a run's status.
func (r *remoteAgent) status(ctx context.Context, threadID, runID string) (string, error) {
	var rn struct {
		Status string `json:"status"`
	}
	if err := r.do(ctx, http.MethodGet, runPath(threadID, runID), nil, &rn); err != nil {
		return "", err
	}
	if rn.Status == "" {
		return "", fmt.Errorf("%w: GET run: the answer has no status", ErrRemote)
	}
	return rn.Status, nil
}

type remoteThread struct {
	Values *struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	} `json:"values"`
	Error *string `json:"error"`
}

// result returns the text of the last message on the task's thread.
func (r *remoteAgent) result(ctx context.Context, threadID string) (string, error) {
	var th remoteThread
	if err := r.do(ctx, http.MethodGet, threadPath(threadID), nil, &th); err != nil {
		return "", err
	}
	if th.Values == nil || len(th.Values.Messages) == 0 {
		return "(it finished without a message)", nil
	}
	return strings.TrimRight(contentText(th.Values.Messages[len(th.Values.Messages)-1].Content), " \t\n"), nil
}

// failure returns what the server says of a failed run: the __error__ of
// its final values (join), or else the thread's error.
func (r *remoteAgent) failure(ctx context.Context, threadID, runID string) string {
	var final struct {
		Error *struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		} `json:"__error__"`
	}
	if err := r.do(ctx, http.MethodGet, runPath(threadID, runID)+"/join", nil, &final); err == nil && final.Error != nil && final.Error.Message != "" {
		return clip(final.Error.Message, 2000)
	}
	var th remoteThread
	if err := r.do(ctx, http.MethodGet, threadPath(threadID), nil, &th); err == nil && th.Error != nil && *th.Error != "" {
		return clip(*th.Error, 2000)
	}
	return "the remote run failed"
}

// cancel stops a run.
func (r *remoteAgent) cancel(ctx context.Context, threadID, runID string) error {
	return r.do(ctx, http.MethodPost, runPath(threadID, runID)+"/cancel?wait=0&action=interrupt", nil, nil)
}

// contentText reads a LangChain message content: a string, or blocks of
// which the text ones count.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var b strings.Builder
		for _, bl := range blocks {
			if bl.Type == "text" || bl.Type == "" {
				b.WriteString(bl.Text)
			}
		}
		return b.String()
	}
	return string(raw)
}
