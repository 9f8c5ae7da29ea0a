package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
)

// TestPatchAndCopyThread sets metadata on a thread after its creation,
// finds it by that metadata, and copies it.
func TestPatchAndCopyThread(t *testing.T) {
	f := newFixture(t, servertest.Options{}, replay.Turn{Content: "hello"})
	var th, out map[string]any
	f.JSON(http.MethodPost, "/threads", map[string]any{"metadata": map[string]any{"owner": "ann"}}, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	f.JSON(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("hi")}}}, http.StatusOK, nil)
	f.JSON(http.MethodPatch, "/threads/"+tid, map[string]any{"metadata": map[string]any{"title": "Greetings"}}, http.StatusOK, &out)
	md, _ := out["metadata"].(map[string]any)
	if md["owner"] != "ann" || md["title"] != "Greetings" {
		t.Errorf("patched metadata %v", md)
	}
	var found []map[string]any
	f.JSON(http.MethodPost, "/threads/search", map[string]any{"metadata": map[string]any{"title": "Greetings"}}, http.StatusOK, &found)
	if len(found) != 1 || found[0]["thread_id"] != tid {
		t.Errorf("search by patched metadata: %v", found)
	}
	if code, _, _ := f.Do(http.MethodPatch, "/threads/nope", map[string]any{"metadata": map[string]any{}}); code != http.StatusNotFound {
		t.Errorf("patch of an unknown thread: %d", code)
	}

	var cp struct {
		ThreadID string                `json:"thread_id"`
		Metadata map[string]any        `json:"metadata"`
		Status   string                `json:"status"`
		Values   servertest.WireValues `json:"values"`
	}
	f.JSON(http.MethodPost, "/threads/"+tid+"/copy", nil, http.StatusOK, &cp)
	if cp.ThreadID == tid || cp.Status != "idle" || cp.Metadata["title"] != "Greetings" || len(cp.Values.Messages) != 2 || cp.Values.Messages[1].Content != "hello" {
		t.Errorf("copy %+v", cp)
	}
}

// TestCreateAssistant creates an assistant of the served graph and runs it.
func TestCreateAssistant(t *testing.T) {
	f := newFixture(t, servertest.Options{}, replay.Turn{Content: "hello"})
	var a map[string]any
	f.JSON(http.MethodPost, "/assistants", map[string]any{"graph_id": "deepagent", "name": "Support", "metadata": map[string]any{"team": "support"}, "config": map[string]any{"configurable": map[string]any{"tone": "warm"}}}, http.StatusOK, &a)
	id, _ := a["assistant_id"].(string)
	if id == "" || a["graph_id"] != "deepagent" || a["name"] != "Support" {
		t.Fatalf("created %v", a)
	}
	var got map[string]any
	f.JSON(http.MethodGet, "/assistants/"+id, nil, http.StatusOK, &got)
	if got["name"] != "Support" {
		t.Errorf("get %v", got)
	}
	var found []map[string]any
	f.JSON(http.MethodPost, "/assistants/search", map[string]any{"metadata": map[string]any{"team": "support"}}, http.StatusOK, &found)
	if len(found) != 1 || found[0]["assistant_id"] != id {
		t.Errorf("search %v", found)
	}
	f.JSON(http.MethodPost, "/assistants/search", map[string]any{"graph_id": "deepagent"}, http.StatusOK, &found)
	if len(found) != 2 {
		t.Errorf("search by graph: %d assistants, want 2", len(found))
	}
	if code, _, _ := f.Do(http.MethodPost, "/assistants", map[string]any{"graph_id": "nope"}); code != http.StatusNotFound {
		t.Errorf("an assistant of an unknown graph: %d", code)
	}
	if code, _, _ := f.Do(http.MethodPost, "/assistants", map[string]any{"graph_id": "deepagent", "assistant_id": id}); code != http.StatusConflict {
		t.Errorf("an assistant twice: %d", code)
	}
	var th, run map[string]any
	f.JSON(http.MethodPost, "/threads", nil, http.StatusOK, &th)
	f.JSON(http.MethodPost, "/threads/"+th["thread_id"].(string)+"/runs", map[string]any{"assistant_id": id, "input": map[string]any{"messages": []any{servertest.Human("hi")}}}, http.StatusOK, &run)
	if run["assistant_id"] != id {
		t.Errorf("run %v", run)
	}
}

// notifier tells the user something at the start of every run.
type notifier struct{}

func (notifier) Name() string { return "notifier" }

func (notifier) BeforeAgent(ctx context.Context, rt *agent.Runtime) error {
	rt.Emit(agent.Event{Type: agent.EventNotice, Name: "hello", Content: "Starting."})
	return nil
}

// TestCustomStream streams the agent's notices in the custom mode.
func TestCustomStream(t *testing.T) {
	f := newFixture(t, servertest.Options{Middleware: []deepagents.Middleware{notifier{}}}, replay.Turn{Content: "hi"})
	evs, _ := f.Stream("/runs/stream", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("x")}}, "stream_mode": []string{"custom"}})
	var custom []map[string]string
	for _, e := range evs {
		if e.Name == "custom" {
			custom = append(custom, servertest.Decode[map[string]string](t, e.Data))
		}
	}
	if len(custom) != 1 || custom[0]["name"] != "hello" || custom[0]["content"] != "Starting." {
		t.Errorf("custom events %v", custom)
	}
}

// TestFailedRun streams a run whose model fails: an error event ends the
// stream, the thread is in error with the message, and what was saved
// before stays.
func TestFailedRun(t *testing.T) {
	f := newFixture(t, servertest.Options{}, replay.Turn{Error: "the provider is down"})
	var th map[string]any
	f.JSON(http.MethodPost, "/threads", nil, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	evs, _ := f.Stream("/threads/"+tid+"/runs/stream", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("x")}}})
	last := evs[len(evs)-1]
	if last.Name != "error" || !strings.Contains(string(last.Data), "the provider is down") {
		t.Errorf("last event %s %s", last.Name, last.Data)
	}
	var got struct {
		Status string                `json:"status"`
		Error  string                `json:"error"`
		Values servertest.WireValues `json:"values"`
	}
	f.JSON(http.MethodGet, "/threads/"+tid, nil, http.StatusOK, &got)
	if got.Status != "error" || !strings.Contains(got.Error, "the provider is down") || len(got.Values.Messages) != 1 {
		t.Errorf("thread %+v", got)
	}
}

// TestRunDurability: a run's durability (or the older checkpoint_during)
// decides how many checkpoints it leaves: one per step, or one in all.
func TestRunDurability(t *testing.T) {
	for _, tc := range []struct {
		body map[string]any
		want int
	}{
		{map[string]any{}, 3}, // sync: the prompt, the tool step, the answer
		{map[string]any{"durability": "async"}, 3},
		{map[string]any{"durability": "sync"}, 3},
		{map[string]any{"durability": "exit"}, 1},
		{map[string]any{"checkpoint_during": false}, 1},
		{map[string]any{"checkpoint_during": true}, 3},
	} {
		t.Run(fmt.Sprint(tc.body), func(t *testing.T) {
			f := newFixture(t, servertest.Options{},
				replay.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "write_todos", Args: json.RawMessage(`{"todos":[{"content":"a","status":"pending"}]}`)}}},
				replay.Turn{Content: "done"})
			var th map[string]any
			f.JSON(http.MethodPost, "/threads", map[string]any{}, http.StatusOK, &th)
			tid := th["thread_id"].(string)
			body := map[string]any{"input": map[string]any{"messages": []any{servertest.Human("go")}}}
			maps.Copy(body, tc.body)
			f.JSON(http.MethodPost, "/threads/"+tid+"/runs/wait", body, http.StatusOK, nil)
			var hist []map[string]any
			f.JSON(http.MethodPost, "/threads/"+tid+"/history", map[string]any{}, http.StatusOK, &hist)
			if len(hist) != tc.want {
				t.Errorf("%d checkpoints, want %d", len(hist), tc.want)
			}
			var st struct {
				Values servertest.WireValues `json:"values"`
			}
			f.JSON(http.MethodGet, "/threads/"+tid+"/state", nil, http.StatusOK, &st)
			if n := len(st.Values.Messages); n != 4 {
				t.Errorf("the saved state has %d messages, want 4", n)
			}
		})
	}
}
