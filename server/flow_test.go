package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/verify"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
)

// TestAssistants checks that an assistant is found by its graph ID and by
// the ID LangGraph derives from it.
func TestAssistants(t *testing.T) {
	f := newFixture(t, servertest.Options{})
	var found []map[string]any
	f.JSON(http.MethodPost, "/assistants/search", map[string]any{"graph_id": "deepagent", "limit": 100, "offset": 0}, http.StatusOK, &found)
	if len(found) != 1 || found[0]["assistant_id"] != "bd9d7831-8cd0-52cf-b4ff-e0a75afee4f5" {
		t.Fatalf("search = %v", found)
	}
	if md, _ := found[0]["metadata"].(map[string]any); md["created_by"] != "system" {
		t.Errorf("metadata = %v", found[0]["metadata"])
	}
	for _, id := range []string{"deepagent", "bd9d7831-8cd0-52cf-b4ff-e0a75afee4f5"} {
		var a map[string]any
		f.JSON(http.MethodGet, "/assistants/"+id, nil, http.StatusOK, &a)
		if a["graph_id"] != "deepagent" {
			t.Errorf("GET /assistants/%s = %v", id, a)
		}
	}
	f.JSON(http.MethodPost, "/assistants/search", map[string]any{"graph_id": "other"}, http.StatusOK, &found)
	if len(found) != 0 {
		t.Errorf("search for another graph = %v", found)
	}
	if code, _, _ := f.Do(http.MethodGet, "/assistants/nope", nil); code != http.StatusNotFound {
		t.Errorf("unknown assistant: %d", code)
	}
}

// TestStreamRun follows the Deep Agents UI through one run: a thread, a
// stream with todos and a file, then the thread list and its history.
func TestStreamRun(t *testing.T) {
	f := newFixture(t, servertest.Options{},
		replay.Turn{Content: "Let me plan this.", ToolCalls: []llm.ToolCall{servertest.Call("c1", "write_todos", `{"todos":[{"content":"Write report","status":"in_progress"}]}`)}},
		replay.Turn{ToolCalls: []llm.ToolCall{servertest.Call("c2", "write_file", `{"file_path":"/report.md","content":"# Report\nhello"}`)}},
		replay.Turn{Content: "All done."},
	)
	var th map[string]any
	f.JSON(http.MethodPost, "/threads", map[string]any{"metadata": map[string]any{}}, http.StatusOK, &th)
	tid, _ := th["thread_id"].(string)
	if tid == "" || th["status"] != "idle" {
		t.Fatalf("thread = %v", th)
	}
	evs, h := f.Stream("/threads/"+tid+"/runs/stream", map[string]any{
		"input":         map[string]any{"messages": []any{servertest.Human("Write a report")}},
		"stream_mode":   []string{"values", "messages-tuple"},
		"assistant_id":  "deepagent",
		"on_disconnect": "continue", "stream_resumable": true,
		"config": map[string]any{"recursion_limit": 100},
	})
	loc := h.Get("Content-Location")
	if !strings.HasPrefix(loc, "/threads/"+tid+"/runs/") {
		t.Fatalf("Content-Location %q", loc)
	}
	if len(evs) == 0 || evs[0].Name != "metadata" {
		t.Fatalf("first event %v", evs)
	}
	if md := servertest.Decode[map[string]any](t, evs[0].Data); md["run_id"] != strings.TrimPrefix(loc, "/threads/"+tid+"/runs/") {
		t.Errorf("metadata %v, Content-Location %s", md, loc)
	}
	// Every message is streamed before the values that hold it, and the
	// input message is not streamed.
	streamed := map[string]string{} // id -> accumulated text
	var last servertest.WireValues
	for _, e := range evs[1:] {
		switch e.Name {
		case "messages":
			var tuple []json.RawMessage
			if err := json.Unmarshal(e.Data, &tuple); err != nil || len(tuple) != 2 {
				t.Fatalf("messages event is not a 2-tuple: %s", e.Data)
			}
			m := servertest.Decode[servertest.WireMsg](t, tuple[0])
			if m.ID == "" || m.ID == "h-Write a report" {
				t.Errorf("streamed message id %q", m.ID)
			}
			if s, ok := m.Content.(string); ok {
				streamed[m.ID] += s
			} else {
				streamed[m.ID] += ""
			}
		case "values":
			last = servertest.Decode[servertest.WireValues](t, e.Data)
			for _, m := range last.Messages {
				if _, ok := streamed[m.ID]; !ok && m.Type != "human" {
					t.Errorf("values hold %s message %s before it was streamed", m.Type, m.ID)
				}
			}
		default:
			t.Errorf("unexpected event %s", e.Name)
		}
	}
	types := []string{}
	for _, m := range last.Messages {
		types = append(types, m.Type)
	}
	if want := []string{"human", "ai", "tool", "ai", "tool", "ai"}; !slices.Equal(types, want) {
		t.Fatalf("final messages %v, want %v", types, want)
	}
	ai := last.Messages[1]
	if ai.Content != "Let me plan this." || len(ai.ToolCalls) != 1 || ai.ToolCalls[0].Name != "write_todos" || ai.ToolCalls[0].Type != "tool_call" {
		t.Errorf("first AI message %+v", ai)
	}
	if streamed[ai.ID] != "Let me plan this." {
		t.Errorf("streamed text %q", streamed[ai.ID])
	}
	if last.Messages[2].ToolCallID != "c1" || last.Messages[2].Status != "success" {
		t.Errorf("tool message %+v", last.Messages[2])
	}
	if len(last.Todos) != 1 || last.Todos[0]["content"] != "Write report" {
		t.Errorf("todos %v", last.Todos)
	}
	file := servertest.Decode[struct {
		Content []string `json:"content"`
	}](t, last.Files["/report.md"])
	if !slices.Equal(file.Content, []string{"# Report", "hello"}) {
		t.Errorf("file %s", last.Files["/report.md"])
	}

	// The thread list shows it idle, with its values.
	var list []map[string]any
	f.JSON(http.MethodPost, "/threads/search", map[string]any{"limit": 20, "offset": 0, "sort_by": "updated_at", "sort_order": "desc"}, http.StatusOK, &list)
	if len(list) != 1 || list[0]["status"] != "idle" || list[0]["values"] == nil {
		t.Fatalf("search = %v", list)
	}
	// History: newest first, each entry's parent the next one's
	// checkpoint, next empty.
	var hist []struct {
		Values     servertest.WireValues `json:"values"`
		Next       []string              `json:"next"`
		Checkpoint map[string]any        `json:"checkpoint"`
		Parent     map[string]any        `json:"parent_checkpoint"`
		Tasks      []json.RawMessage     `json:"tasks"`
	}
	f.JSON(http.MethodPost, "/threads/"+tid+"/history", map[string]any{"limit": 10}, http.StatusOK, &hist)
	if len(hist) < 2 {
		t.Fatalf("history has %d states", len(hist))
	}
	for i := range hist[:len(hist)-1] {
		if hist[i].Parent["checkpoint_id"] != hist[i+1].Checkpoint["checkpoint_id"] {
			t.Errorf("history %d: parent %v, next entry %v", i, hist[i].Parent, hist[i+1].Checkpoint)
		}
	}
	if len(hist[0].Next) != 0 || len(hist[0].Tasks) != 0 || len(hist[0].Values.Messages) != 6 {
		t.Errorf("head: next %v, %d tasks, %d messages", hist[0].Next, len(hist[0].Tasks), len(hist[0].Values.Messages))
	}
	var one []json.RawMessage
	f.JSON(http.MethodPost, "/threads/"+tid+"/history", map[string]any{"limit": 1}, http.StatusOK, &one)
	if len(one) != 1 {
		t.Errorf("history limit 1: %d", len(one))
	}
	// The run is known, and done.
	var rn map[string]any
	f.JSON(http.MethodGet, loc, nil, http.StatusOK, &rn)
	if rn["status"] != "success" {
		t.Errorf("run %v", rn)
	}
}

// A client sets a thread's goal in a run's input, as any other value: the
// agent's answer is graded against it, and the thread keeps it.
func TestGoalInInput(t *testing.T) {
	graded := &replay.Expect{LastMessageContains: []string{"<rubric>\nName the file.\n</rubric>"}}
	f := newFixture(t, servertest.Options{},
		replay.Turn{Content: "done"},
		replay.Turn{Agent: verify.GraderAgent, Content: "FAIL\nNo file is named.", Expect: graded},
		replay.Turn{Content: "Changed a.txt.", Expect: &replay.Expect{LastMessageContains: []string{"No file is named."}}})
	f.JSON(http.MethodPost, "/threads", map[string]any{"thread_id": "t1"}, http.StatusOK, nil)
	var out map[string]any
	f.JSON(http.MethodPost, "/threads/t1/runs/wait", map[string]any{"assistant_id": "deepagent",
		"input": map[string]any{"messages": []any{servertest.Human("go")}, verify.GoalValue: "Name the file."}}, http.StatusOK, &out)
	msgs, _ := out["messages"].([]any)
	if last, _ := json.Marshal(msgs[max(len(msgs)-1, 0):]); !strings.Contains(string(last), "Changed a.txt.") {
		t.Errorf("last message: %s", last)
	}
	if out[verify.GoalValue] != "Name the file." {
		t.Errorf("the thread's goal: %v", out[verify.GoalValue])
	}
}

// A run's input writes the state as a state update does: files, a todo
// list checked, any other key as it is; what is wrong is a 422 and no run.
func TestInputValues(t *testing.T) {
	f := newFixture(t, servertest.Options{}, replay.Turn{Content: "read it"})
	f.JSON(http.MethodPost, "/threads", map[string]any{"thread_id": "t1"}, http.StatusOK, nil)
	for _, bad := range []struct {
		input map[string]any
		want  string
	}{
		{map[string]any{"files": map[string]any{"/a.txt": nil}}, `input.files["/a.txt"]: a run's input cannot remove a file`},
		{map[string]any{"todos": "x"}, "input.todos must be a list of todos"},
		{map[string]any{"files": map[string]any{"/a.txt": 3}}, `a file is a string or an object with content`},
		{map[string]any{"goal": 5}, "input.goal: the thread's goal must be a string of at most 16 KiB: it is a number"},
	} {
		bad.input["messages"] = []any{servertest.Human("go")}
		code, body, _ := f.Do(http.MethodPost, "/threads/t1/runs/wait", map[string]any{"input": bad.input})
		if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), bad.want) {
			t.Errorf("input %v: %d %s, want 422 %q", bad.input, code, body, bad.want)
		}
	}
	// A state update is held to the same: a goal that would fail every
	// later run of the thread is refused.
	if code, body, _ := f.Do(http.MethodPost, "/threads/t1/state", map[string]any{"values": map[string]any{"goal": []any{1}}}); code != http.StatusUnprocessableEntity || !strings.Contains(string(body), "values.goal:") {
		t.Errorf("a state update's goal: %d %s", code, body)
	}
	var out map[string]any
	f.JSON(http.MethodPost, "/threads/t1/runs/wait", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("go")},
		"files": map[string]any{"/a.txt": "alpha"}, "topic": "x"}}, http.StatusOK, &out)
	files, _ := out["files"].(map[string]any)
	if _, ok := files["/a.txt"]; !ok || out["topic"] != "x" {
		t.Errorf("values after the run: %v", out)
	}
}
