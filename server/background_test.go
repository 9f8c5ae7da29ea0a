package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
	"github.com/deepagents-go/deepagents/sqlite"
)

// bgServer is a server over a SQLite file whose deep agent has a
// background subagent, writer, that asks before write_file; its tasks
// are task-1, task-2, ... close stops the server and closes the
// database without answering anything, as a process killed does.
func bgServer(t *testing.T, path string, m llm.Model) (f *fixture, close func()) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	a, err := deepagents.New(deepagents.Config{Model: m, Checkpointer: db.Saver(),
		AsyncSubagents: []deepagents.AsyncSubagent{{Subagent: deepagents.Subagent{
			Name: "writer", Description: "Writes notes in the background.", SystemPrompt: "You write notes.",
			InterruptOn: map[string]deepagents.InterruptOn{"write_file": {}},
		}}},
		Async: deepagents.AsyncOptions{NewTaskID: func() string { return fmt.Sprintf("task-%d", n.Add(1)) }},
	})
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
		a.Close()
		db.Close()
	}
	t.Cleanup(close)
	return &fixture{&servertest.Fixture{T: t, Srv: hs}}, close
}

// bgRequest is an action request of a background task's interrupt.
type bgRequest struct {
	Name        string          `json:"name"`
	Args        json.RawMessage `json:"args"`
	Description string          `json:"description"`
	Subagent    string          `json:"subagent"`
	TaskID      string          `json:"task_id"`
}

// bgInterrupt is an interrupt on the wire.
type bgInterrupt struct {
	ID    string `json:"id"`
	Value struct {
		ActionRequests []bgRequest `json:"action_requests"`
		ReviewConfigs  []struct {
			ActionName string `json:"actionName"`
		} `json:"review_configs"`
	} `json:"value"`
}

// bgView is what a thread shows of its background tasks' requests: the
// thread's status and interrupts, its state's next and tasks.
type bgView struct {
	Status     string
	Interrupts map[string][]bgInterrupt
	Next       []string
	Tasks      []struct {
		ID         string        `json:"id"`
		Name       string        `json:"name"`
		Interrupts []bgInterrupt `json:"interrupts"`
	}
}

func viewOf(f *fixture, tid string) bgView {
	var th struct {
		Status     string                   `json:"status"`
		Interrupts map[string][]bgInterrupt `json:"interrupts"`
	}
	f.JSON(http.MethodGet, "/threads/"+tid, nil, http.StatusOK, &th)
	v := bgView{Status: th.Status, Interrupts: th.Interrupts}
	f.JSON(http.MethodGet, "/threads/"+tid+"/state", nil, http.StatusOK, &v)
	return v
}

// checkParked checks that the thread shows task-1's request for
// write_file of /note.txt as an interrupt, in the thread and its state.
func checkParked(t *testing.T, where string, v bgView) {
	t.Helper()
	if v.Status != "interrupted" {
		t.Errorf("%s: the thread is %q, want interrupted", where, v.Status)
	}
	check := func(what string, irqs []bgInterrupt) {
		t.Helper()
		if len(irqs) != 1 || irqs[0].ID != "bg:task-1" || len(irqs[0].Value.ActionRequests) != 1 {
			t.Fatalf("%s: %s: %+v", where, what, irqs)
		}
		r := irqs[0].Value.ActionRequests[0]
		if r.Name != "write_file" || r.TaskID != "task-1" || r.Subagent != "writer" || !strings.Contains(string(r.Args), "/note.txt") ||
			!strings.HasPrefix(r.Description, "Background task task-1 (subagent writer: write the note) waits for approval.") {
			t.Errorf("%s: %s: the request %+v", where, what, r)
		}
		if rc := irqs[0].Value.ReviewConfigs; len(rc) != 1 || rc[0].ActionName != "write_file" {
			t.Errorf("%s: %s: review configs %+v", where, what, rc)
		}
	}
	check("thread.interrupts", v.Interrupts["bg:task-1"])
	if len(v.Tasks) != 1 || v.Tasks[0].ID != "bg:task-1" || strings.Join(v.Next, ",") != "background_task" {
		t.Fatalf("%s: state next %v tasks %+v", where, v.Next, v.Tasks)
	}
	check("state.tasks", v.Tasks[0].Interrupts)
}

// parkTurns: the main agent starts writer and waits for it, which
// returns once it stops to ask (or, when it asks before the wait begins,
// after the wait's 2 seconds, which a wait that begins on a parked task
// waits through); the run ends.
var parkTurns = []replay.Turn{
	{ToolCalls: []llm.ToolCall{servertest.Call("s", "start_async_task", `{"description":"write the note","subagent_type":"writer"}`)}},
	{ToolCalls: []llm.ToolCall{servertest.Call("w", "wait_async_task", `{"task_id":"task-1","timeout":2}`)}},
	{Content: "the writer waits for your approval", Expect: &replay.Expect{LastMessageContains: []string{`"status":"awaiting_approval"`}}},
	{Agent: "writer", ToolCalls: []llm.ToolCall{servertest.Call("wf", "write_file", `{"file_path":"/note.txt","content":"hello"}`)}},
}

// TestBackgroundApprovalOnParentThread: a background task that parks
// shows on the parent thread as an interrupt (thread, state, search,
// the run's __interrupt__); wrong answers are refused and lose nothing;
// a server restarted on the same database still shows it, and a run
// with command.resume approves it there: the subagent's write happens,
// and the main agent's later wait reads success.
func TestBackgroundApprovalOnParentThread(t *testing.T) {
	path := filepath.Join(t.TempDir(), "threads.db")
	f, stop := bgServer(t, path, replay.New(parkTurns...))
	var th map[string]any
	f.JSON(http.MethodPost, "/threads", map[string]any{}, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	var out struct {
		Interrupt []bgInterrupt `json:"__interrupt__"`
	}
	f.JSON(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("write a note")}}}, http.StatusOK, &out)
	if len(out.Interrupt) != 1 || out.Interrupt[0].ID != "bg:task-1" {
		t.Errorf("the run's values: __interrupt__ %+v", out.Interrupt)
	}
	checkParked(t, "parked", viewOf(f, tid))
	for status, want := range map[string]int{"interrupted": 1, "idle": 0} {
		var found []map[string]any
		f.JSON(http.MethodPost, "/threads/search", map[string]any{"status": status}, http.StatusOK, &found)
		if len(found) != want {
			t.Errorf("threads/search status %s: %d threads, want %d", status, len(found), want)
		}
	}

	for name, resume := range map[string]any{
		"two decisions for one call": map[string]any{"decisions": []any{map[string]any{"type": "approve"}, map[string]any{"type": "approve"}}},
		"an unknown task":            map[string]any{"bg:task-9": map[string]any{"decisions": []any{map[string]any{"type": "approve"}}}},
		"an unknown decision":        map[string]any{"decisions": []any{map[string]any{"type": "maybe"}}},
		"not decisions":              "yes",
	} {
		code, body, _ := f.Do(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{"command": map[string]any{"resume": resume}})
		if code != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s, want 422", name, code, body)
		}
	}
	checkParked(t, "after the wrong answers", viewOf(f, tid))
	stop()

	second := replay.New(
		replay.Turn{Agent: "writer", Content: "note written", Expect: &replay.Expect{LastMessageContains: []string{"/note.txt"}}},
		replay.Turn{ToolCalls: []llm.ToolCall{servertest.Call("w2", "wait_async_task", `{"task_id":"task-1"}`)}},
		replay.Turn{Content: "The note is written.", Expect: &replay.Expect{LastMessageContains: []string{`"status":"success"`, "note written"}}},
	)
	f, _ = bgServer(t, path, second)
	checkParked(t, "after the restart", viewOf(f, tid))
	var resumed map[string]any
	f.JSON(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{
		"command": map[string]any{"resume": map[string]any{"decisions": []any{map[string]any{"type": "approve"}}}},
	}, http.StatusOK, &resumed)
	if _, ok := resumed["messages"]; !ok {
		t.Errorf("the resume's values: %v", resumed)
	}
	if _, ok := resumed["__interrupt__"]; ok {
		t.Errorf("the resume's values still hold an interrupt: %v", resumed["__interrupt__"])
	}
	if v := viewOf(f, tid); v.Status != "idle" || len(v.Interrupts) != 0 || len(v.Tasks) != 0 || len(v.Next) != 0 {
		t.Errorf("after the resume: %+v", v)
	}
	code, body, _ := f.Do(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{"command": map[string]any{"resume": map[string]any{"decisions": []any{map[string]any{"type": "approve"}}}}})
	if code != http.StatusBadRequest {
		t.Errorf("a second resume: %d %s, want 400", code, body)
	}
	var final servertest.WireValues
	f.JSON(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("is it done?")}}}, http.StatusOK, &final)
	if last := final.Messages[len(final.Messages)-1]; last.Content != "The note is written." {
		t.Errorf("the main agent's answer: %+v", last)
	}
	if _, ok := final.Files["/note.txt"]; !ok {
		t.Errorf("the approved write is not in the thread's files: %v", final.Files)
	}
	if second.Remaining() != 0 {
		t.Errorf("%d turns unplayed", second.Remaining())
	}
}

// TestBackgroundApprovalsRejectedByMap: two tasks wait; a plain answer
// is refused (which one?), a map keyed by interrupt id rejects both,
// each with its reason, which reaches that task's subagent.
func TestBackgroundApprovalsRejectedByMap(t *testing.T) {
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{
			servertest.Call("s1", "start_async_task", `{"description":"write note A","subagent_type":"writer"}`),
			servertest.Call("s2", "start_async_task", `{"description":"write note B","subagent_type":"writer"}`),
		}},
		replay.Turn{ToolCalls: []llm.ToolCall{
			servertest.Call("w1", "wait_async_task", `{"task_id":"task-1","timeout":2}`),
			servertest.Call("w2", "wait_async_task", `{"task_id":"task-2","timeout":2}`),
		}},
		replay.Turn{Content: "both wait"},
		replay.Turn{Agent: "writer", ToolCalls: []llm.ToolCall{servertest.Call("wf", "write_file", `{"file_path":"/note.txt","content":"hello"}`)}},
		replay.Turn{Agent: "writer", ToolCalls: []llm.ToolCall{servertest.Call("wf", "write_file", `{"file_path":"/note.txt","content":"hello"}`)}},
		replay.Turn{Agent: "writer", Content: "I did not write it", Expect: &replay.Expect{LastMessageContains: []string{"not now"}}},
		replay.Turn{Agent: "writer", Content: "I did not write it", Expect: &replay.Expect{LastMessageContains: []string{"not now"}}},
		replay.Turn{ToolCalls: []llm.ToolCall{
			servertest.Call("w3", "wait_async_task", `{"task_id":"task-1"}`),
			servertest.Call("w4", "wait_async_task", `{"task_id":"task-2"}`),
		}},
		replay.Turn{Content: "neither was written"},
	).Record()
	f, _ := bgServer(t, filepath.Join(t.TempDir(), "threads.db"), m)
	var th map[string]any
	f.JSON(http.MethodPost, "/threads", map[string]any{}, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	f.JSON(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("write two notes")}}}, http.StatusOK, nil)
	v := viewOf(f, tid)
	if v.Status != "interrupted" || len(v.Tasks) != 2 || v.Tasks[0].ID != "bg:task-1" || v.Tasks[1].ID != "bg:task-2" || len(v.Interrupts) != 2 {
		t.Fatalf("two parked tasks: %+v", v)
	}
	reject := func(msg string) map[string]any {
		return map[string]any{"decisions": []any{map[string]any{"type": "reject", "message": msg}}}
	}
	code, body, _ := f.Do(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{"command": map[string]any{"resume": reject("no")}})
	if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), "bg:task-1, bg:task-2") {
		t.Errorf("a plain answer to two tasks: %d %s", code, body)
	}
	// One good answer and one wrong: neither is given.
	code, body, _ = f.Do(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{"command": map[string]any{"resume": map[string]any{
		"bg:task-1": reject("not now: A"), "bg:task-2": map[string]any{"decisions": []any{}},
	}}})
	if code != http.StatusUnprocessableEntity {
		t.Errorf("a map with a wrong answer: %d %s", code, body)
	}
	if v := viewOf(f, tid); len(v.Tasks) != 2 {
		t.Fatalf("a refused answer answered a task: %+v", v.Tasks)
	}
	// The two starts ran in parallel: which task has which note is told
	// by its request's description.
	answers := map[string]any{}
	for _, task := range v.Tasks {
		d := task.Interrupts[0].Value.ActionRequests[0].Description
		switch {
		case strings.Contains(d, "(subagent writer: write note A)"):
			answers[task.ID] = reject("not now: A")
		case strings.Contains(d, "(subagent writer: write note B)"):
			answers[task.ID] = reject("not now: B")
		}
	}
	if len(answers) != 2 {
		t.Fatalf("the requests do not name their tasks: %+v", v.Tasks)
	}
	f.JSON(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{"command": map[string]any{"resume": answers}}, http.StatusOK, nil)
	if v := viewOf(f, tid); v.Status != "idle" {
		t.Errorf("after the answers the thread is %s", v.Status)
	}
	var final servertest.WireValues
	f.JSON(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("and?")}}}, http.StatusOK, &final)
	if last := final.Messages[len(final.Messages)-1]; last.Content != "neither was written" {
		t.Errorf("the main agent's answer: %+v", last)
	}
	if _, ok := final.Files["/note.txt"]; ok {
		t.Error("a rejected write happened")
	}
	// Each task's subagent read its own reason.
	got := map[string]string{}
	for _, r := range m.Requests() {
		if r.Agent != "writer" || len(r.Request.Messages) < 2 {
			continue
		}
		first, last := r.Request.Messages[0].Text(), r.Request.Messages[len(r.Request.Messages)-1].Text()
		if strings.Contains(last, "not now") {
			got[first] = last
		}
	}
	for task, reason := range map[string]string{"write note A": "not now: A", "write note B": "not now: B"} {
		found := false
		for first, last := range got {
			if strings.Contains(first, task) && strings.Contains(last, reason) {
				found = true
			}
		}
		if !found {
			t.Errorf("the subagent of %q did not read %q: %v", task, reason, got)
		}
	}
	if m.Remaining() != 0 {
		t.Errorf("%d turns unplayed", m.Remaining())
	}
}

// TestBackgroundApprovalAnsweredOnAnotherReplica: a task parked in
// replica A's process shows on replica B too (through the database), and
// B answers it, running the subagent; A then neither shows the request
// nor takes a second answer for it (which would run the approved call
// again).
func TestBackgroundApprovalAnsweredOnAnotherReplica(t *testing.T) {
	path := filepath.Join(t.TempDir(), "threads.db")
	am := replay.New(parkTurns...)
	a, _ := bgServer(t, path, am)
	bm := replay.New(
		replay.Turn{Agent: "writer", Content: "note written", Expect: &replay.Expect{LastMessageContains: []string{"/note.txt"}}},
		replay.Turn{ToolCalls: []llm.ToolCall{servertest.Call("w2", "wait_async_task", `{"task_id":"task-1"}`)}},
		replay.Turn{Content: "The note is written.", Expect: &replay.Expect{LastMessageContains: []string{`"status":"success"`}}},
	)
	b, _ := bgServer(t, path, bm)
	var th map[string]any
	a.JSON(http.MethodPost, "/threads", map[string]any{}, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	a.JSON(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("write a note")}}}, http.StatusOK, nil)
	checkParked(t, "on A", viewOf(a, tid))
	checkParked(t, "on B", viewOf(b, tid))
	approve := map[string]any{"command": map[string]any{"resume": map[string]any{"decisions": []any{map[string]any{"type": "approve"}}}}}
	b.JSON(http.MethodPost, "/threads/"+tid+"/runs/wait", approve, http.StatusOK, nil)
	// B's main agent waits for the task: its subagent has run on B.
	b.JSON(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("is it done?")}}}, http.StatusOK, nil)
	if bm.Remaining() != 0 {
		t.Fatalf("B: %d turns unplayed", bm.Remaining())
	}
	if code, body, _ := a.Do(http.MethodPost, "/threads/"+tid+"/runs/wait", approve); code != http.StatusBadRequest {
		t.Errorf("a second answer on A: %d %s, want 400 (nothing waits)", code, body)
	}
	var found []map[string]any
	a.JSON(http.MethodPost, "/threads/search", map[string]any{"status": "interrupted"}, http.StatusOK, &found)
	if len(found) != 0 {
		t.Errorf("A still finds the thread interrupted: %v", found)
	}
}

// TestBackgroundApprovalTwoAnswersAtOnce: after a restart (the task is
// found in the database, held by no process), two resumes at once
// answer it once: one is 200, the other finds nothing waiting (409, or
// 400 once the first is under way), and the subagent runs once.
func TestBackgroundApprovalTwoAnswersAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "threads.db")
	f, stop := bgServer(t, path, replay.New(parkTurns...))
	var th map[string]any
	f.JSON(http.MethodPost, "/threads", map[string]any{}, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	f.JSON(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("write a note")}}}, http.StatusOK, nil)
	stop()
	m := replay.New(
		replay.Turn{Agent: "writer", Content: "note written", Expect: &replay.Expect{LastMessageContains: []string{"/note.txt"}}},
		replay.Turn{ToolCalls: []llm.ToolCall{servertest.Call("w2", "wait_async_task", `{"task_id":"task-1"}`)}},
		replay.Turn{Content: "The note is written.", Expect: &replay.Expect{LastMessageContains: []string{`"status":"success"`}}},
	).Record()
	f, _ = bgServer(t, path, m)
	checkParked(t, "after the restart", viewOf(f, tid))
	approve := map[string]any{"command": map[string]any{"resume": map[string]any{"decisions": []any{map[string]any{"type": "approve"}}}}}
	codes := make(chan int, 2)
	for range 2 {
		go func() {
			code := 0 // sent even when Do fails the test (and exits this goroutine)
			defer func() { codes <- code }()
			code, _, _ = f.Do(http.MethodPost, "/threads/"+tid+"/runs/wait", approve)
		}()
	}
	got := map[int]int{}
	for range 2 {
		got[<-codes]++
	}
	if got[http.StatusOK] != 1 || got[http.StatusConflict]+got[http.StatusBadRequest] != 1 {
		t.Errorf("two answers at once: %v, want one 200 and one 409 or 400", got)
	}
	f.JSON(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("is it done?")}}}, http.StatusOK, nil)
	writer := 0
	for _, r := range m.Requests() {
		if r.Agent == "writer" {
			writer++
		}
	}
	if writer != 1 || m.Remaining() != 0 {
		t.Errorf("the subagent's model was asked %d times (want 1); %d turns unplayed", writer, m.Remaining())
	}
}

// TestBackgroundApprovalRefusals: a resume on another thread than the
// task's answers nothing (that thread has nothing waiting), and wrong or
// huge answers are 422 with a short message, the task still parked.
func TestBackgroundApprovalRefusals(t *testing.T) {
	f, _ := bgServer(t, filepath.Join(t.TempDir(), "threads.db"), replay.New(parkTurns...))
	var th map[string]any
	f.JSON(http.MethodPost, "/threads", map[string]any{}, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	f.JSON(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("write a note")}}}, http.StatusOK, nil)
	f.JSON(http.MethodPost, "/threads", map[string]any{}, http.StatusOK, &th)
	other := th["thread_id"].(string)
	f.JSON(http.MethodPost, "/threads/"+other+"/state", map[string]any{"values": map[string]any{"messages": []any{servertest.Human("prior")}}}, http.StatusOK, nil)
	approve := []any{map[string]any{"type": "approve"}}
	for _, resume := range []any{map[string]any{"bg:task-1": map[string]any{"decisions": approve}}, map[string]any{"decisions": approve}} {
		if code, body, _ := f.Do(http.MethodPost, "/threads/"+other+"/runs/wait", map[string]any{"command": map[string]any{"resume": resume}}); code != http.StatusBadRequest {
			t.Errorf("a resume of task-1 on another thread: %d %s, want 400", code, body)
		}
	}
	huge := strings.Repeat("x", 100_000)
	for name, resume := range map[string]any{
		"a huge key":           map[string]any{"bg:" + huge: map[string]any{"decisions": approve}},
		"a huge decision type": map[string]any{"bg:task-1": map[string]any{"decisions": []any{map[string]any{"type": huge}}}},
		"a number":             map[string]any{"bg:task-1": 5},
		"nested junk":          map[string]any{"bg:task-1": map[string]any{"decisions": []any{[]any{[]any{map[string]any{"type": "approve"}}}}}},
	} {
		code, body, _ := f.Do(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{"command": map[string]any{"resume": resume}})
		if code != http.StatusUnprocessableEntity || len(body) > 2000 {
			t.Errorf("%s: %d, %d bytes %.300s, want 422 and a short message", name, code, len(body), body)
		}
	}
	code, body, _ := f.Do(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{"input": map[string]any{"goal": "x"}, "command": map[string]any{"resume": map[string]any{"decisions": approve}}})
	if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), "takes no input") {
		t.Errorf("a background answer with input values: %d %s, want 422", code, body)
	}
	checkParked(t, "after the refusals", viewOf(f, tid))
}
