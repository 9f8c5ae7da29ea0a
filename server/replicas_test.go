package server_test

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
	"github.com/deepagents-go/deepagents/store"
)

// TestReplicasShareRuns starts a run on one replica and reads, joins,
// streams and cancels it through the other.
func TestReplicasShareRuns(t *testing.T) {
	m := servertest.NewBlockingModel()
	rs := newReplicas(t, 2, checkpoint.NewMemorySaver(), store.NewMemoryStore(), func() llm.Model { return m })
	a, b := rs[0], rs[1]
	var th, rn map[string]any
	a.JSON(http.MethodPost, "/threads", nil, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	a.JSON(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("x")}}, "stream_mode": []string{"values", "messages-tuple"}}, http.StatusOK, &rn)
	path := "/threads/" + tid + "/runs/" + rn["run_id"].(string)
	servertest.WaitFor(t, "the model call", func() bool { return m.Calls.Load() == 1 })

	var got map[string]any
	b.JSON(http.MethodGet, path, nil, http.StatusOK, &got)
	if got["status"] != "running" {
		t.Errorf("the run through the other replica: %v", got)
	}
	var list []map[string]any
	b.JSON(http.MethodGet, "/threads/"+tid+"/runs", nil, http.StatusOK, &list)
	if len(list) != 1 || list[0]["run_id"] != rn["run_id"] {
		t.Errorf("runs of the thread through the other replica: %v", list)
	}
	// A second run through the other replica is refused: the thread is
	// busy on the first.
	if code, body, _ := b.Do(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("y")}}}); code != http.StatusUnprocessableEntity {
		t.Errorf("second run through the other replica: %d %s", code, body)
	}
	// Its stream, joined through the other replica, comes as it happens.
	req, _ := http.NewRequest(http.MethodGet, b.Srv.URL+path+"/stream", nil)
	req.Header.Set("Last-Event-ID", "-1")
	res, err := b.Srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	evs := readEvents(t, bufio.NewReader(res.Body), 3)
	if evs[0].Name != "metadata" || evs[2].Name != "messages" {
		t.Errorf("joined through the other replica: %v", evs)
	}
	// Cancelled through the other replica.
	if code, body, _ := b.Do(http.MethodPost, path+"/cancel?wait=1", nil); code != http.StatusNoContent {
		t.Errorf("cancel through the other replica: %d %s", code, body)
	}
	a.JSON(http.MethodGet, path, nil, http.StatusOK, &got)
	if got["status"] != "interrupted" {
		t.Errorf("after the cancel: %v", got)
	}
	b.JSON(http.MethodGet, path, nil, http.StatusOK, &got)
	if got["status"] != "interrupted" {
		t.Errorf("after the cancel, through the other replica: %v", got)
	}
}

// TestInterruptRunOnAnotherReplica starts a run on one replica and a
// second with multitask interrupt on the other, which cancels the first
// there (what a deep agent's async subagent does).
func TestInterruptRunOnAnotherReplica(t *testing.T) {
	m := servertest.NewBlockingModel()
	rs := newReplicas(t, 2, checkpoint.NewMemorySaver(), store.NewMemoryStore(), func() llm.Model { return m })
	a, b := rs[0], rs[1]
	var th, first, second map[string]any
	a.JSON(http.MethodPost, "/threads", nil, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	a.JSON(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("first")}}}, http.StatusOK, &first)
	servertest.WaitFor(t, "the first model call", func() bool { return m.Calls.Load() == 1 })
	b.JSON(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("second")}}, "multitask_strategy": "interrupt"}, http.StatusOK, &second)
	var got map[string]any
	b.JSON(http.MethodGet, "/threads/"+tid+"/runs/"+first["run_id"].(string), nil, http.StatusOK, &got)
	if got["status"] != "interrupted" {
		t.Errorf("the first run: %v", got)
	}
	close(m.Release)
	var out map[string]any
	a.JSON(http.MethodGet, "/threads/"+tid+"/runs/"+second["run_id"].(string)+"/join", nil, http.StatusOK, &out)
	if msgs, _ := out["messages"].([]any); len(msgs) == 0 {
		t.Errorf("the second run, joined through the first replica: %v", out)
	}
}

// TestDeadReplicaRunFails records a run of a replica that stopped beating:
// another replica reports it failed, and the thread can run again.
func TestDeadReplicaRunFails(t *testing.T) {
	rs := foreignRun(t, time.Now().Add(-time.Hour))
	var got map[string]any
	rs[0].JSON(http.MethodGet, "/threads/t/runs/r1", nil, http.StatusOK, &got)
	if got["status"] != "error" {
		t.Errorf("a dead replica's run: %v", got)
	}
	code, body, _ := rs[0].Do(http.MethodGet, "/threads/t/runs/r1/stream", nil)
	if code != http.StatusOK || strings.TrimSpace(string(body)) != "" {
		t.Errorf("its stream: %d %q", code, body)
	}
}

// TestForwardedStreamLost: a client following a run through replica B
// hears an error event when the stream from replica A, running the run,
// breaks before the run ends (A died), as it would of a failed run; it
// had a clean end of stream, which reads as the run's end.
func TestForwardedStreamLost(t *testing.T) {
	m := servertest.NewBlockingModel()
	defer close(m.Release)
	rs := newReplicas(t, 2, checkpoint.NewMemorySaver(), store.NewMemoryStore(), func() llm.Model { return m })
	a, b := rs[0], rs[1]
	var th, rn map[string]any
	a.JSON(http.MethodPost, "/threads", nil, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	a.JSON(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("x")}}, "stream_mode": []string{"values", "messages-tuple"}}, http.StatusOK, &rn)
	servertest.WaitFor(t, "the model call", func() bool { return m.Calls.Load() == 1 })
	req, _ := http.NewRequest(http.MethodGet, b.Srv.URL+"/threads/"+tid+"/runs/"+rn["run_id"].(string)+"/stream", nil)
	req.Header.Set("Last-Event-ID", "-1")
	res, err := b.Srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	readEvents(t, br, 3)
	// A's connections drop, as they do when its process dies.
	a.Srv.CloseClientConnections()
	evs := readEvents(t, br, 1)
	if evs[0].Name != "error" || !strings.Contains(string(evs[0].Data), `"message"`) {
		t.Errorf("after A's stream broke: %v", evs)
	}
	if rest, _ := io.ReadAll(br); strings.TrimSpace(string(rest)) != "" {
		t.Errorf("after the error event: %q", rest)
	}
}

// TestUnreachableReplicaStream: joining the stream of a run whose replica
// cannot be reached (it died a moment ago: its heartbeat is still fresh)
// gives an error event, not an empty stream that reads as the run's end.
func TestUnreachableReplicaStream(t *testing.T) {
	rs := foreignRun(t, time.Now())
	code, body, _ := rs[0].Do(http.MethodGet, "/threads/t/runs/r1/stream", nil)
	if code != http.StatusOK || !strings.Contains(string(body), "event: error\n") || !strings.Contains(string(body), "RunLostError") {
		t.Errorf("its stream: %d %q", code, body)
	}
}
