package a2aserve_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
)

// TestA2ABackgroundApproval: a task whose main agent is done while a
// background subagent of its context waits for approval goes
// input-required, its question naming the background task; an answer
// (approve, or reject with a reason the subagent reads) completes it at
// once, and the context's next task collects the subagent's result.
func TestA2ABackgroundApproval(t *testing.T) {
	tests := []struct {
		name, answer string
		writer       replay.Turn // the subagent's turn after the answer
		written      bool
	}{
		{"approve", "approve", replay.Turn{Agent: "writer", Content: "note written", Expect: &replay.Expect{LastMessageContains: []string{"/note.txt"}}}, true},
		{"reject with a reason", "reject: not in this repository", replay.Turn{Agent: "writer", Content: "note written", Expect: &replay.Expect{LastMessageContains: []string{"not in this repository"}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int64
			m := replay.New(
				replay.Turn{ToolCalls: []llm.ToolCall{servertest.Call("s", "start_async_task", `{"description":"write the note","subagent_type":"writer"}`)}},
				replay.Turn{ToolCalls: []llm.ToolCall{servertest.Call("w", "wait_async_task", `{"task_id":"task-1","timeout":2}`)}},
				replay.Turn{Content: "The writer waits for your approval."},
				replay.Turn{Agent: "writer", ToolCalls: []llm.ToolCall{servertest.Call("wf", "write_file", `{"file_path":"/note.txt","content":"hello"}`)}},
				tt.writer,
				replay.Turn{ToolCalls: []llm.ToolCall{servertest.Call("w2", "wait_async_task", `{"task_id":"task-1"}`)}},
				replay.Turn{Content: "Collected.", Expect: &replay.Expect{LastMessageContains: []string{`"status":"success"`, "note written"}}},
			)
			f := newFixture(t, servertest.Options{Model: m, Agent: func(c *deepagents.Config) {
				c.AsyncSubagents = []deepagents.AsyncSubagent{{Subagent: deepagents.Subagent{
					Name: "writer", Description: "Writes notes in the background.",
					InterruptOn: map[string]deepagents.InterruptOn{"write_file": {}},
				}}}
				c.Async = deepagents.AsyncOptions{NewTaskID: func() string { return fmt.Sprintf("task-%d", n.Add(1)) }}
			}})
			task := f.task("message/send", send(textMessage("write a note")))
			q := statusText(task.Status.Message)
			if task.Status.State != a2a.TaskStateInputRequired || !strings.Contains(q, "The writer waits for your approval.") ||
				!strings.Contains(q, "Background task task-1 (subagent writer: write the note) waits for a decision on:\n- write_file") {
				t.Fatalf("task %s, status %q", task.Status.State, q)
			}
			var question a2a.DataPart
			for _, p := range task.Status.Message.Parts {
				if d, ok := p.(a2a.DataPart); ok {
					question = d
				}
			}
			bg := asList(question.Data["background_tasks"])
			if len(bg) != 1 || bg[0].(map[string]any)["interrupt_id"] != "bg:task-1" || len(asList(bg[0].(map[string]any)["action_requests"])) != 1 {
				t.Errorf("the question's data %v", question.Data)
			}
			if got := f.task("tasks/get", map[string]any{"id": task.ID}); got.Status.State != a2a.TaskStateInputRequired {
				t.Errorf("tasks/get: %s", got.Status.State)
			}
			// A reply that decides nothing is refused, and the task
			// still waits.
			if a := f.rpc("message/send", send(textMessage("maybe later"), "taskId", string(task.ID))); a.Error == nil || a.Error.Code != -32602 {
				t.Errorf("a reply that decides nothing: %+v", a)
			}
			done := f.task("message/send", send(textMessage(tt.answer), "taskId", string(task.ID)))
			if done.ID != task.ID || done.Status.State != a2a.TaskStateCompleted || !strings.Contains(answerOf(t, done), "background task task-1") {
				t.Fatalf("after the answer: %s %+v", done.Status.State, done.Artifacts)
			}
			var th map[string]any
			f.JSON(http.MethodGet, "/threads/"+task.ContextID, nil, http.StatusOK, &th)
			if th["status"] != "idle" {
				t.Errorf("the thread after the answer: %v", th["status"])
			}
			next := f.task("message/send", send(textMessage("is it done?"), "contextId", task.ContextID))
			if next.Status.State != a2a.TaskStateCompleted || answerOf(t, next) != "Collected." {
				t.Fatalf("the next task: %s %q", next.Status.State, statusText(next.Status.Message))
			}
			var state servertest.WireValues
			f.JSON(http.MethodGet, "/threads/"+task.ContextID+"/state", nil, http.StatusOK, &struct {
				Values *servertest.WireValues `json:"values"`
			}{&state})
			if _, ok := state.Files["/note.txt"]; ok != tt.written {
				t.Errorf("/note.txt written: %v, want %v", ok, tt.written)
			}
			if m.Remaining() != 0 {
				t.Errorf("%d turns unplayed", m.Remaining())
			}
		})
	}
}
