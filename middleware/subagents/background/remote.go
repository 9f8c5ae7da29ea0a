package background

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/internal/clip"
	"github.com/deepagents-go/deepagents/langgraph"
)

// HTTPDoer sends HTTP requests; *http.Client is one.
type HTTPDoer = langgraph.Doer

// ErrRemote is wrapped by the errors a remote subagent's server answers
// (an HTTP status that is not a success, or an answer that cannot be
// read).
var ErrRemote = errors.New("remote subagent server")

// remoteAgent is a client of the LangGraph API for one remote subagent: a
// task is a thread there, each start or update a run on it.
type remoteAgent struct {
	c       *langgraph.Client
	graphID string
}

func newRemoteAgent(sa Subagent, timeout time.Duration) (*remoteAgent, error) {
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
	return &remoteAgent{c: &langgraph.Client{URL: base, Headers: sa.Headers, HTTP: client, Timeout: timeout}, graphID: sa.GraphID}, nil
}

// remoteErr marks what the server answered as ErrRemote's.
func remoteErr(err error) error {
	var answer *langgraph.Error
	if errors.As(err, &answer) {
		return fmt.Errorf("%w: %w", ErrRemote, err)
	}
	return err
}

// start creates a thread and starts a run on it with the task.
func (r *remoteAgent) start(ctx context.Context, description string) (threadID, runID string, err error) {
	meta, _ := json.Marshal(map[string]any{"graph_id": r.graphID, "created_by": "async_subagent"})
	th, err := r.c.CreateThread(ctx, langgraph.ThreadCreate{Metadata: meta})
	if err != nil {
		return "", "", remoteErr(err)
	}
	if th.ThreadID == "" {
		return "", "", fmt.Errorf("%w: POST /threads: the answer has no thread_id", ErrRemote)
	}
	rid, err := r.run(ctx, th.ThreadID, description, "")
	if err != nil {
		// Leave no empty thread behind (best effort).
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		r.c.DeleteThread(dctx, th.ThreadID) //nolint:errcheck // the start's error matters
		cancel()
		return "", "", err
	}
	return th.ThreadID, rid, nil
}

// run starts a run on a thread with a user message.
func (r *remoteAgent) run(ctx context.Context, threadID, message string, multitask langgraph.MultitaskStrategy) (string, error) {
	msg, _ := json.Marshal(map[string]string{"role": "user", "content": message})
	rn, err := r.c.CreateRun(ctx, threadID, langgraph.RunCreate{
		AssistantID:       r.graphID,
		Input:             &langgraph.Input{Messages: []json.RawMessage{msg}},
		MultitaskStrategy: multitask,
	})
	if err != nil {
		return "", remoteErr(err)
	}
	if rn.RunID == "" {
		return "", fmt.Errorf("%w: POST /threads/…/runs: the answer has no run_id", ErrRemote)
	}
	return rn.RunID, nil
}

// followUp starts a new run on the task's thread, interrupting the
// current one.
func (r *remoteAgent) followUp(ctx context.Context, threadID, message string) (string, error) {
	return r.run(ctx, threadID, message, langgraph.MultitaskInterrupt)
}

// status returns a run's status.
func (r *remoteAgent) status(ctx context.Context, threadID, runID string) (string, error) {
	rn, err := r.c.GetRun(ctx, threadID, runID)
	if err != nil {
		return "", remoteErr(err)
	}
	if rn.Status == "" {
		return "", fmt.Errorf("%w: GET run: the answer has no status", ErrRemote)
	}
	return string(rn.Status), nil
}

// remoteValues is what a remote task's thread holds that it reads: the
// content of its messages.
type remoteValues struct {
	Messages []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// result returns the text of the last message on the task's thread.
func (r *remoteAgent) result(ctx context.Context, threadID string) (string, error) {
	th, err := r.c.GetThread(ctx, threadID)
	if err != nil {
		return "", remoteErr(err)
	}
	raw, _ := th.Values.(json.RawMessage)
	var v remoteValues
	if raw != nil {
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", fmt.Errorf("%w: GET %s: the answer is not the JSON expected: %v", ErrRemote, langgraph.Path(langgraph.PathThread, url.PathEscape(threadID)), err)
		}
	}
	if len(v.Messages) == 0 {
		return "(it finished without a message)", nil
	}
	return strings.TrimRight(contentText(v.Messages[len(v.Messages)-1].Content), " \t\n"), nil
}

// failure returns what the server says of a failed run: the __error__ of
// its final values (join), or else the thread's error.
func (r *remoteAgent) failure(ctx context.Context, threadID, runID string) string {
	if final, err := r.c.JoinRun(ctx, threadID, runID); err == nil {
		if f := langgraph.FailureOf(final); f != nil && f.Message != "" {
			return clip.Text(f.Message, 2000)
		}
	}
	if th, err := r.c.GetThread(ctx, threadID); err == nil && th.Error != nil && *th.Error != "" {
		return clip.Text(*th.Error, 2000)
	}
	return "the remote run failed"
}

// cancel stops a run.
func (r *remoteAgent) cancel(ctx context.Context, threadID, runID string) error {
	return remoteErr(r.c.CancelRun(ctx, threadID, runID, false, langgraph.CancelInterrupt))
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
