package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
	"github.com/deepagents-go/deepagents/sqlite"
)

// subagentServer is a server over a SQLite file whose deep agent has a
// subagent, careful, that asks before write_file. close stops the server
// and closes the database, as a process that exits does.
func subagentServer(t *testing.T, path string, m llm.Model) (f *fixture, close func()) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := deepagents.New(deepagents.Config{Model: m, Checkpointer: db.Saver(), Subagents: []deepagents.Subagent{
		{Name: "careful", Description: "writes with approval", InterruptOn: map[string]deepagents.InterruptOn{"write_file": {}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(server.Config{Assistants: []server.Assistant{{GraphID: "deepagent", Agent: a}}, Saver: db.Saver()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	closed := false
	close = func() {
		if closed {
			return
		}
		closed = true
		hs.CloseClientConnections()
		s.Close()
		hs.Close()
		db.Close()
	}
	t.Cleanup(close)
	return &fixture{&servertest.Fixture{T: t, Srv: hs}}, close
}

// TestSubagentApprovalThroughServer: a subagent's gated call interrupts
// the run; the interrupt, in the stream and in the thread's state, names
// the subagent; a new server on the same database resumes the thread with
// a Command, and the decision is carried out inside the subagent, whose
// events (stream_subgraphs) show it continuing.
func TestSubagentApprovalThroughServer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "threads.db")
	first := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{servertest.Call("t1", "task", `{"description":"write the report","subagent_type":"careful"}`)}},
		replay.Turn{Agent: "careful", ToolCalls: []llm.ToolCall{servertest.Call("w", "write_file", `{"file_path":"/report.md","content":"# Report"}`)}},
	)
	f, stop := subagentServer(t, path, first)
	var th map[string]any
	f.JSON(http.MethodPost, "/threads", map[string]any{}, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	evs, _ := f.Stream("/threads/"+tid+"/runs/stream", map[string]any{
		"input": map[string]any{"messages": []any{servertest.Human("write it")}}, "stream_mode": []string{"values"},
	})
	type request struct {
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Namespace   []string `json:"namespace"`
		Subagent    string   `json:"subagent"`
	}
	var irq struct {
		Interrupt []struct {
			Value struct {
				ActionRequests []request `json:"action_requests"`
			} `json:"value"`
		} `json:"__interrupt__"`
	}
	if err := json.Unmarshal(evs[len(evs)-1].Data, &irq); err != nil || len(irq.Interrupt) != 1 {
		t.Fatalf("last event %s %s: %v", evs[len(evs)-1].Name, evs[len(evs)-1].Data, err)
	}
	check := func(where string, reqs []request) {
		t.Helper()
		if len(reqs) != 1 {
			t.Fatalf("%s: %d requests", where, len(reqs))
		}
		r := reqs[0]
		if r.Name != "write_file" || r.Subagent != "careful" || strings.Join(r.Namespace, "/") != "careful:t1" || !strings.HasPrefix(r.Description, "The subagent careful wants to run write_file") {
			t.Errorf("%s: the request does not name the subagent: %+v", where, r)
		}
	}
	check("stream", irq.Interrupt[0].Value.ActionRequests)
	var st struct {
		Tasks []struct {
			Interrupts []struct {
				Value struct {
					ActionRequests []request `json:"action_requests"`
				} `json:"value"`
			} `json:"interrupts"`
		} `json:"tasks"`
	}
	f.JSON(http.MethodGet, "/threads/"+tid+"/state", nil, http.StatusOK, &st)
	if len(st.Tasks) != 1 || len(st.Tasks[0].Interrupts) != 1 {
		t.Fatalf("state tasks %+v", st.Tasks)
	}
	check("state", st.Tasks[0].Interrupts[0].Value.ActionRequests)
	// The subagent's own thread (tid/t1) is not one of the client's.
	var found []map[string]any
	f.JSON(http.MethodPost, "/threads/search", map[string]any{}, http.StatusOK, &found)
	if len(found) != 1 || found[0]["thread_id"] != tid {
		t.Errorf("threads/search lists %v, want only %s", found, tid)
	}
	if code, body, _ := f.Do(http.MethodPost, "/threads", map[string]any{"thread_id": tid + "/t9"}); code != http.StatusBadRequest {
		t.Errorf("a thread id with '/': %d %s", code, body)
	}
	stop()

	// Another process: its model plays what comes after the decision.
	second := replay.New(
		replay.Turn{Agent: "careful", Content: "report written", Expect: &replay.Expect{LastMessageContains: []string{"Updated file /report.md"}}},
		replay.Turn{Content: "Done.", Expect: &replay.Expect{LastMessageContains: []string{"report written"}}},
	)
	f, _ = subagentServer(t, path, second)
	var thread map[string]any
	f.JSON(http.MethodGet, "/threads/"+tid, nil, http.StatusOK, &thread)
	if thread["status"] != "interrupted" {
		t.Fatalf("after the restart the thread is %v", thread["status"])
	}
	evs, _ = f.Stream("/threads/"+tid+"/runs/stream", map[string]any{
		"command":     map[string]any{"resume": map[string]any{"decisions": []any{map[string]any{"type": "approve"}}}},
		"stream_mode": []string{"values", "messages-tuple"}, "stream_subgraphs": true,
	})
	inside := false
	for _, e := range evs {
		if e.Name == "messages|careful:t1" && strings.Contains(string(e.Data), "report written") {
			inside = true
		}
	}
	if !inside {
		t.Error("no event of the subagent continuing")
	}
	final := servertest.Decode[servertest.WireValues](t, evs[len(evs)-1].Data)
	if last := final.Messages[len(final.Messages)-1]; last.Content != "Done." {
		t.Errorf("final message %+v", last)
	}
	if _, ok := final.Files["/report.md"]; !ok {
		t.Error("the approved file is missing")
	}
	f.JSON(http.MethodGet, "/threads/"+tid, nil, http.StatusOK, &thread)
	if thread["status"] != "idle" {
		t.Errorf("after the resume the thread is %v", thread["status"])
	}
	if second.Remaining() != 0 {
		t.Errorf("%d turns unplayed", second.Remaining())
	}
}
