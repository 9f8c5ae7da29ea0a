package server_test

import (
	"net/http"
	"testing"

	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
)

// TestAsyncSubagentCalls makes the calls a Python deep agent's async
// subagents make to a remote agent (deepagents/middleware/async_subagents.py):
// launch (threads.create, runs.create with an OpenAI-style message), check
// (runs.get, then threads.get for the values), update (runs.create with
// multitask_strategy interrupt while a run goes on) and cancel (runs.cancel).
func TestAsyncSubagentCalls(t *testing.T) {
	f := newFixture(t, servertest.Options{Model: replay.Inline{}})
	msg := func(script string) map[string]any {
		return map[string]any{"messages": []any{map[string]any{"role": "user", "content": script}}}
	}
	// Launch, a slow task.
	var th, run, got map[string]any
	f.JSON(http.MethodPost, "/threads", map[string]any{}, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	f.JSON(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{"assistant_id": "deepagent", "input": msg(`{"turns":[{"content":"researching","delay_ms":60000}]}`)}, http.StatusOK, &run)
	// Check: still running.
	f.JSON(http.MethodGet, "/threads/"+tid+"/runs/"+run["run_id"].(string), nil, http.StatusOK, &got)
	if s := got["status"]; s != "pending" && s != "running" {
		t.Fatalf("a launched task is %v", s)
	}
	// Update: new instructions interrupt the run.
	var upd map[string]any
	f.JSON(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{"assistant_id": "deepagent", "input": msg(`{"turns":[{"content":"the answer is 42"}]}`), "multitask_strategy": "interrupt"}, http.StatusOK, &upd)
	f.JSON(http.MethodGet, "/threads/"+tid+"/runs/"+run["run_id"].(string), nil, http.StatusOK, &got)
	if got["status"] != "interrupted" {
		t.Errorf("the first run after an update: %v", got["status"])
	}
	// Check until done, then read the thread's values.
	servertest.WaitFor(t, "the updated run", func() bool {
		f.JSON(http.MethodGet, "/threads/"+tid+"/runs/"+upd["run_id"].(string), nil, http.StatusOK, &got)
		return got["status"] == "success"
	})
	var thread struct {
		Values servertest.WireValues `json:"values"`
	}
	f.JSON(http.MethodGet, "/threads/"+tid, nil, http.StatusOK, &thread)
	msgs := thread.Values.Messages
	if len(msgs) == 0 || msgs[len(msgs)-1].Content != "the answer is 42" {
		t.Errorf("the thread's values: %+v", thread.Values)
	}
	// Cancel a task (wait=false, the SDK's default): 202.
	f.JSON(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{"assistant_id": "deepagent", "input": msg(`{"turns":[{"content":"slow","delay_ms":60000}]}`)}, http.StatusOK, &run)
	if code, body, _ := f.Do(http.MethodPost, "/threads/"+tid+"/runs/"+run["run_id"].(string)+"/cancel", nil); code != http.StatusAccepted {
		t.Errorf("cancel: %d %s", code, body)
	}
	servertest.WaitFor(t, "the cancelled run", func() bool {
		f.JSON(http.MethodGet, "/threads/"+tid+"/runs/"+run["run_id"].(string), nil, http.StatusOK, &got)
		return got["status"] == "interrupted"
	})
}
