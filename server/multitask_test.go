package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/deepagents-go/deepagents/server/internal/servertest"
)

// TestMultitask starts a run that waits, then a second run on the same
// thread with each strategy: interrupt cancels the first and keeps its
// steps, rollback cancels it and starts where it started, enqueue waits
// for it, reject refuses.
func TestMultitask(t *testing.T) {
	tests := []struct {
		strategy      string
		prior         bool // the thread has a step before the first run
		firstStatus   string
		keepsFirstMsg bool // the second run's conversation holds the first run's input
	}{
		{"interrupt", false, "interrupted", true},
		{"rollback", false, "interrupted", false},
		{"rollback", true, "interrupted", false},
		{"enqueue", false, "success", true},
	}
	for _, tt := range tests {
		name := tt.strategy
		if tt.prior {
			name += " after earlier steps"
		}
		t.Run(name, func(t *testing.T) {
			m := servertest.NewBlockingModel()
			f := newFixture(t, servertest.Options{Model: m})
			var th, first, second map[string]any
			f.JSON(http.MethodPost, "/threads", nil, http.StatusOK, &th)
			tid := th["thread_id"].(string)
			if tt.prior {
				f.JSON(http.MethodPost, "/threads/"+tid+"/state", map[string]any{"values": map[string]any{"messages": []any{servertest.Human("prior")}}}, http.StatusOK, nil)
			}
			f.JSON(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("first")}}}, http.StatusOK, &first)
			servertest.WaitFor(t, "the first run's model call", func() bool { return m.Calls.Load() == 1 })
			f.JSON(http.MethodPost, "/threads/"+tid+"/runs", map[string]any{
				"input": map[string]any{"messages": []any{servertest.Human("second")}}, "multitask_strategy": tt.strategy,
			}, http.StatusOK, &second)
			if tt.strategy == "enqueue" {
				var got map[string]any
				f.JSON(http.MethodGet, "/threads/"+tid+"/runs/"+second["run_id"].(string), nil, http.StatusOK, &got)
				if got["status"] != "pending" {
					t.Errorf("the enqueued run is %v, want pending", got["status"])
				}
			}
			close(m.Release) // every model call answers from now on
			var out map[string]any
			f.JSON(http.MethodGet, "/threads/"+tid+"/runs/"+second["run_id"].(string)+"/join", nil, http.StatusOK, &out)
			var got map[string]any
			f.JSON(http.MethodGet, "/threads/"+tid+"/runs/"+first["run_id"].(string), nil, http.StatusOK, &got)
			if got["status"] != tt.firstStatus {
				t.Errorf("first run %v, want %s", got["status"], tt.firstStatus)
			}
			b, _ := json.Marshal(out["messages"])
			var msgs []servertest.WireMsg
			json.Unmarshal(b, &msgs)
			hasFirst, hasPrior := false, false
			for _, msg := range msgs {
				hasFirst = hasFirst || msg.ID == "h-first"
				hasPrior = hasPrior || msg.ID == "h-prior"
			}
			if hasPrior != tt.prior {
				t.Errorf("the earlier step kept: %v, want %v", hasPrior, tt.prior)
			}
			if hasFirst != tt.keepsFirstMsg || len(msgs) == 0 || msgs[len(msgs)-1].Content != "workingdone" {
				t.Errorf("second run's conversation %+v (first run's input kept: %v, want %v)", msgs, hasFirst, tt.keepsFirstMsg)
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		f := newFixture(t, servertest.Options{})
		f.JSON(http.MethodPost, "/threads", map[string]any{"thread_id": "t"}, http.StatusOK, nil)
		if code, body, _ := f.Do(http.MethodPost, "/threads/t/runs", map[string]any{"multitask_strategy": "maybe"}); code != http.StatusUnprocessableEntity {
			t.Errorf("unknown strategy: %d %s", code, body)
		}
	})
}
