package server_test

import (
	"net/http"
	"testing"

	"github.com/deepagents-go/deepagents/llm/replay"
)

// TestAsyncSubagentCalls makes the calls a Python deep agent's async
// subagents make to a remote agent (deepagents/middleware/async_subagents.py):
// launch (threads.create, runs.create with an OpenAI-style message), check
// (runs.get, then threads.get for the values), update (runs.create with
// multitask_strategy interrupt while a run goes on) and cancel (runs.cancel).
func TestAsyncSubagentCalls(t *testing.T) {
	f := newFixture(t, options{model: replay.Inline{}})
	msg := func(script string) map[string]any {
		return map[string]any{"messages": []any{map[string]any{"role": "user", "content": script}}}
	}
	// Launch, a slow task.
	var th, run, got map[string]any
	f.json(http.MethodPost, "/threads", map[string]any{}, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	f.json(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{"assistant_id": "deepagent", "input": msg(`{"turns":[{"content":"researching","delay_ms":60000}]}`)}, http.StatusOK, &run)
	// Check: still running.
	f.json(http.MethodGet, "/threads/"+tid+"/runs/"+run["run_id"].(string), nil, http.StatusOK, &got)
	if s := got["status"]; s != "pending" && s != "running" {
		t.Fatalf("a launched task is %v", s)
	}
	// Update: new instructions interrupt the run.
	var upd map[string]any
	f.json(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{"assistant_id": "deepagent", "input": msg(`{"turns":[{"content":"the answer is 42"}]}`), "multitask_strategy": "interrupt"}, http.StatusOK, &upd)
	f.json(http.MethodGet, "/threads/"+tid+"/runs/"+run["run_id"].(string), nil, http.StatusOK, &got)
	if got["status"] != "interrupted" {
		t.Errorf("the first run after an update: %v", got["status"])
	}
	// Check until done, then read the thread's values.
	waitFor(t, "the updated run", func() bool {
		f.json(http.MethodGet, "/threads/"+tid+"/runs/"+upd["run_id"].(string), nil, http.StatusOK, &got)
		return got["status"] == "success"
	})
	var thread struct {
		Values wireValues `json:"values"`
	}
	f.json(http.MethodGet, "/threads/"+tid, nil, http.StatusOK, &thread)
	msgs := thread.Values.Messages
	if len(msgs) == 0 || msgs[len(msgs)-1].Content != "the answer is 42" {
		t.Errorf("the thread's values: %+v", thread.Values)
	}
	// Cancel a task (wait=false, the SDK's default): 202.
	f.json(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{"assistant_id": "deepagent", "input": msg(`{"turns":[{"content":"slow","delay_ms":60000}]}`)}, http.StatusOK, &run)
	if code, body, _ := f.do(http.MethodPost, "/threads/"+tid+"/runs/"+run["run_id"].(string)+"/cancel", nil); code != http.StatusAccepted {
		t.Errorf("cancel: %d %s", code, body)
	}
	waitFor(t, "the cancelled run", func() bool {
		f.json(http.MethodGet, "/threads/"+tid+"/runs/"+run["run_id"].(string), nil, http.StatusOK, &got)
		return got["status"] == "interrupted"
	})
}
