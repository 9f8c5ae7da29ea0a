package server_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/server"
	"github.com/deepagents-go/deepagents/store"
)

// replica is one server of several on one saver and store.
type replica struct {
	*fixture
	s  *server.Server
	st store.Store // the store the replicas share
}

// newReplicas starts n servers sharing a saver and a store, each with an
// agent on model.
func newReplicas(t *testing.T, n int, saver checkpoint.Saver, st store.Store, model func() llm.Model) []*replica {
	t.Helper()
	var out []*replica
	for range n {
		a, err := deepagents.New(deepagents.Config{Model: model(), Checkpointer: saver})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewUnstartedServer(nil)
		url := "http://" + hs.Listener.Addr().String()
		s, err := server.New(server.Config{Assistants: []server.Assistant{{GraphID: "deepagent", Agent: a}}, Saver: saver, Store: st, URL: url})
		if err != nil {
			t.Fatal(err)
		}
		hs.Config.Handler = s
		hs.Start()
		r := &replica{fixture: &fixture{t: t, srv: hs}, s: s, st: st}
		t.Cleanup(func() {
			hs.CloseClientConnections()
			s.Close()
			hs.Close()
		})
		out = append(out, r)
	}
	return out
}

// TestReplicasShareRuns starts a run on one replica and reads, joins,
// streams and cancels it through the other.
func TestReplicasShareRuns(t *testing.T) {
	m := newBlockingModel()
	rs := newReplicas(t, 2, checkpoint.NewMemorySaver(), store.NewMemoryStore(), func() llm.Model { return m })
	a, b := rs[0], rs[1]
	var th, rn map[string]any
	a.json(http.MethodPost, "/threads", nil, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	a.json(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{"input": map[string]any{"messages": []any{human("x")}}, "stream_mode": []string{"values", "messages-tuple"}}, http.StatusOK, &rn)
	path := "/threads/" + tid + "/runs/" + rn["run_id"].(string)
	waitFor(t, "the model call", func() bool { return m.calls.Load() == 1 })

	var got map[string]any
	b.json(http.MethodGet, path, nil, http.StatusOK, &got)
	if got["status"] != "running" {
		t.Errorf("the run through the other replica: %v", got)
	}
	var list []map[string]any
	b.json(http.MethodGet, "/threads/"+tid+"/runs", nil, http.StatusOK, &list)
	if len(list) != 1 || list[0]["run_id"] != rn["run_id"] {
		t.Errorf("runs of the thread through the other replica: %v", list)
	}
	// A second run through the other replica is refused: the thread is
	// busy on the first.
	if code, body, _ := b.do(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{"input": map[string]any{"messages": []any{human("y")}}}); code != http.StatusUnprocessableEntity {
		t.Errorf("second run through the other replica: %d %s", code, body)
	}
	// Its stream, joined through the other replica, comes as it happens.
	req, _ := http.NewRequest(http.MethodGet, b.srv.URL+path+"/stream", nil)
	req.Header.Set("Last-Event-ID", "-1")
	res, err := b.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	evs := readEvents(t, bufio.NewReader(res.Body), 3)
	if evs[0].Name != "metadata" || evs[2].Name != "messages" {
		t.Errorf("joined through the other replica: %v", evs)
	}
	// Cancelled through the other replica.
	if code, body, _ := b.do(http.MethodPost, path+"/cancel?wait=1", nil); code != http.StatusNoContent {
		t.Errorf("cancel through the other replica: %d %s", code, body)
	}
	a.json(http.MethodGet, path, nil, http.StatusOK, &got)
	if got["status"] != "interrupted" {
		t.Errorf("after the cancel: %v", got)
	}
	b.json(http.MethodGet, path, nil, http.StatusOK, &got)
	if got["status"] != "interrupted" {
		t.Errorf("after the cancel, through the other replica: %v", got)
	}
}

// TestInterruptRunOnAnotherReplica starts a run on one replica and a
// second with multitask interrupt on the other, which cancels the first
// there (what a deep agent's async subagent does).
func TestInterruptRunOnAnotherReplica(t *testing.T) {
	m := newBlockingModel()
	rs := newReplicas(t, 2, checkpoint.NewMemorySaver(), store.NewMemoryStore(), func() llm.Model { return m })
	a, b := rs[0], rs[1]
	var th, first, second map[string]any
	a.json(http.MethodPost, "/threads", nil, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	a.json(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{"input": map[string]any{"messages": []any{human("first")}}}, http.StatusOK, &first)
	waitFor(t, "the first model call", func() bool { return m.calls.Load() == 1 })
	b.json(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{"input": map[string]any{"messages": []any{human("second")}}, "multitask_strategy": "interrupt"}, http.StatusOK, &second)
	var got map[string]any
	b.json(http.MethodGet, "/threads/"+tid+"/runs/"+first["run_id"].(string), nil, http.StatusOK, &got)
	if got["status"] != "interrupted" {
		t.Errorf("the first run: %v", got)
	}
	close(m.release)
	var out map[string]any
	a.json(http.MethodGet, "/threads/"+tid+"/runs/"+second["run_id"].(string)+"/join", nil, http.StatusOK, &out)
	if msgs, _ := out["messages"].([]any); len(msgs) == 0 {
		t.Errorf("the second run, joined through the first replica: %v", out)
	}
}

// foreignRun starts a replica beside the record of another, "gone" at
// 127.0.0.1:1, last seen at seen, running r1 on thread t (which exists).
func foreignRun(t *testing.T, seen time.Time) []*replica {
	t.Helper()
	saver, st := checkpoint.NewMemorySaver(), store.NewMemoryStore()
	rs := newReplicas(t, 1, saver, st, func() llm.Model { return newBlockingModel() })
	ctx := context.Background()
	lease, err := saver.Acquire(ctx, "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	lease.Release(ctx, checkpoint.StatusIdle)
	at := seen.UTC().Format(time.RFC3339Nano)
	st.Put(ctx, []string{"deepagents", "server", "replicas"}, "gone", map[string]any{"url": "http://127.0.0.1:1", "seen": at})
	st.Put(ctx, []string{"deepagents", "server", "runs"}, "r1", map[string]any{"thread_id": "t", "status": "running", "replica": "gone", "created_at": at, "updated_at": at})
	return rs
}

// TestDeadReplicaRunFails records a run of a replica that stopped beating:
// another replica reports it failed, and the thread can run again.
func TestDeadReplicaRunFails(t *testing.T) {
	rs := foreignRun(t, time.Now().Add(-time.Hour))
	var got map[string]any
	rs[0].json(http.MethodGet, "/threads/t/runs/r1", nil, http.StatusOK, &got)
	if got["status"] != "error" {
		t.Errorf("a dead replica's run: %v", got)
	}
	code, body, _ := rs[0].do(http.MethodGet, "/threads/t/runs/r1/stream", nil)
	if code != http.StatusOK || strings.TrimSpace(string(body)) != "" {
		t.Errorf("its stream: %d %q", code, body)
	}
}

// TestForwardedStreamLost: a client following a run through replica B
// hears an error event when the stream from replica A, running the run,
// breaks before the run ends (A died), as it would of a failed run; it
// had a clean end of stream, which reads as the run's end.
func TestForwardedStreamLost(t *testing.T) {
	m := newBlockingModel()
	defer close(m.release)
	rs := newReplicas(t, 2, checkpoint.NewMemorySaver(), store.NewMemoryStore(), func() llm.Model { return m })
	a, b := rs[0], rs[1]
	var th, rn map[string]any
	a.json(http.MethodPost, "/threads", nil, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	a.json(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{"input": map[string]any{"messages": []any{human("x")}}, "stream_mode": []string{"values", "messages-tuple"}}, http.StatusOK, &rn)
	waitFor(t, "the model call", func() bool { return m.calls.Load() == 1 })
	req, _ := http.NewRequest(http.MethodGet, b.srv.URL+"/threads/"+tid+"/runs/"+rn["run_id"].(string)+"/stream", nil)
	req.Header.Set("Last-Event-ID", "-1")
	res, err := b.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	readEvents(t, br, 3)
	// A's connections drop, as they do when its process dies.
	a.srv.CloseClientConnections()
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
	code, body, _ := rs[0].do(http.MethodGet, "/threads/t/runs/r1/stream", nil)
	if code != http.StatusOK || !strings.Contains(string(body), "event: error\n") || !strings.Contains(string(body), "RunLostError") {
		t.Errorf("its stream: %d %q", code, body)
	}
}
