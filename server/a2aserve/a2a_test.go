package a2aserve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
	"github.com/deepagents-go/deepagents/store"
)

// The A2A tests speak JSON-RPC over HTTP as any A2A client does, and read
// the answers with the SDK's types; TestOfficialA2AClient drives the
// official JavaScript client.

// deepagentID is the assistant "deepagent"'s ID (LangGraph's UUIDv5 of it).
const deepagentID = "bd9d7831-8cd0-52cf-b4ff-e0a75afee4f5"

type rpcError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data"`
}

type rpcAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// rpc calls an A2A method of the assistant and returns its answer.
func (f *fixture) rpc(method string, params any, hdr ...string) rpcAnswer {
	f.T.Helper()
	code, b, _ := f.Do(http.MethodPost, "/a2a/deepagent", map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, hdr...)
	if code != http.StatusOK {
		f.T.Fatalf("%s: HTTP %d %s", method, code, b)
	}
	return servertest.Decode[rpcAnswer](f.T, b)
}

// task calls a method that answers a task, failing the test on an error.
func (f *fixture) task(method string, params any) *a2a.Task {
	f.T.Helper()
	a := f.rpc(method, params)
	if a.Error != nil {
		f.T.Fatalf("%s: error %+v", method, a.Error)
	}
	return servertest.Decode[*a2a.Task](f.T, a.Result)
}

// rpcStream calls a streaming method and returns its events.
func (f *fixture) rpcStream(method string, params any) ([]a2a.Event, *rpcError) {
	f.T.Helper()
	code, b, h := f.Do(http.MethodPost, "/a2a/deepagent", map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	if code != http.StatusOK || h.Get("Content-Type") != "text/event-stream" {
		f.T.Fatalf("%s: HTTP %d %s %s", method, code, h.Get("Content-Type"), b)
	}
	var evs []a2a.Event
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		a := servertest.Decode[rpcAnswer](f.T, []byte(data))
		if a.Error != nil {
			return evs, a.Error
		}
		ev, err := a2a.UnmarshalEventJSON(a.Result)
		if err != nil {
			f.T.Fatalf("event %s: %v", a.Result, err)
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func textMessage(text string) map[string]any {
	return map[string]any{"kind": "message", "role": "user", "messageId": "m-" + text, "parts": []any{map[string]any{"kind": "text", "text": text}}}
}

func send(msg map[string]any, more ...string) map[string]any {
	for i := 0; i+1 < len(more); i += 2 {
		msg[more[i]] = more[i+1]
	}
	return map[string]any{"message": msg}
}

// answerOf is a completed task's answer.
func answerOf(t *testing.T, task *a2a.Task) string {
	t.Helper()
	if len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 1 {
		t.Fatalf("task %s (%s) has artifacts %+v, want its answer", task.ID, task.Status.State, task.Artifacts)
	}
	return task.Artifacts[0].Parts[0].(a2a.TextPart).Text
}

func statusText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var out []string
	for _, p := range m.Parts {
		if t, ok := p.(a2a.TextPart); ok {
			out = append(out, t.Text)
		}
	}
	return strings.Join(out, "\n")
}

// TestA2AAgentCard serves each assistant's card at LangGraph's path
// (?assistant_id= an ID or a graph ID; the first assistant's without),
// under its endpoint, naming the endpoint at the host the client used.
func TestA2AAgentCard(t *testing.T) {
	f := newFixture(t, servertest.Options{})
	for _, path := range []string{"/.well-known/agent-card.json?assistant_id=deepagent", "/.well-known/agent-card.json?assistant_id=" + deepagentID, "/.well-known/agent-card.json", "/a2a/" + deepagentID + "/.well-known/agent-card.json"} {
		var card a2a.AgentCard
		f.JSON(http.MethodGet, path, nil, http.StatusOK, &card)
		if card.Name != "deepagent" || card.URL != f.Srv.URL+"/a2a/"+deepagentID || card.ProtocolVersion != "0.3.0" ||
			card.PreferredTransport != a2a.TransportProtocolJSONRPC || !card.Capabilities.Streaming || card.Capabilities.PushNotifications {
			t.Errorf("%s: card %+v", path, card)
		}
		if len(card.Skills) != 1 || card.Skills[0].ID != "deepagent" || card.SecuritySchemes != nil {
			t.Errorf("%s: skills %+v, security %+v", path, card.Skills, card.SecuritySchemes)
		}
	}
	if code, _, _ := f.Do(http.MethodGet, "/.well-known/agent-card.json?assistant_id=nobody", nil); code != http.StatusNotFound {
		t.Errorf("an unknown assistant's card: %d", code)
	}
	if code, _, _ := f.Do(http.MethodPost, "/a2a/nobody", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": map[string]any{"id": "x"}}); code != http.StatusNotFound {
		t.Errorf("an unknown assistant's endpoint: %d", code)
	}
	if code, _, _ := f.Do(http.MethodGet, "/.well-known/agent-card.json?assistant_id="+strings.Repeat("a", 300), nil); code != http.StatusBadRequest {
		t.Errorf("a card's assistant ID no assistant can have: %d", code)
	}
	if code, _, _ := f.Do(http.MethodPost, "/a2a/..", map[string]any{}); code != http.StatusBadRequest {
		t.Errorf("an assistant ID no assistant has: %d", code)
	}
}

// TestA2AAccess holds the A2A endpoints to the server's checks: the key
// (which the card declares), pages of other origins, bodies not JSON.
func TestA2AAccess(t *testing.T) {
	f := newFixture(t, servertest.Options{APIKey: "sekret"}, replay.Turn{Content: "hi"})
	params := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": send(textMessage("hello"))}
	for _, tt := range []struct {
		name string
		hdr  []string
		want int
	}{
		{"no key", nil, http.StatusUnauthorized},
		{"another origin's page", []string{"X-Api-Key", "sekret", "Origin", "https://evil.example"}, http.StatusForbidden},
		{"the key", []string{"X-Api-Key", "sekret"}, http.StatusOK},
	} {
		if code, b, _ := f.Do(http.MethodPost, "/a2a/deepagent", params, tt.hdr...); code != tt.want {
			t.Errorf("%s: %d %s, want %d", tt.name, code, b, tt.want)
		}
	}
	if code, _, _ := f.Do(http.MethodGet, "/.well-known/agent-card.json", nil); code != http.StatusUnauthorized {
		t.Errorf("the card without the key: %d", code)
	}
	code, b, _ := f.Do(http.MethodGet, "/.well-known/agent-card.json", nil, "Authorization", "Bearer sekret")
	if code != http.StatusOK {
		t.Fatalf("the card with the key: %d %s", code, b)
	}
	card := servertest.Decode[a2a.AgentCard](t, b)
	scheme, ok := card.SecuritySchemes["apiKey"].(a2a.APIKeySecurityScheme)
	if !ok || scheme.Name != "X-Api-Key" || scheme.In != a2a.APIKeySecuritySchemeInHeader || len(card.Security) != 1 {
		t.Errorf("the card's security %+v %+v", card.SecuritySchemes, card.Security)
	}
	req, _ := http.NewRequest(http.MethodPost, f.Srv.URL+"/a2a/deepagent", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"message/send"}`))
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("X-Api-Key", "sekret")
	res, err := f.Srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("a text/plain body: %d", res.StatusCode)
	}
}

// TestA2ASendAndGet runs a task to its answer, reads it back, and goes on
// in its context: the context is a thread of the LangGraph API, whose runs
// name their task.
func TestA2ASendAndGet(t *testing.T) {
	f := newFixture(t, servertest.Options{}, replay.Turn{Content: "Paris."}, replay.Turn{Content: "About 2.1 million."})
	task := f.task("message/send", send(textMessage("The capital of France?")))
	if task.Status.State != a2a.TaskStateCompleted || answerOf(t, task) != "Paris." || task.ContextID == "" {
		t.Fatalf("task %+v", task)
	}
	if len(task.History) != 1 || statusText(task.History[0]) != "The capital of France?" || task.History[0].TaskID != task.ID {
		t.Errorf("history %+v", task.History)
	}
	got := f.task("tasks/get", map[string]any{"id": task.ID, "historyLength": 0})
	if got.Status.State != a2a.TaskStateCompleted || answerOf(t, got) != "Paris." || len(got.History) != 0 {
		t.Errorf("tasks/get: %+v", got)
	}
	// The context is the thread.
	var state servertest.WireValues
	f.JSON(http.MethodGet, "/threads/"+task.ContextID+"/state", nil, http.StatusOK, &struct {
		Values *servertest.WireValues `json:"values"`
	}{&state})
	if len(state.Messages) != 2 || state.Messages[1].Content != "Paris." {
		t.Errorf("the thread's messages %+v", state.Messages)
	}
	var runs []struct {
		Metadata map[string]any `json:"metadata"`
	}
	f.JSON(http.MethodGet, "/threads/"+task.ContextID+"/runs", nil, http.StatusOK, &runs)
	if len(runs) != 1 || runs[0].Metadata["a2a_task_id"] != string(task.ID) {
		t.Errorf("the thread's runs %+v", runs)
	}
	// A message in the same context is a new task on the same thread.
	next := f.task("message/send", send(textMessage("And its population?"), "contextId", task.ContextID))
	if next.ID == task.ID || next.ContextID != task.ContextID || answerOf(t, next) != "About 2.1 million." {
		t.Errorf("the next task %+v", next)
	}
	f.JSON(http.MethodGet, "/threads/"+task.ContextID+"/state", nil, http.StatusOK, &struct {
		Values *servertest.WireValues `json:"values"`
	}{&state})
	if len(state.Messages) != 4 {
		t.Errorf("the thread has %d messages, want 4", len(state.Messages))
	}
}

// TestA2AStream streams a task: the task first, working, each step's
// calls and plan, the answer in chunks a line-bounded reader takes, and
// the final status.
func TestA2AStream(t *testing.T) {
	long := strings.Repeat("é", 20000) // 40,000 bytes, in three chunks
	f := newFixture(t, servertest.Options{},
		replay.Turn{Content: "Planning.", ToolCalls: []llm.ToolCall{servertest.Call("c1", "write_todos", `{"todos":[{"content":"Write","status":"in_progress"}]}`)}},
		replay.Turn{ToolCalls: []llm.ToolCall{servertest.Call("c2", "write_file", `{"file_path":"/big.txt","content":"`+strings.Repeat("x", 10000)+`"}`)}},
		replay.Turn{Content: long},
	)
	evs, rpcErr := f.rpcStream("message/stream", send(textMessage("go")))
	if rpcErr != nil {
		t.Fatalf("error %+v", rpcErr)
	}
	first, ok := evs[0].(*a2a.Task)
	if !ok || first.Status.State != a2a.TaskStateSubmitted || len(first.History) != 1 {
		t.Fatalf("first event %#v", evs[0])
	}
	var states []a2a.TaskState
	var calls []string
	var plan, answer string
	chunks := 0
	for _, ev := range evs[1:] {
		switch ev := ev.(type) {
		case *a2a.TaskStatusUpdateEvent:
			if ev.TaskID != first.ID || ev.ContextID != first.ContextID {
				t.Errorf("event of another task %+v", ev)
			}
			states = append(states, ev.Status.State)
			if ev.Status.Message == nil {
				continue
			}
			for _, p := range ev.Status.Message.Parts {
				if d, ok := p.(a2a.DataPart); ok {
					for _, c := range asList(d.Data["tool_calls"]) {
						call := c.(map[string]any)
						calls = append(calls, call["name"].(string))
						if args, ok := call["args"].(string); ok && len(args) > 5000 {
							t.Errorf("a call's arguments in a status are %d bytes", len(args))
						}
					}
					if d.Data["todos"] != nil {
						plan = statusText(ev.Status.Message)
					}
				}
			}
		case *a2a.TaskArtifactUpdateEvent:
			chunks++
			if ev.Artifact.ID != "answer" || ev.Append != (chunks > 1) {
				t.Errorf("chunk %d: %+v", chunks, ev)
			}
			answer += ev.Artifact.Parts[0].(a2a.TextPart).Text
			if !ev.LastChunk && len(states) > 0 && states[len(states)-1] == a2a.TaskStateCompleted {
				t.Error("a chunk after the end")
			}
		default:
			t.Errorf("unexpected event %#v", ev)
		}
	}
	if answer != long || chunks != 3 {
		t.Errorf("the answer came in %d chunks, %d bytes", chunks, len(answer))
	}
	if len(states) < 2 || states[0] != a2a.TaskStateWorking || states[len(states)-1] != a2a.TaskStateCompleted {
		t.Errorf("states %v", states)
	}
	if last := evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent); !last.Final {
		t.Error("the last status is not final")
	}
	if strings.Join(calls, ",") != "write_todos,write_file" || plan != "Plan: 0 of 1 done" {
		t.Errorf("calls %v, plan %q", calls, plan)
	}
	got := f.task("tasks/get", map[string]any{"id": first.ID})
	if answerOf(t, got) != long {
		t.Error("tasks/get: the answer differs from the streamed one")
	}
}

// recordingModel keeps the messages of the last call.
type recordingModel struct {
	llm.Model
	mu   sync.Mutex
	msgs []llm.Message
}

func (m *recordingModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	m.mu.Lock()
	m.msgs = slices.Clone(req.Messages)
	m.mu.Unlock()
	return m.Model.Stream(ctx, req)
}

func (m *recordingModel) last() []llm.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.msgs
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// TestA2AApproval answers a task waiting for a decision with a follow-up
// message on the task: the words, or LangChain's decisions as data.
func TestA2AApproval(t *testing.T) {
	tests := []struct {
		name    string
		answer  []any
		written bool
		result  string // in the tool message the model got
	}{
		{"approve", []any{map[string]any{"kind": "text", "text": "approve"}}, true, ""},
		{"reject with a reason", []any{map[string]any{"kind": "text", "text": "reject: not that file"}}, false, "not that file"},
		{"decisions as data", []any{map[string]any{"kind": "data", "data": map[string]any{"decisions": []any{map[string]any{"type": "reject", "message": "no"}}}}}, false, "no"},
		{"an edit as data", []any{map[string]any{"kind": "data", "data": map[string]any{"decisions": []any{map[string]any{"type": "edit", "edited_action": map[string]any{"name": "write_file", "args": map[string]any{"file_path": "/a.md", "content": "edited"}}}}}}}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, servertest.Options{InterruptOn: []string{"write_file"}},
				replay.Turn{ToolCalls: []llm.ToolCall{servertest.Call("c1", "write_file", `{"file_path":"/a.md","content":"hello"}`)}},
				replay.Turn{Content: "Done."},
			)
			task := f.task("message/send", send(textMessage("write it")))
			if task.Status.State != a2a.TaskStateInputRequired || !strings.Contains(statusText(task.Status.Message), "write_file") {
				t.Fatalf("task %+v, status %q", task.Status.State, statusText(task.Status.Message))
			}
			var question a2a.DataPart
			for _, p := range task.Status.Message.Parts {
				if d, ok := p.(a2a.DataPart); ok {
					question = d
				}
			}
			reqs := asList(question.Data["action_requests"])
			if len(reqs) != 1 || reqs[0].(map[string]any)["name"] != "write_file" {
				t.Errorf("the question's data %v", question.Data)
			}
			// A reply that decides nothing is refused, and the task
			// still waits.
			a := f.rpc("message/send", send(textMessage("maybe later"), "taskId", string(task.ID)))
			if a.Error == nil || a.Error.Code != -32602 || !strings.Contains(a.Error.Data["error"].(string), `reply "approve"`) {
				t.Errorf("a reply that decides nothing: %+v", a)
			}
			msg := map[string]any{"kind": "message", "role": "user", "messageId": "answer", "taskId": task.ID, "parts": tt.answer}
			done := f.task("message/send", map[string]any{"message": msg})
			if done.ID != task.ID || done.Status.State != a2a.TaskStateCompleted || answerOf(t, done) != "Done." {
				t.Fatalf("after the answer: %+v", done)
			}
			var state servertest.WireValues
			f.JSON(http.MethodGet, "/threads/"+task.ContextID+"/state", nil, http.StatusOK, &struct {
				Values *servertest.WireValues `json:"values"`
			}{&state})
			if _, ok := state.Files["/a.md"]; ok != tt.written {
				t.Errorf("file written: %v, want %v", ok, tt.written)
			}
			var tool *servertest.WireMsg
			for i := range state.Messages {
				if state.Messages[i].Type == "tool" {
					tool = &state.Messages[i]
				}
			}
			if tool == nil || !strings.Contains(tool.Content.(string), tt.result) {
				t.Errorf("the tool's result %+v", tool)
			}
			// A finished task takes no more messages; its context does.
			if a := f.rpc("message/send", send(textMessage("approve"), "taskId", string(task.ID))); a.Error == nil || a.Error.Code != -32602 {
				t.Errorf("a message to a completed task: %+v", a)
			}
		})
	}
}

// TestA2ACancel cancels a task at work, and one waiting for a decision,
// whose context then goes on with a new task.
func TestA2ACancel(t *testing.T) {
	m := servertest.NewBlockingModel()
	f := newFixture(t, servertest.Options{Model: m})
	blocking := false
	params := send(textMessage("work"))
	params["configuration"] = map[string]any{"blocking": blocking}
	task := f.task("message/send", params)
	if task.Status.State != a2a.TaskStateSubmitted && task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("a task sent without blocking is %s", task.Status.State)
	}
	servertest.WaitFor(t, "the model call", func() bool { return m.Calls.Load() == 1 })
	if got := f.task("tasks/get", map[string]any{"id": task.ID}); got.Status.State != a2a.TaskStateWorking {
		t.Errorf("at work: %s", got.Status.State)
	}
	// The context is busy: a second task there is refused.
	if a := f.rpc("message/send", send(textMessage("more"), "contextId", task.ContextID)); a.Error == nil || !strings.Contains(a.Error.Data["error"].(string), "running another task") {
		t.Errorf("a second task in a busy context: %+v", a)
	}
	cancelled := f.task("tasks/cancel", map[string]any{"id": task.ID})
	if cancelled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("after cancel: %s", cancelled.Status.State)
	}
	var runs []struct {
		Status string `json:"status"`
	}
	f.JSON(http.MethodGet, "/threads/"+task.ContextID+"/runs", nil, http.StatusOK, &runs)
	if len(runs) != 1 || runs[0].Status != "interrupted" {
		t.Errorf("the run after cancel: %+v", runs)
	}
	if a := f.rpc("tasks/cancel", map[string]any{"id": task.ID}); a.Error == nil || a.Error.Code != -32002 {
		t.Errorf("cancelling a cancelled task: %+v", a)
	}

	t.Run("waiting", func(t *testing.T) {
		f := newFixture(t, servertest.Options{InterruptOn: []string{"write_file"}},
			replay.Turn{ToolCalls: []llm.ToolCall{servertest.Call("c1", "write_file", `{"file_path":"/a.md","content":"hello"}`)}},
			replay.Turn{Content: "Left it."},
		)
		task := f.task("message/send", send(textMessage("write it")))
		if task.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("task %s", task.Status.State)
		}
		if got := f.task("tasks/cancel", map[string]any{"id": task.ID}); got.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("after cancel: %s", got.Status.State)
		}
		if a := f.rpc("message/send", send(textMessage("approve"), "taskId", string(task.ID))); a.Error == nil {
			t.Error("a cancelled task took an answer")
		}
	})

	t.Run("superseded", func(t *testing.T) {
		f := newFixture(t, servertest.Options{InterruptOn: []string{"write_file"}},
			replay.Turn{ToolCalls: []llm.ToolCall{servertest.Call("c1", "write_file", `{"file_path":"/a.md","content":"hello"}`)}},
			replay.Turn{Content: "Something else, then."},
		)
		task := f.task("message/send", send(textMessage("write it")))
		next := f.task("message/send", send(textMessage("never mind"), "contextId", task.ContextID))
		if next.Status.State != a2a.TaskStateCompleted {
			t.Errorf("a new task in the context: %s", next.Status.State)
		}
		if got := f.task("tasks/get", map[string]any{"id": task.ID}); got.Status.State != a2a.TaskStateCanceled {
			t.Errorf("the task it superseded is %s", got.Status.State)
		}
	})
}

// TestA2ABadRequests answers what no task can be with the protocol's
// errors, never a failed run or a 500.
func TestA2ABadRequests(t *testing.T) {
	f := newFixture(t, servertest.Options{}, replay.Turn{Content: "hi"})
	tests := []struct {
		name   string
		method string
		params any
		code   int
		says   string
	}{
		{"an unknown task", "tasks/get", map[string]any{"id": "nope"}, -32001, ""},
		{"a task ID no task has", "tasks/get", map[string]any{"id": "../x"}, -32001, ""},
		{"cancel an unknown task", "tasks/cancel", map[string]any{"id": "nope"}, -32001, ""},
		{"an answer to an unknown task", "message/send", send(textMessage("approve"), "taskId", "nope"), -32001, ""},
		{"a context no thread can be", "message/send", send(textMessage("hi"), "contextId", ".."), -32602, "cannot name a thread"},
		{"a long context", "message/send", send(textMessage("hi"), "contextId", strings.Repeat("c", 300)), -32602, "longer than"},
		{"no parts", "message/send", map[string]any{"message": map[string]any{"role": "user", "messageId": "m", "parts": []any{}}}, -32602, "no text"},
		{"no message", "message/send", map[string]any{}, -32602, "message is required"},
		{"bytes that are not base64", "message/send", map[string]any{"message": map[string]any{"role": "user", "messageId": "m", "parts": []any{map[string]any{"kind": "file", "file": map[string]any{"bytes": "%%%", "name": "a.txt", "mimeType": "text/plain"}}}}}, -32602, "not base64"},
		{"push notifications", "tasks/pushNotificationConfig/get", map[string]any{"id": "t"}, -32003, ""},
		{"an unknown method", "tasks/everything", map[string]any{}, -32601, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := f.rpc(tt.method, tt.params)
			if a.Error == nil || a.Error.Code != tt.code {
				t.Fatalf("answer %+v %s, want code %d", a.Error, a.Result, tt.code)
			}
			if tt.says != "" && !strings.Contains(a.Error.Data["error"].(string), tt.says) {
				t.Errorf("error %v, want it to say %q", a.Error.Data, tt.says)
			}
		})
	}
	code, b, _ := f.Do(http.MethodPost, "/a2a/deepagent", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","messageId":"m","parts":[{"kind":"text","text":"`+strings.Repeat("x", 33<<20)+`"}]}}}`)
	if code != http.StatusOK || !bytes.Contains(b, []byte(`"code":-32700`)) {
		t.Errorf("a body over the bound: %d %.200s", code, b)
	}
	if f.ThreadCount() != 0 {
		t.Errorf("%d threads after requests that start nothing", f.ThreadCount())
	}
}

// TestA2AFiles gives the agent a message's files: text in a context
// block, images as images, other bytes as a note, links as links (never
// fetched).
func TestA2AFiles(t *testing.T) {
	model := &recordingModel{Model: replay.New(replay.Turn{Content: "Read."})}
	f := newFixture(t, servertest.Options{Model: model})
	msg := map[string]any{"role": "user", "messageId": "m", "parts": []any{
		map[string]any{"kind": "text", "text": "Look at these."},
		map[string]any{"kind": "file", "file": map[string]any{"bytes": "aGVsbG8=", "name": "a.txt", "mimeType": "text/plain"}},
		map[string]any{"kind": "file", "file": map[string]any{"bytes": "iVBORw0KGgo=", "name": "p.png", "mimeType": "image/png"}},
		map[string]any{"kind": "file", "file": map[string]any{"bytes": "AAEC", "name": "x.bin", "mimeType": "application/octet-stream"}},
		map[string]any{"kind": "file", "file": map[string]any{"uri": "http://127.0.0.1:1/secret", "name": "s"}},
		map[string]any{"kind": "data", "data": map[string]any{"n": 1}},
	}}
	if task := f.task("message/send", map[string]any{"message": msg}); task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task %s", task.Status.State)
	}
	got := model.last()
	if len(got) == 0 {
		t.Fatal("the model was not called")
	}
	user := got[len(got)-1]
	if len(user.Parts) != 3 || user.Parts[1].Type != llm.PartImage || user.Parts[1].MIMEType != "image/png" {
		t.Fatalf("the user message's parts %+v", user.Parts)
	}
	for _, want := range []string{"Look at these.", "<context name=\"a.txt\">\nhello\n</context>"} {
		if !strings.Contains(user.Parts[0].Text, want) {
			t.Errorf("the text %q lacks %q", user.Parts[0].Text, want)
		}
	}
	for _, want := range []string{"(a file, x.bin, application/octet-stream, 3 bytes, not included)", "[s](http://127.0.0.1:1/secret)", `{"n":1}`} {
		if !strings.Contains(user.Parts[2].Text, want) {
			t.Errorf("the text after the image %q lacks %q", user.Parts[2].Text, want)
		}
	}
}

// TestA2ATaskOfADeadReplica reads as failed a task whose run's replica
// stopped before the run ended: it will never end otherwise.
func TestA2ATaskOfADeadReplica(t *testing.T) {
	for _, tt := range []struct {
		name string
		seen time.Duration // the gone replica's last beat, before now
		want a2a.TaskState
	}{
		{"silent for an hour", -time.Hour, a2a.TaskStateFailed},
		{"alive", 0, a2a.TaskStateWorking},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rs := foreignRun(t, time.Now().Add(tt.seen))
			rs[0].st.Put(context.Background(), []string{"deepagents", "server", "a2a_task_contexts"}, "task1", map[string]any{"context_id": "t"})
			rs[0].st.Put(context.Background(), []string{"deepagents", "server", "a2a_tasks", "t"}, "task1", map[string]any{"context_id": "t", "assistant_id": deepagentID, "run_id": "r1", "state": "submitted", "history": []any{}})
			got := rs[0].task("tasks/get", map[string]any{"id": "task1"})
			if got.Status.State != tt.want {
				t.Fatalf("the task is %s, want %s", got.Status.State, tt.want)
			}
			if tt.want == a2a.TaskStateFailed && !strings.Contains(statusText(got.Status.Message), "stopped") {
				t.Errorf("status %q", statusText(got.Status.Message))
			}
		})
	}
}

// TestA2AHistoryBounded keeps at most 64 KiB of a message's parts in its
// task's history, however many it sends, and no file bytes.
func TestA2AHistoryBounded(t *testing.T) {
	f := newFixture(t, servertest.Options{}, replay.Turn{Content: "ok"})
	parts := []any{map[string]any{"kind": "file", "file": map[string]any{"bytes": "aGVsbG8=", "name": "a.txt", "mimeType": "text/plain"}}}
	for range 600 {
		parts = append(parts, map[string]any{"kind": "text", "text": strings.Repeat("x", 1024), "metadata": map[string]any{"pad": strings.Repeat("m", 10000)}})
	}
	for range 20000 {
		parts = append(parts, map[string]any{"kind": "text", "text": ""})
	}
	task := f.task("message/send", map[string]any{"message": map[string]any{"role": "user", "messageId": strings.Repeat("i", 100000), "parts": parts,
		"metadata": map[string]any{"pad": strings.Repeat("m", 1<<20)}, "extensions": []string{strings.Repeat("e", 1<<20)}}})
	b, _ := json.Marshal(task.History)
	if len(task.History) != 1 || len(b) > 80<<10 {
		t.Fatalf("history of %d messages, %d bytes", len(task.History), len(b))
	}
	kept := task.History[0].Parts
	if !strings.Contains(statusText(task.History[0]), "a.txt, not kept") || !strings.Contains(statusText(&a2a.Message{Parts: kept[len(kept)-1:]}), "more parts, not kept") {
		t.Errorf("the kept message does not say what it left out: %.300s", statusText(task.History[0]))
	}
}

// TestA2AStreamKeepAlive writes a comment line between events while a
// step is silent (a model that stalls), as the LangGraph streams do.
func TestA2AStreamKeepAlive(t *testing.T) {
	m := servertest.NewBlockingModel()
	defer close(m.Release)
	f := newFixture(t, servertest.Options{Model: m, Heartbeat: 20 * time.Millisecond})
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "message/stream", "params": send(textMessage("work"))})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.Srv.URL+"/a2a/deepagent", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res, err := f.Srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	events := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "data: ") {
			events++
		}
		if line == ": keep-alive" {
			return
		}
	}
	t.Fatalf("no keep-alive in the stream (%d events): %v", events, sc.Err())
}

// TestA2ATasksGoWithTheirThread: deleting a thread deletes its tasks,
// one at work too (its end is not recorded after).
func TestA2ATasksGoWithTheirThread(t *testing.T) {
	m := servertest.NewBlockingModel()
	f := newFixture(t, servertest.Options{Model: m})
	params := send(textMessage("work"))
	params["configuration"] = map[string]any{"blocking": false}
	task := f.task("message/send", params)
	servertest.WaitFor(t, "the model call", func() bool { return m.Calls.Load() == 1 })
	if code, b, _ := f.Do(http.MethodDelete, "/threads/"+task.ContextID, nil); code != http.StatusNoContent {
		t.Fatalf("delete: %d %s", code, b)
	}
	if a := f.rpc("tasks/get", map[string]any{"id": task.ID}); a.Error == nil || a.Error.Code != -32001 {
		t.Errorf("the task of a deleted thread: %+v %s", a.Error, a.Result)
	}
}

// TestA2ACancelRacesAnAnswer sends a cancel and an answer to a task that
// waits for a decision at once, again and again: whichever wins, what
// each answered stays the task's state, and an ended task never changes.
func TestA2ACancelRacesAnAnswer(t *testing.T) {
	f := newFixture(t, servertest.Options{Model: replay.Inline{}, InterruptOn: []string{"write_file"}})
	script := `{"turns":[{"tool_calls":[{"name":"write_file","args":{"file_path":"/a.md","content":"hi"}}]},{"content":"Written."}]}`
	for i := range 30 {
		task := f.task("message/send", send(textMessage(script)))
		if task.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("round %d: %s", i, task.Status.State)
		}
		var wg sync.WaitGroup
		var cancelled, answered rpcAnswer
		wg.Add(2)
		go func() { defer wg.Done(); cancelled = f.rpc("tasks/cancel", map[string]any{"id": task.ID}) }()
		go func() {
			defer wg.Done()
			answered = f.rpc("message/send", send(textMessage("approve"), "taskId", string(task.ID)))
		}()
		wg.Wait()
		var final *a2a.Task
		servertest.WaitFor(t, "the task's end", func() bool {
			final = f.task("tasks/get", map[string]any{"id": task.ID})
			return final.Status.State.Terminal()
		})
		for _, a := range []rpcAnswer{cancelled, answered} {
			if a.Error != nil {
				continue
			}
			if got := servertest.Decode[*a2a.Task](t, a.Result); got.Status.State.Terminal() && got.Status.State != final.Status.State {
				t.Fatalf("round %d: answered %s, and the task ended %s", i, got.Status.State, final.Status.State)
			}
		}
		if cancelled.Error != nil && answered.Error != nil {
			t.Fatalf("round %d: both refused: %+v %+v", i, cancelled.Error, answered.Error)
		}
		time.Sleep(20 * time.Millisecond)
		if again := f.task("tasks/get", map[string]any{"id": task.ID}); again.Status.State != final.Status.State {
			t.Fatalf("round %d: the ended task went from %s to %s", i, final.Status.State, again.Status.State)
		}
	}
}

// TestA2AEventsFitALine keeps every streamed event within the 64 KiB line
// the Go SDK's stream reader takes, with large arguments that JSON
// escapes six times over, several calls at once, and the question of a
// task that waits for them.
func TestA2AEventsFitALine(t *testing.T) {
	big := strings.Repeat("<p>", 40000) // 120,000 bytes, 720,000 escaped
	var calls []llm.ToolCall
	for i := range 10 {
		calls = append(calls, servertest.Call(fmt.Sprintf("c%d", i), "write_file", fmt.Sprintf(`{"file_path":"/f%d.html","content":%q}`, i, big)))
	}
	f := newFixture(t, servertest.Options{InterruptOn: []string{"write_file"}},
		replay.Turn{Content: strings.Repeat("<", 50000), ToolCalls: calls},
	)
	code, b, _ := f.Do(http.MethodPost, "/a2a/deepagent", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "message/stream", "params": send(textMessage("write them"))})
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, b)
	}
	states := 0
	for _, line := range strings.Split(string(b), "\n") {
		if len(line) > 64<<10 {
			t.Errorf("an event line of %d bytes: %.200s", len(line), line)
		}
		if strings.Contains(line, `"input-required"`) {
			states++
		}
	}
	if states != 1 {
		t.Errorf("%d input-required events", states)
	}
}

// TestA2AResubscribeThroughAnotherReplica follows a task through a replica
// that does not run it: its changes of state, then its answer and its end.
func TestA2AResubscribeThroughAnotherReplica(t *testing.T) {
	m := servertest.NewBlockingModel()
	rs := newReplicas(t, 2, checkpoint.NewMemorySaver(), store.NewMemoryStore(), func() llm.Model { return m })
	a, b := rs[0], rs[1]
	params := send(textMessage("work"))
	params["configuration"] = map[string]any{"blocking": false}
	task := a.task("message/send", params)
	servertest.WaitFor(t, "the model call", func() bool { return m.Calls.Load() == 1 })
	go func() {
		time.Sleep(600 * time.Millisecond)
		close(m.Release)
	}()
	evs, rpcErr := b.rpcStream("tasks/resubscribe", map[string]any{"id": task.ID})
	if rpcErr != nil {
		t.Fatal(rpcErr)
	}
	if first, ok := evs[0].(*a2a.Task); !ok || first.Status.State != a2a.TaskStateWorking {
		t.Fatalf("first event %#v", evs[0])
	}
	answer := ""
	for _, ev := range evs {
		if c, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			answer += c.Artifact.Parts[0].(a2a.TextPart).Text
		}
	}
	last, ok := evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent)
	if !ok || !last.Final || last.Status.State != a2a.TaskStateCompleted || answer != "workingdone" {
		t.Errorf("the stream ends %#v, answer %q", evs[len(evs)-1], answer)
	}
}

// TestA2AStreamClientLeaves: a client that stops following a stream
// leaves its task going to its end.
func TestA2AStreamClientLeaves(t *testing.T) {
	m := servertest.NewBlockingModel()
	f := newFixture(t, servertest.Options{Model: m})
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "message/stream", "params": send(textMessage("work"))})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.Srv.URL+"/a2a/deepagent", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res, err := f.Srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(res.Body)
	var taskID a2a.TaskID
	for taskID == "" && sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			taskID = servertest.Decode[*a2a.Task](t, servertest.Decode[rpcAnswer](t, []byte(data)).Result).ID
		}
	}
	cancel()
	res.Body.Close()
	servertest.WaitFor(t, "the model call", func() bool { return m.Calls.Load() == 1 })
	close(m.Release)
	var got *a2a.Task
	servertest.WaitFor(t, "the task's end", func() bool {
		got = f.task("tasks/get", map[string]any{"id": taskID})
		return got.Status.State.Terminal()
	})
	if got.Status.State != a2a.TaskStateCompleted || answerOf(t, got) != "workingdone" {
		t.Errorf("the task the client left: %s", got.Status.State)
	}
}

// TestA2ACloseWhileWorking closes the server while a task works: Close
// returns, and the task's end is recorded: failed, as the server stopped.
func TestA2ACloseWhileWorking(t *testing.T) {
	m := servertest.NewBlockingModel()
	saver, st := checkpoint.NewMemorySaver(), store.NewMemoryStore()
	rs := newReplicas(t, 1, saver, st, func() llm.Model { return m })
	params := send(textMessage("work"))
	params["configuration"] = map[string]any{"blocking": false}
	task := rs[0].task("message/send", params)
	servertest.WaitFor(t, "the model call", func() bool { return m.Calls.Load() == 1 })
	done := make(chan struct{})
	go func() { rs[0].s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	it, err := st.Get(context.Background(), []string{"deepagents", "server", "a2a_tasks", task.ContextID}, string(task.ID))
	if err != nil || it.Value["state"] != "failed" || !strings.Contains(fmt.Sprint(it.Value["status"]), "The server stopped") {
		t.Errorf("the task's record after Close: %v %v", it, err)
	}
}
