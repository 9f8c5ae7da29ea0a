package server_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
	"net/http/httptest"
)

// loadCounter is a Saver that counts its Loads.
type loadCounter struct {
	checkpoint.Saver
	loads atomic.Int64
}

func (c *loadCounter) Load(ctx context.Context, threadID, checkpointID string) (*checkpoint.Snapshot, error) {
	c.loads.Add(1)
	return c.Saver.Load(ctx, threadID, checkpointID)
}

// TestBackgroundApprovalsCostNoReads: listing threads that record no
// background task that has not ended reads nothing more for their
// background approvals: a search of n idle threads costs no Load of the
// background middleware's Checkpointer, whatever n is (before, one per
// thread and assistant): only each thread's head is loaded.
func TestBackgroundApprovalsCostNoReads(t *testing.T) {
	counted := &loadCounter{Saver: checkpoint.NewMemorySaver()}
	a, err := deepagents.New(deepagents.Config{Model: replay.New(), Checkpointer: counted,
		AsyncSubagents: []deepagents.AsyncSubagent{{Subagent: deepagents.Subagent{
			Name: "writer", Description: "Writes notes in the background.", SystemPrompt: "You write notes.",
			InterruptOn: map[string]deepagents.InterruptOn{"write_file": {}},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	s, err := server.New(server.Config{Assistants: []server.Assistant{{GraphID: "deepagent", Agent: a}}, Saver: counted})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	f := &fixture{&servertest.Fixture{T: t, Srv: hs}}
	const n = 25
	for range n {
		var th map[string]any
		f.JSON(http.MethodPost, "/threads", map[string]any{}, http.StatusOK, &th)
		f.JSON(http.MethodPost, "/threads/"+th["thread_id"].(string)+"/state", map[string]any{"values": map[string]any{"messages": []any{servertest.Human("prior")}}}, http.StatusOK, nil)
	}
	for _, status := range []string{"", "idle", "interrupted"} {
		counted.loads.Store(0)
		var found []map[string]any
		f.JSON(http.MethodPost, "/threads/search", map[string]any{"status": status, "limit": 1000}, http.StatusOK, &found)
		want := n
		if status == "interrupted" {
			want = 0
		}
		if len(found) != want {
			t.Errorf("search status %q: %d threads, want %d", status, len(found), want)
		}
		// One Load per thread, its head's values; none for approvals.
		if got := counted.loads.Load(); got != n {
			t.Errorf("search status %q of %d threads: %d Loads, want %d", status, n, got, n)
		}
	}
}
