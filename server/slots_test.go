package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
)

// An enqueued run whose thread another process holds waits without a
// worker slot: with one slot, a run on another thread still runs.
func TestWaitingRunHoldsNoSlot(t *testing.T) {
	f := newFixture(t, servertest.Options{MaxRuns: 1}, replay.Turn{Content: "free done"}, replay.Turn{Content: "held done"})
	saver := f.Saver
	ctx := context.Background()
	for _, id := range []string{"held", "free"} {
		f.JSON(http.MethodPost, "/threads", map[string]any{"thread_id": id}, http.StatusOK, nil)
	}
	lease, err := saver.Acquire(ctx, "held", nil) // a CLI run, say
	if err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			lease.Release(ctx, checkpoint.StatusIdle)
		}
	}
	defer release()
	var queued map[string]any
	f.JSON(http.MethodPost, "/threads/held/runs", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("x")}}, "multitask_strategy": "enqueue"}, http.StatusOK, &queued)
	time.Sleep(300 * time.Millisecond) // it finds the thread busy, and waits

	done := make(chan int, 1)
	go func() {
		code, _, _ := f.Do(http.MethodPost, "/threads/free/runs/wait", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("y")}}})
		done <- code
	}()
	select {
	case code := <-done:
		if code != http.StatusOK {
			t.Errorf("the run on the free thread: %d", code)
		}
	case <-time.After(10 * time.Second):
		release()
		<-done
		t.Fatal("the run on the free thread waited for the enqueued one's slot")
	}
	release()
	var out map[string]any
	f.JSON(http.MethodGet, "/threads/held/runs/"+queued["run_id"].(string)+"/join", nil, http.StatusOK, &out)
	var st map[string]any
	f.JSON(http.MethodGet, "/threads/held/runs/"+queued["run_id"].(string), nil, http.StatusOK, &st)
	if st["status"] != "success" {
		t.Errorf("the enqueued run, once the thread was free: %v", st["status"])
	}
}
