package server_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/server/internal/servertest"
)

// TestBadRequests checks the status codes of requests the reference
// server refuses.
func TestBadRequests(t *testing.T) {
	m := servertest.NewBlockingModel()
	defer close(m.Release)
	f := newFixture(t, servertest.Options{Model: m})
	var th map[string]any
	f.JSON(http.MethodPost, "/threads", map[string]any{"thread_id": "t1"}, http.StatusOK, &th)
	// Statuses and bodies as LangGraph's JavaScript server (langgraph dev,
	// @langchain/langgraph-api 2.0.0) answers them.
	tests := []struct {
		name, method, path string
		body               any
		want               int
		wantBody           string
	}{
		{"malformed JSON", http.MethodPost, "/threads", `{"metadata": `, http.StatusUnprocessableEntity, "Malformed JSON in request body"},
		{"thread exists", http.MethodPost, "/threads", map[string]any{"thread_id": "t1"}, http.StatusConflict, "Thread already exists"},
		{"unknown thread", http.MethodGet, "/threads/nope", nil, http.StatusNotFound, "Thread with ID nope not found"},
		{"unknown thread state", http.MethodGet, "/threads/nope/state", nil, http.StatusNotFound, "Thread with ID nope not found"},
		{"unknown thread history", http.MethodPost, "/threads/nope/history", map[string]any{}, http.StatusNotFound, "Thread with ID nope not found"},
		{"delete unknown thread", http.MethodDelete, "/threads/nope", nil, http.StatusNotFound, "Thread with ID nope not found"},
		{"run on unknown thread", http.MethodPost, "/threads/nope/runs/stream", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("x")}}}, http.StatusNotFound, "Thread with ID nope not found"},
		{"unknown assistant", http.MethodPost, "/threads/t1/runs/stream", map[string]any{"assistant_id": "other"}, http.StatusNotFound, `No assistant found for "other"`},
		{"unknown assistant ID", http.MethodGet, "/assistants/other", nil, http.StatusNotFound, "Assistant not found"},
		{"resume with no interrupt", http.MethodPost, "/threads/t1/runs/wait", map[string]any{"command": map[string]any{"resume": map[string]any{"decisions": []any{map[string]any{"type": "approve"}}}}}, http.StatusBadRequest, "Cannot resume: thread t1 is not waiting for decisions"},
		{"bad message", http.MethodPost, "/threads/t1/runs/stream", map[string]any{"input": map[string]any{"messages": []any{map[string]any{"type": "alien", "content": "x"}}}}, http.StatusUnprocessableEntity, "alien"},
		{"bad stream mode", http.MethodPost, "/threads/t1/runs/stream", map[string]any{"stream_mode": "everything"}, http.StatusUnprocessableEntity, `"path":["stream_mode"]`},
		{"bad durability", http.MethodPost, "/threads/t1/runs/stream", map[string]any{"durability": "eventually"}, http.StatusUnprocessableEntity, `"path":["durability"]`},
		{"wrong type", http.MethodPost, "/threads/search", map[string]any{"limit": "ten"}, http.StatusUnprocessableEntity, `"path":["limit"]`},
		{"unknown run", http.MethodGet, "/threads/t1/runs/nope", nil, http.StatusNotFound, "Run not found"},
		{"cancel unknown run", http.MethodPost, "/threads/t1/runs/nope/cancel", nil, http.StatusNotFound, "Run not found"},
		{"preflight", http.MethodOptions, "/threads/t1/runs/stream", nil, http.StatusNoContent, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, _ := f.Do(tt.method, tt.path, tt.body)
			if code != tt.want || !strings.Contains(string(body), tt.wantBody) {
				t.Errorf("%d %s, want %d %s", code, body, tt.want, tt.wantBody)
			}
		})
	}
	if m.Calls.Load() != 0 {
		t.Errorf("a bad request reached the model (%d calls)", m.Calls.Load())
	}

	// A second run on a busy thread is refused, as the reference does.
	var rn map[string]any
	f.JSON(http.MethodPost, "/threads/t1/runs", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("x")}}}, http.StatusOK, &rn)
	servertest.WaitFor(t, "the model call", func() bool { return m.Calls.Load() == 1 })
	code, body, _ := f.Do(http.MethodPost, "/threads/t1/runs/stream", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("y")}}})
	if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), "already running") {
		t.Errorf("second run: %d %s", code, body)
	}
	var got map[string]any
	f.JSON(http.MethodGet, "/threads/t1", nil, http.StatusOK, &got)
	if got["status"] != "busy" {
		t.Errorf("thread status %v, want busy", got["status"])
	}
	code, body, _ = f.Do(http.MethodPost, "/threads/t1/runs/"+rn["run_id"].(string)+"/cancel?wait=1&action=interrupt", nil)
	if code != http.StatusNoContent {
		t.Errorf("cancel: %d %s", code, body)
	}
	f.JSON(http.MethodGet, "/threads/t1/runs/"+rn["run_id"].(string), nil, http.StatusOK, &got)
	if got["status"] != "interrupted" {
		t.Errorf("cancelled run status %v", got["status"])
	}
}

// TestRejoinStream joins a running run's stream twice: from the start,
// and after the first event it saw (Last-Event-ID).
func TestRejoinStream(t *testing.T) {
	m := servertest.NewBlockingModel()
	f := newFixture(t, servertest.Options{Model: m})
	var th, rn map[string]any
	f.JSON(http.MethodPost, "/threads", nil, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	f.JSON(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{
		"input": map[string]any{"messages": []any{servertest.Human("x")}}, "stream_mode": []string{"values", "messages-tuple"},
	}, http.StatusOK, &rn)
	path := "/threads/" + tid + "/runs/" + rn["run_id"].(string)
	servertest.WaitFor(t, "the model call", func() bool { return m.Calls.Load() == 1 })

	// A joined stream is read as it comes: the run still waits.
	req, _ := http.NewRequest(http.MethodGet, f.Srv.URL+path+"/stream", nil)
	req.Header.Set("Last-Event-ID", "-1")
	res, err := f.Srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	first := readEvents(t, bufio.NewReader(res.Body), 3) // metadata, the input's state, the delta
	if first[0].Name != "metadata" || first[1].Name != "values" || first[2].Name != "messages" {
		t.Fatalf("joined from the start: %v", first)
	}
	// Rejoining after the second event replays what came after it.
	req2, _ := http.NewRequest(http.MethodGet, f.Srv.URL+path+"/stream", nil)
	req2.Header.Set("Last-Event-ID", first[1].ID)
	res2, err := f.Srv.Client().Do(req2)
	if err != nil {
		t.Fatal(err)
	}
	defer res2.Body.Close()
	again := readEvents(t, bufio.NewReader(res2.Body), 1)
	if again[0].ID != first[2].ID || again[0].Name != "messages" {
		t.Errorf("rejoined after %s: %v, want event %s", first[1].ID, again, first[2].ID)
	}
	close(m.Release)
	var final map[string]any
	f.JSON(http.MethodGet, path+"/join", nil, http.StatusOK, &final)
	msgs, _ := final["messages"].([]any)
	if len(msgs) != 2 {
		t.Errorf("join: %v", final)
	}
	// A run that has ended answers an empty stream.
	code, body, _ := f.Do(http.MethodGet, path+"/stream", nil, "Last-Event-ID", "-1")
	if code != http.StatusOK || len(servertest.ParseSSE(t, body)) != 0 {
		t.Errorf("stream of an ended run: %d %s", code, body)
	}
}

// readEvents reads n events from a live stream.
func readEvents(t *testing.T, r *bufio.Reader, n int) []servertest.Event {
	t.Helper()
	var out []servertest.Event
	var cur servertest.Event
	for len(out) < n {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d events: %v", len(out), err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && cur.Name != "":
			out = append(out, cur)
			cur = servertest.Event{}
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.Data = json.RawMessage(strings.TrimPrefix(line, "data: "))
		case strings.HasPrefix(line, "id: "):
			cur.ID = strings.TrimPrefix(line, "id: ")
		}
	}
	return out
}

// TestWaitAndStateless runs with runs/wait on a thread and without one.
func TestWaitAndStateless(t *testing.T) {
	f := newFixture(t, servertest.Options{}, servertest.ReplayTurns("one", "two")...)
	var th, out map[string]any
	f.JSON(http.MethodPost, "/threads", nil, http.StatusOK, &th)
	f.JSON(http.MethodPost, "/threads/"+th["thread_id"].(string)+"/runs/wait", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("x")}}}, http.StatusOK, &out)
	if msgs, _ := out["messages"].([]any); len(msgs) != 2 {
		t.Errorf("wait: %v", out)
	}
	f.JSON(http.MethodPost, "/runs/wait", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("y")}}}, http.StatusOK, &out)
	if msgs, _ := out["messages"].([]any); len(msgs) != 2 {
		t.Errorf("stateless wait: %v", out)
	}
	var list []any
	f.JSON(http.MethodPost, "/threads/search", map[string]any{}, http.StatusOK, &list)
	if len(list) != 1 {
		t.Errorf("a stateless run left its thread: %d threads", len(list))
	}
}
