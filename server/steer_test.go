package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/steer"
	"github.com/deepagents-go/deepagents/server"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/tool"
)

// multitask_strategy steer: a run created on a thread whose run works
// hands its messages to that run, which has them at its very next model
// request (asserted on the request), and the answer is that run; on an
// idle thread it is a run as any; bad input is refused.
func TestMultitaskSteer(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	gate, err := tool.New("gate", "waits", func(ctx context.Context, _ struct{}) (string, error) {
		close(entered)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "opened", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{{Name: "gate", Args: json.RawMessage(`{}`)}}},
		replay.Turn{Content: "steered"},
		replay.Turn{Content: "a new run"},
	).Record()
	saver := checkpoint.NewMemorySaver()
	a, err := deepagents.New(deepagents.Config{Model: m, Checkpointer: saver, Store: store.NewMemoryStore(), Tools: []tool.Tool{gate}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(server.Config{Assistants: []server.Assistant{{GraphID: "deepagent", Agent: a}}, Saver: saver})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.CloseClientConnections(); s.Close(); hs.Close() })
	f := &fixture{&servertest.Fixture{T: t, Srv: hs, Saver: saver}}

	f.JSON(http.MethodPost, "/threads", map[string]any{"thread_id": "t"}, http.StatusOK, nil)
	var first, second map[string]any
	f.JSON(http.MethodPost, "/threads/t/runs", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("open the gate")}}}, http.StatusOK, &first)
	<-entered
	for _, bad := range []map[string]any{
		{"multitask_strategy": "steer"},
		{"multitask_strategy": "steer", "input": map[string]any{"messages": []any{map[string]any{"type": "ai", "content": "x"}}}},
		{"multitask_strategy": "steer", "command": map[string]any{"goto": "x"}},
	} {
		if code, body, _ := f.Do(http.MethodPost, "/threads/t/runs", bad); code != http.StatusUnprocessableEntity {
			t.Errorf("%v: %d %s, want 422", bad, code, body)
		}
	}
	f.JSON(http.MethodPost, "/threads/t/runs", map[string]any{
		"input": map[string]any{"messages": []any{servertest.Human("STEERMARK use the side door")}}, "multitask_strategy": "steer",
	}, http.StatusOK, &second)
	if second["run_id"] != first["run_id"] {
		t.Errorf("the steering answered run %v, want the working run %v", second["run_id"], first["run_id"])
	}
	close(release)
	f.JSON(http.MethodGet, "/threads/t/runs/"+first["run_id"].(string)+"/join", nil, http.StatusOK, nil)
	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	last := reqs[1].Request.Messages[len(reqs[1].Request.Messages)-1]
	if last.Role != llm.RoleUser || last.Text() != steer.Lead+"STEERMARK use the side door" {
		t.Errorf("the request after the gate ends with %+v, want the steering message", last)
	}
	// The thread is idle now: steer starts a run as any.
	var third map[string]any
	f.JSON(http.MethodPost, "/threads/t/runs/wait", map[string]any{
		"input": map[string]any{"messages": []any{servertest.Human("again")}}, "multitask_strategy": "steer",
	}, http.StatusOK, &third)
	b, _ := json.Marshal(third)
	if !strings.Contains(string(b), "a new run") {
		t.Errorf("steer on an idle thread: %s, want a run's answer", b)
	}
}
