// These tests come from a review of the server's concurrency: each failed
// before its fix.
package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
	"github.com/deepagents-go/deepagents/store"
)

func statusOf(f *fixture, path string) string {
	var got map[string]any
	f.JSON(http.MethodGet, path, nil, http.StatusOK, &got)
	s, _ := got["status"].(string)
	return s
}

// Enqueued runs of one thread on two replicas take turns rather than each
// waiting for the other.
func TestEnqueueOnTwoReplicasTakesTurns(t *testing.T) {
	m := servertest.NewBlockingModel()
	rs := newReplicas(t, 2, checkpoint.NewMemorySaver(), store.NewMemoryStore(), func() llm.Model { return m })
	a, b := rs[0], rs[1]
	var th, r1, x, y map[string]any
	a.JSON(http.MethodPost, "/threads", nil, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	runs := "/threads/" + tid + "/runs"
	a.JSON(http.MethodPost, runs, map[string]any{"input": map[string]any{"messages": []any{servertest.Human("r")}}}, http.StatusOK, &r1)
	servertest.WaitFor(t, "first model call", func() bool { return m.Calls.Load() == 1 })
	a.JSON(http.MethodPost, runs, map[string]any{"input": map[string]any{"messages": []any{servertest.Human("x")}}, "multitask_strategy": "enqueue"}, http.StatusOK, &x)
	b.JSON(http.MethodPost, runs, map[string]any{"input": map[string]any{"messages": []any{servertest.Human("y")}}, "multitask_strategy": "enqueue"}, http.StatusOK, &y)
	time.Sleep(300 * time.Millisecond)
	close(m.Release)
	px, py := runs+"/"+x["run_id"].(string), runs+"/"+y["run_id"].(string)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if sx, sy := statusOf(a.fixture, px), statusOf(b.fixture, py); finalS(sx) && finalS(sy) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("deadlock: after 5s x=%s (replica a) y=%s (replica b)", statusOf(a.fixture, px), statusOf(b.fixture, py))
}

func finalS(s string) bool { return s != "pending" && s != "running" }

// A client that gives up on a forwarded join leaves the run as it is: it
// is not marked failed, and can still be cancelled through either replica.
func TestForwardedClientLeavingKeepsRunAlive(t *testing.T) {
	m := servertest.NewBlockingModel()
	defer close(m.Release)
	rs := newReplicas(t, 2, checkpoint.NewMemorySaver(), store.NewMemoryStore(), func() llm.Model { return m })
	a, b := rs[0], rs[1]
	var th, rn map[string]any
	a.JSON(http.MethodPost, "/threads", nil, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	a.JSON(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("x")}}}, http.StatusOK, &rn)
	path := "/threads/" + tid + "/runs/" + rn["run_id"].(string)
	servertest.WaitFor(t, "model call", func() bool { return m.Calls.Load() == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.Srv.URL+path+"/join", nil)
	if res, err := b.Srv.Client().Do(req); err == nil {
		res.Body.Close()
	}
	time.Sleep(200 * time.Millisecond)
	// The client's leaving did not fail the run: both replicas see it
	// running, and a cancel through the other replica reaches it.
	if sa, sb := statusOf(a.fixture, path), statusOf(b.fixture, path); sa != "running" || sb != "running" {
		t.Errorf("after the client left: owner says %q, the other replica %q", sa, sb)
	}
	b.Do(http.MethodPost, path+"/cancel", nil)
	servertest.WaitFor(t, "the cancel through the other replica", func() bool { return statusOf(a.fixture, path) == "interrupted" })
}

// A run that admit drops (here: it gives up cancelling a slow replica's
// run) releases what waits for it: the DELETE of its thread returns
// instead of hanging.
func TestDroppedRunReleasesItsWaiters(t *testing.T) {
	saver, st := checkpoint.NewMemorySaver(), store.NewMemoryStore()
	m := servertest.NewBlockingModel()
	close(m.Release)
	rs := newReplicas(t, 1, saver, st, func() llm.Model { return m })
	a := rs[0]
	got := make(chan struct{}, 1)
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- struct{}{}
		<-r.Context().Done() // a replica slow to cancel
	}))
	defer fake.Close()
	ctx := context.Background()
	lease, err := saver.Acquire(ctx, "t", nil) // the remote run holds the thread
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	st.Put(ctx, []string{"deepagents", "server", "replicas"}, "fake", map[string]any{"url": fake.URL, "seen": now})
	st.Put(ctx, []string{"deepagents", "server", "runs"}, "r1", map[string]any{"thread_id": "t", "status": "running", "replica": "fake", "created_at": now, "updated_at": now})

	// A: interrupt, whose client gives up while the remote cancel hangs.
	actx, acancel := context.WithTimeout(ctx, 700*time.Millisecond)
	defer acancel()
	go func() {
		req, _ := http.NewRequestWithContext(actx, http.MethodPost, a.Srv.URL+"/threads/t/runs", strings.NewReader(`{"input":{"messages":[{"type":"human","content":"a"}]},"multitask_strategy":"interrupt"}`))
		req.Header.Set("Content-Type", "application/json")
		if res, err := a.Srv.Client().Do(req); err == nil {
			res.Body.Close()
		}
	}()
	<-got // A has claimed the thread and is in cancelRemote
	var b map[string]any
	a.JSON(http.MethodPost, "/threads/t/runs", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("b")}}, "multitask_strategy": "enqueue"}, http.StatusOK, &b)
	// DELETE during the window, served in-process so that the test can end.
	delDone := make(chan struct{})
	go func() {
		req := httptest.NewRequest(http.MethodDelete, "/threads/t", nil)
		req.Host = "localhost" // not httptest's example.com, which the server does not answer to
		rs[0].s.ServeHTTP(httptest.NewRecorder(), req)
		close(delDone)
	}()
	<-actx.Done()
	time.Sleep(200 * time.Millisecond)
	// The remote run is over and the thread free: B should run now.
	st.Delete(ctx, []string{"deepagents", "server", "runs"}, "r1")
	lease.Release(ctx, checkpoint.StatusIdle)
	time.Sleep(2 * time.Second)
	s := statusOf(a.fixture, "/threads/t/runs/"+b["run_id"].(string))
	select {
	case <-delDone:
	default:
		t.Errorf("DELETE /threads/t still blocked 2s after the dropped run's request ended")
	}
	// The DELETE cancelled every run of the thread, the enqueued one too.
	if s != "interrupted" {
		t.Errorf("the enqueued run is %q after the thread's deletion", s)
	}
}

// DELETE of a thread cancels its runs, enqueued ones included, so none
// brings the deleted thread back.
func TestDeleteThreadCancelsEnqueuedRuns(t *testing.T) {
	m := servertest.NewBlockingModel()
	f := newFixture(t, servertest.Options{Model: m})
	var th, r1, x map[string]any
	f.JSON(http.MethodPost, "/threads", nil, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	runs := "/threads/" + tid + "/runs"
	f.JSON(http.MethodPost, runs, map[string]any{"input": map[string]any{"messages": []any{servertest.Human("r")}}}, http.StatusOK, &r1)
	servertest.WaitFor(t, "model call", func() bool { return m.Calls.Load() == 1 })
	f.JSON(http.MethodPost, runs, map[string]any{"input": map[string]any{"messages": []any{servertest.Human("x")}}, "multitask_strategy": "enqueue"}, http.StatusOK, &x)
	code, body, _ := f.Do(http.MethodDelete, "/threads/"+tid, nil)
	t.Logf("delete: %d %s", code, body)
	close(m.Release)
	time.Sleep(500 * time.Millisecond)
	var xs map[string]any
	f.JSON(http.MethodGet, runs+"/"+x["run_id"].(string), nil, 200, &xs)
	t.Logf("x: %v", xs["status"])
	if code, body, _ := f.Do(http.MethodGet, "/threads/"+tid, nil); code != http.StatusNotFound {
		t.Errorf("thread after DELETE: %d %s", code, body)
	}
}
