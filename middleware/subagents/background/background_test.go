package background_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/internal/golden"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/subagents"
	"github.com/deepagents-go/deepagents/middleware/subagents/background"
	"github.com/deepagents-go/deepagents/thread"
	"github.com/deepagents-go/deepagents/tool"
)

// stepModel answers the main agent with steps that see the request (so a
// step can use the task id an earlier tool result gave), and subagents
// with their own functions.
type stepModel struct {
	mu    sync.Mutex
	steps []func(req *llm.Request) llm.Message
	n     int
	subs  map[string]func(ctx context.Context, req *llm.Request) (llm.Message, error)
}

func (m *stepModel) add(steps ...func(req *llm.Request) llm.Message) {
	m.mu.Lock()
	m.steps = append(m.steps, steps...)
	m.mu.Unlock()
}

func (m *stepModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		var msg llm.Message
		if f, ok := m.subs[llm.AgentFromContext(ctx)]; ok {
			var err error
			if msg, err = f(ctx, req); err != nil {
				yield(llm.Chunk{}, err)
				return
			}
		} else {
			m.mu.Lock()
			if m.n >= len(m.steps) {
				m.mu.Unlock()
				yield(llm.Chunk{}, fmt.Errorf("main agent called %d times, %d steps scripted", m.n+1, len(m.steps)))
				return
			}
			f := m.steps[m.n]
			m.n++
			m.mu.Unlock()
			msg = f(req)
		}
		msg.Role = llm.RoleAssistant
		stop := llm.StopEnd
		if len(msg.ToolCalls) > 0 {
			stop = llm.StopToolUse
		}
		yield(llm.Chunk{Type: llm.ChunkDone, Response: &llm.Response{Message: msg, StopReason: stop}}, nil)
	}
}

func (m *stepModel) remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.steps) - m.n
}

// calls makes an assistant message calling tools; args are name, JSON
// arguments pairs.
func calls(nameArgs ...any) llm.Message {
	msg := llm.Message{Role: llm.RoleAssistant}
	for i := 0; i+1 < len(nameArgs); i += 2 {
		b, err := json.Marshal(nameArgs[i+1])
		if err != nil {
			panic(err)
		}
		msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: fmt.Sprintf("call_%s_%d", nameArgs[i], time.Now().UnixNano()), Name: nameArgs[i].(string), Args: b})
	}
	return msg
}

func step(msg llm.Message) func(*llm.Request) llm.Message {
	return func(*llm.Request) llm.Message { return msg }
}

// toolResults returns the texts of the tool results after the last
// assistant message of a request, in order.
func toolResults(req *llm.Request) []string {
	var out []string
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == llm.RoleTool; i-- {
		out = append([]string{req.Messages[i].Text()}, out...)
	}
	return out
}

func taskIDOf(t *testing.T, result string) string {
	t.Helper()
	_, id, ok := strings.Cut(result, "task_id: ")
	if !ok {
		t.Errorf("no task id in %q", result)
	}
	return strings.TrimSpace(id)
}

type taskReport struct {
	TaskID       string `json:"task_id"`
	SubagentType string `json:"subagent_type"`
	Status       string `json:"status"`
	Result       string `json:"result"`
	Error        string `json:"error"`
	Note         string `json:"note"`
}

func parseReport(t *testing.T, s string) taskReport {
	t.Helper()
	var r taskReport
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Errorf("not a task report: %q: %v", s, err)
	}
	return r
}

// gated is a Runnable that works until released or cancelled.
type gated struct {
	answer    string
	release   chan struct{}
	started   chan agent.Input
	cancelled chan error
}

func newGated(answer string) *gated {
	return &gated{answer: answer, release: make(chan struct{}), started: make(chan agent.Input, 8), cancelled: make(chan error, 8)}
}

func (g *gated) Invoke(ctx context.Context, in agent.Input) (*agent.Result, error) {
	g.started <- in
	select {
	case <-g.release:
		st := thread.NewState()
		st.Messages = append(append(st.Messages, in.Messages...), llm.AssistantText(g.answer+"\n"))
		return &agent.Result{Status: agent.StatusCompleted, State: st, Usage: llm.Usage{InputTokens: 3, OutputTokens: 2}}, nil
	case <-ctx.Done():
		g.cancelled <- context.Cause(ctx)
		return nil, ctx.Err()
	}
}

func received[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Errorf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

func newAsyncAgent(t *testing.T, m llm.Model, saver checkpoint.Saver, cfg background.Config) *agent.Agent {
	t.Helper()
	cfg.Agent.Model = m
	as, err := background.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Model: m, Checkpointer: saver, Tools: []tool.Tool{noteTool()}, Middleware: []agent.Middleware{as}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func noLeaks(t *testing.T) {
	t.Helper()
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

// A local background task is started, polled while it runs, polled once
// done, and awaited; its events reach the parent's stream with its
// namespace while that run lasts.
func TestAsyncLocalStartPollWait(t *testing.T) {
	noLeaks(t)
	slow := newGated("counted to ten")
	m := &stepModel{subs: map[string]func(context.Context, *llm.Request) (llm.Message, error){
		"researcher": func(context.Context, *llm.Request) (llm.Message, error) {
			return llm.AssistantText("the answer is 42"), nil
		},
	}}
	saver := checkpoint.NewMemorySaver()
	a := newAsyncAgent(t, m, saver, background.Config{Subagents: []background.Subagent{
		{Subagent: subagents.Subagent{Name: "researcher", Description: "researches", SystemPrompt: "You research."}},
		{Subagent: subagents.Subagent{Name: "slow", Description: "takes its time", Runnable: slow}},
	}})
	var slowID, researcherID, startCall string
	var reports []taskReport
	m.add(
		func(*llm.Request) llm.Message {
			msg := calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "slow", "description": "count to ten"})
			startCall = msg.ToolCalls[0].ID
			return msg
		},
		func(req *llm.Request) llm.Message {
			slowID = taskIDOf(t, toolResults(req)[0])
			// The task runs: the runnable got the task as its only message.
			in := received(t, slow.started, "the slow task to start")
			if len(in.Messages) != 1 || in.Messages[0].Text() != "count to ten" {
				t.Errorf("slow task input = %+v", in.Messages)
			}
			if want := "slow:" + startCall; len(in.Namespace) != 1 || in.Namespace[0] != want {
				t.Errorf("namespace = %v, want [%s]", in.Namespace, want)
			}
			return calls(background.CheckAsyncTaskTool, map[string]string{"task_id": slowID},
				background.StartAsyncTaskTool, map[string]string{"subagent_type": "researcher", "description": "find the answer"})
		},
		func(req *llm.Request) llm.Message {
			res := toolResults(req)
			reports = append(reports, parseReport(t, res[0]))
			researcherID = taskIDOf(t, res[1])
			return calls(background.WaitAsyncTaskTool, map[string]any{"task_id": researcherID, "timeout": 5})
		},
		func(req *llm.Request) llm.Message {
			reports = append(reports, parseReport(t, toolResults(req)[0]))
			return llm.AssistantText("started")
		},
	)
	var subEvents int
	var last agent.Event
	var end *agent.Event
	for e, err := range a.Stream(context.Background(), agent.Input{ThreadID: "t1", Messages: []llm.Message{llm.UserText("go")}}) {
		if err != nil {
			t.Fatal(err)
		}
		if end != nil {
			t.Errorf("event after the run's run_end: %+v", e)
		}
		if len(e.Namespace) == 1 && strings.HasPrefix(e.Namespace[0], "researcher:") {
			subEvents++
		}
		if e.Type == agent.EventRunEnd && len(e.Namespace) == 0 {
			e := e
			end = &e
		}
		last = e
	}
	if end == nil || end.Status != agent.StatusCompleted || last.Type != agent.EventRunEnd {
		t.Fatalf("run ended with %+v", end)
	}
	if subEvents < 3 {
		t.Errorf("%d events of the background researcher in the parent's stream", subEvents)
	}
	if len(reports) != 2 {
		t.Fatalf("reports = %+v", reports)
	}
	if r := reports[0]; r.Status != background.Running || r.TaskID != slowID || r.SubagentType != "slow" || r.Result != "" {
		t.Errorf("check while running = %+v", r)
	}
	if r := reports[1]; r.Status != background.Success || r.Result != "the answer is 42" || r.TaskID != researcherID {
		t.Errorf("wait = %+v", r)
	}

	// The run is over; the slow task goes on. Once it is done, a later
	// run on the thread collects its result.
	select {
	case err := <-slow.cancelled:
		t.Fatalf("the slow task was cancelled when the run ended: %v", err)
	default:
	}
	close(slow.release)
	var list string
	m.add(
		step(calls(background.WaitAsyncTaskTool, map[string]any{"task_id": "  " + slowID + " "})),
		func(req *llm.Request) llm.Message {
			reports = append(reports, parseReport(t, toolResults(req)[0]))
			return calls(background.ListAsyncTasksTool, map[string]any{}, background.CheckAsyncTaskTool, map[string]string{"task_id": slowID})
		},
		func(req *llm.Request) llm.Message {
			res := toolResults(req)
			list = res[0]
			reports = append(reports, parseReport(t, res[1]))
			return llm.AssistantText("all done")
		},
	)
	res, err := a.Invoke(context.Background(), agent.Input{ThreadID: "t1", Messages: []llm.Message{llm.UserText("and the slow one?")}})
	if err != nil {
		t.Fatal(err)
	}
	if r := reports[2]; r.Status != background.Success || r.Result != "counted to ten" {
		t.Errorf("wait after the run = %+v", r)
	}
	if r := reports[3]; r.Status != background.Success || r.Result != "counted to ten" {
		t.Errorf("second check = %+v", r)
	}
	for _, id := range []string{slowID, researcherID} {
		if !strings.Contains(list, "task_id: "+id) || !strings.Contains(list, "status: success") || !strings.HasPrefix(list, "2 tracked task(s):") {
			t.Errorf("list = %q", list)
		}
	}
	if res.Usage.InputTokens != 3 || res.Usage.OutputTokens != 2 {
		t.Errorf("usage = %+v: the collected task's usage counts once, in the run that collected it", res.Usage)
	}
	recs, err := background.Tasks(res.State.Values)
	if err != nil {
		t.Fatal(err)
	}
	if r := recs[slowID]; r.Status != background.Success || !r.Collected || r.AgentName != "slow" || r.Remote {
		t.Errorf("record = %+v", r)
	}
	if m.remaining() != 0 {
		t.Errorf("%d steps not played", m.remaining())
	}
}

// A running task is cancelled alone: its context is cancelled, its status
// is cancelled, and the other task goes on.
func TestAsyncLocalCancel(t *testing.T) {
	noLeaks(t)
	one, two := newGated("one"), newGated("two")
	m := &stepModel{}
	a := newAsyncAgent(t, m, checkpoint.NewMemorySaver(), background.Config{Subagents: []background.Subagent{
		{Subagent: subagents.Subagent{Name: "one", Description: "first", Runnable: one}},
		{Subagent: subagents.Subagent{Name: "two", Description: "second", Runnable: two}},
	}})
	var ids []string
	var out []string
	m.add(
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "one", "description": "x"},
			background.StartAsyncTaskTool, map[string]string{"subagent_type": "two", "description": "y"})),
		func(req *llm.Request) llm.Message {
			for _, r := range toolResults(req) {
				ids = append(ids, taskIDOf(t, r))
			}
			received(t, one.started, "task one")
			received(t, two.started, "task two")
			return calls(background.CancelAsyncTaskTool, map[string]string{"task_id": ids[0]})
		},
		func(req *llm.Request) llm.Message {
			out = append(out, toolResults(req)...)
			return calls(background.CheckAsyncTaskTool, map[string]string{"task_id": ids[0]},
				background.CheckAsyncTaskTool, map[string]string{"task_id": ids[1]},
				background.CancelAsyncTaskTool, map[string]string{"task_id": ids[0]})
		},
		func(req *llm.Request) llm.Message {
			out = append(out, toolResults(req)...)
			return llm.AssistantText("ok")
		},
	)
	if _, err := a.Invoke(context.Background(), agent.Input{ThreadID: "c", Messages: []llm.Message{llm.UserText("go")}}); err != nil {
		t.Fatal(err)
	}
	if cause := received(t, one.cancelled, "task one's cancellation"); cause == nil || !strings.Contains(cause.Error(), "cancel_async_task") {
		t.Errorf("cause = %v", cause)
	}
	if out[0] != "Cancelled async subagent task: "+ids[0] {
		t.Errorf("cancel = %q", out[0])
	}
	if r := parseReport(t, out[1]); r.Status != background.Cancelled || r.Error == "" {
		t.Errorf("check of the cancelled task = %+v", r)
	}
	if r := parseReport(t, out[2]); r.Status != background.Running {
		t.Errorf("check of the other task = %+v", r)
	}
	if want := "Task " + ids[0] + " had already finished (status cancelled); nothing to cancel."; out[3] != want {
		t.Errorf("second cancel = %q, want %q", out[3], want)
	}
	select {
	case err := <-two.cancelled:
		t.Errorf("task two was cancelled too: %v", err)
	default:
	}
	// Closing the agent stops the task still running (and noLeaks checks
	// that its goroutine ended).
	a.Close()
	if cause := received(t, two.cancelled, "task two's cancellation by Close"); !strings.Contains(cause.Error(), "closed") {
		t.Errorf("cause = %v", cause)
	}
}

// Arguments are untrusted: unknown ids and types, empty texts, negative
// and huge timeouts, a bad filter, and too many tasks get error results.
func TestAsyncHostileArguments(t *testing.T) {
	noLeaks(t)
	slow := newGated("done")
	defer close(slow.release)
	m := &stepModel{}
	a := newAsyncAgent(t, m, checkpoint.NewMemorySaver(), background.Config{
		Subagents: []background.Subagent{{Subagent: subagents.Subagent{Name: "slow", Description: "slow", Runnable: slow}}},
		Options:   background.Options{MaxRunning: 1, MaxWait: 50 * time.Millisecond},
	})
	var id string
	var results []llm.Message
	m.add(
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "slow", "description": "one"})),
		func(req *llm.Request) llm.Message {
			id = taskIDOf(t, toolResults(req)[0])
			huge := strings.Repeat("x", 100000)
			return calls(
				background.StartAsyncTaskTool, map[string]string{"subagent_type": "slow", "description": "two"},
				background.StartAsyncTaskTool, map[string]string{"subagent_type": huge, "description": "x"},
				background.StartAsyncTaskTool, map[string]string{"subagent_type": "slow", "description": "  "},
				background.CheckAsyncTaskTool, map[string]string{"task_id": huge},
				background.CheckAsyncTaskTool, map[string]string{"task_id": ""},
				background.WaitAsyncTaskTool, map[string]any{"task_id": id, "timeout": -1},
				background.WaitAsyncTaskTool, map[string]any{"task_id": id, "timeout": 1e300},
				background.UpdateAsyncTaskTool, map[string]string{"task_id": "nope", "message": "more"},
				background.UpdateAsyncTaskTool, map[string]string{"task_id": id, "message": ""},
				background.CancelAsyncTaskTool, map[string]string{"task_id": "nope"},
				background.ListAsyncTasksTool, map[string]string{"status_filter": "bogus"},
				background.ListAsyncTasksTool, map[string]string{"status_filter": "success"},
				background.CheckAsyncTaskTool, map[string]any{"task_id": 7},
			)
		},
		func(req *llm.Request) llm.Message {
			for _, msg := range req.Messages[len(req.Messages)-13:] {
				results = append(results, msg)
			}
			return llm.AssistantText("ok")
		},
	)
	if _, err := a.Invoke(context.Background(), agent.Input{ThreadID: "h", Messages: []llm.Message{llm.UserText("go")}}); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		isError bool
		text    string
	}{
		{true, "Error: 1 background tasks are already running, the most allowed"},
		{true, "Error: unknown async subagent type `xxxx"},
		{true, "Error: description is empty"},
		{true, "Error: no background task with task_id \"xxxx"},
		{true, "Error: task_id is empty"},
		{true, "Error: timeout must be a positive number of seconds"},
		{false, `"note":"the timeout was lowered to 50ms, the most allowed; still running after waiting 50ms"`},
		{true, "Error: no background task with task_id \"nope\""},
		{true, "Error: message is empty"},
		{true, "Error: no background task with task_id \"nope\""},
		{true, "Error: unknown status_filter \"bogus\""},
		{false, "No async subagent tasks with status success (1 tracked in all)."},
		{true, "task_id"},
	}
	for i, w := range want {
		got := results[i]
		if got.IsError != w.isError || !strings.Contains(got.Text(), w.text) {
			t.Errorf("result %d = (error %v) %q, want (error %v) containing %q", i, got.IsError, clipText(got.Text()), w.isError, w.text)
		}
		if len(got.Text()) > 1000 {
			t.Errorf("result %d echoes %d bytes", i, len(got.Text()))
		}
	}
	if r := parseReport(t, results[6].Text()); r.Status != background.Running {
		t.Errorf("wait with a huge timeout = %+v", r)
	}
}

func clipText(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// A thread keeps at most MaxTasks records: the oldest finished one makes
// room, and a start is refused when none has finished.
func TestAsyncMaxTasks(t *testing.T) {
	noLeaks(t)
	m := &stepModel{subs: map[string]func(context.Context, *llm.Request) (llm.Message, error){
		"quick": func(context.Context, *llm.Request) (llm.Message, error) {
			return llm.AssistantText("quick answer"), nil
		},
	}}
	slow := newGated("slow")
	defer close(slow.release)
	n := 0
	a := newAsyncAgent(t, m, checkpoint.NewMemorySaver(), background.Config{
		Subagents: []background.Subagent{
			{Subagent: subagents.Subagent{Name: "quick", Description: "quick"}},
			{Subagent: subagents.Subagent{Name: "slow", Description: "slow", Runnable: slow}},
		},
		Options: background.Options{MaxTasks: 2, NewTaskID: func() string { n++; return fmt.Sprintf("task-%d", n) }},
	})
	var out []string
	m.add(
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "quick", "description": "a"})),
		step(calls(background.WaitAsyncTaskTool, map[string]any{"task_id": "task-1"})),
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "slow", "description": "b"})),
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "quick", "description": "c"})),
		func(req *llm.Request) llm.Message {
			out = append(out, toolResults(req)...)
			return calls(background.WaitAsyncTaskTool, map[string]any{"task_id": "task-3"})
		},
		step(calls(background.ListAsyncTasksTool, map[string]any{})),
		func(req *llm.Request) llm.Message {
			out = append(out, toolResults(req)...)
			return calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "quick", "description": "d"})
		},
		func(req *llm.Request) llm.Message {
			out = append(out, toolResults(req)...)
			return llm.AssistantText("ok")
		},
	)
	if _, err := a.Invoke(context.Background(), agent.Input{ThreadID: "m", Messages: []llm.Message{llm.UserText("go")}}); err != nil {
		t.Fatal(err)
	}
	if out[0] != "Launched async subagent. task_id: task-3" {
		t.Errorf("third start (task-1 made room) = %q", out[0])
	}
	if !strings.HasPrefix(out[1], "2 tracked task(s):") || strings.Contains(out[1], "task-1") {
		t.Errorf("list = %q", out[1])
	}
	if out[2] != "Launched async subagent. task_id: task-4" {
		t.Errorf("fourth start (task-3 made room) = %q", out[2])
	}

	// With every recorded task running, a start is refused.
	m2 := &stepModel{}
	a2 := newAsyncAgent(t, m2, nil, background.Config{
		Subagents: []background.Subagent{{Subagent: subagents.Subagent{Name: "slow", Description: "slow", Runnable: slow}}},
		Options:   background.Options{MaxTasks: 1},
	})
	var refused llm.Message
	m2.add(step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "slow", "description": "a"})),
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "slow", "description": "b"})),
		func(req *llm.Request) llm.Message {
			refused = req.Messages[len(req.Messages)-1]
			return llm.AssistantText("ok")
		})
	if _, err := a2.Invoke(context.Background(), agent.Prompt("go")); err != nil {
		t.Fatal(err)
	}
	if want := "Error: this conversation already has 1 background tasks and none has finished"; !refused.IsError || !strings.HasPrefix(refused.Text(), want) {
		t.Errorf("start over MaxTasks = %q, want %q", refused.Text(), want)
	}
}

// Local tasks die with their process: a thread continued by another
// instance of the agent finds them lost, and says so.
func TestAsyncLocalLost(t *testing.T) {
	noLeaks(t)
	slow := newGated("never")
	saver := checkpoint.NewMemorySaver()
	cfg := background.Config{Subagents: []background.Subagent{{Subagent: subagents.Subagent{Name: "slow", Description: "slow", Runnable: slow}}}}
	m1 := &stepModel{}
	a1 := newAsyncAgent(t, m1, saver, cfg)
	var id string
	m1.add(step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "slow", "description": "x"})),
		func(req *llm.Request) llm.Message {
			id = taskIDOf(t, toolResults(req)[0])
			return llm.AssistantText("started")
		})
	if _, err := a1.Invoke(context.Background(), agent.Input{ThreadID: "l", Messages: []llm.Message{llm.UserText("go")}}); err != nil {
		t.Fatal(err)
	}
	a1.Close() // the process ends
	received(t, slow.cancelled, "the task's end")

	m2 := &stepModel{}
	a2 := newAsyncAgent(t, m2, saver, cfg)
	var out []string
	m2.add(
		step(calls(background.CheckAsyncTaskTool, map[string]string{"task_id": id})),
		func(req *llm.Request) llm.Message {
			out = append(out, toolResults(req)...)
			return calls(background.ListAsyncTasksTool, map[string]any{}, background.CancelAsyncTaskTool, map[string]string{"task_id": id})
		},
		func(req *llm.Request) llm.Message {
			out = append(out, toolResults(req)...)
			return llm.AssistantText("ok")
		},
	)
	res, err := a2.Invoke(context.Background(), agent.Input{ThreadID: "l", Messages: []llm.Message{llm.UserText("and?")}})
	if err != nil {
		t.Fatal(err)
	}
	if r := parseReport(t, out[0]); r.Status != background.Lost || !strings.Contains(r.Error, "process that has since ended") {
		t.Errorf("check = %+v", r)
	}
	if !strings.Contains(out[1], "status: lost") {
		t.Errorf("list = %q", out[1])
	}
	if !strings.Contains(out[2], "nothing to cancel") {
		t.Errorf("cancel = %q", out[2])
	}
	recs, _ := background.Tasks(res.State.Values)
	if recs[id].Status != background.Lost {
		t.Errorf("record = %+v", recs[id])
	}
}

// Running lists the local tasks still running, which Close cancels.
func TestAsyncRunning(t *testing.T) {
	noLeaks(t)
	slow := newGated("never")
	m := &stepModel{}
	as, err := background.New(background.Config{
		Parent:    subagents.Parent{Agent: agent.Config{Model: m}},
		Subagents: []background.Subagent{{Subagent: subagents.Subagent{Name: "slow", Description: "slow", Runnable: slow}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Model: m, Middleware: []agent.Middleware{as}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if got := as.Running(); len(got) != 0 {
		t.Errorf("Running before any start = %v", got)
	}
	var id string
	m.add(step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "slow", "description": "x"})),
		func(req *llm.Request) llm.Message {
			id = taskIDOf(t, toolResults(req)[0])
			return llm.AssistantText("started")
		})
	if _, err := a.Invoke(context.Background(), agent.Input{Messages: []llm.Message{llm.UserText("go")}}); err != nil {
		t.Fatal(err)
	}
	received(t, slow.started, "the task's start")
	if got := as.Running(); len(got) != 1 || got[id] != "slow" {
		t.Errorf("Running = %v, want {%s: slow}", got, id)
	}
	a.Close()
	received(t, slow.cancelled, "the task's end")
	if got := as.Running(); len(got) != 0 {
		t.Errorf("Running after Close = %v", got)
	}
}

// echo answers with what it was told last, and remembers its inputs.
type echo struct {
	mu     sync.Mutex
	inputs []agent.Input
}

func (e *echo) Invoke(_ context.Context, in agent.Input) (*agent.Result, error) {
	e.mu.Lock()
	e.inputs = append(e.inputs, in)
	e.mu.Unlock()
	st := thread.NewState()
	st.Messages = append(append(st.Messages, in.Messages...), llm.AssistantText("heard: "+in.Messages[len(in.Messages)-1].Text()))
	res := &agent.Result{Status: agent.StatusCompleted, State: st}
	if len(in.Messages) == 1 { // the first run writes files
		st.Files.Put("/from-task.txt", thread.FileData{Content: "task wrote this"})
		st.Files.Put("/shared.txt", thread.FileData{Content: "task's version"})
		res.ChangedFiles = []string{"/from-task.txt", "/shared.txt"}
	}
	return res, nil
}

// update_async_task runs the task again with its conversation and the new
// message; a finished task's files merge back, but not over a file the
// caller changed meanwhile.
func TestAsyncLocalUpdateAndMergeBack(t *testing.T) {
	noLeaks(t)
	e := &echo{}
	m := &stepModel{}
	a := newAsyncAgent(t, m, checkpoint.NewMemorySaver(), background.Config{
		Subagents: []background.Subagent{{Subagent: subagents.Subagent{Name: "echo", Description: "echoes", Runnable: e}}},
		Options:   background.Options{NewTaskID: func() string { return "the-task" }},
	})
	var out []string
	m.add(
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "echo", "description": "first"})),
		step(calls("note", map[string]string{"path": "/shared.txt", "content": "caller's version"})),
		step(calls(background.WaitAsyncTaskTool, map[string]any{"task_id": "the-task"})),
		func(req *llm.Request) llm.Message {
			out = append(out, toolResults(req)...)
			return calls(background.UpdateAsyncTaskTool, map[string]string{"task_id": "the-task", "message": "second"})
		},
		func(req *llm.Request) llm.Message {
			out = append(out, toolResults(req)...)
			return calls(background.WaitAsyncTaskTool, map[string]any{"task_id": "the-task", "timeout": 2.5})
		},
		func(req *llm.Request) llm.Message {
			out = append(out, toolResults(req)...)
			return calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "echo", "description": "again"})
		},
		func(req *llm.Request) llm.Message {
			out = append(out, toolResults(req)...)
			return llm.AssistantText("ok")
		},
	)
	res, err := a.Invoke(context.Background(), agent.Input{ThreadID: "u", Messages: []llm.Message{llm.UserText("go")}})
	if err != nil {
		t.Fatal(err)
	}
	first := parseReport(t, out[0])
	if first.Result != "heard: first" || !strings.Contains(first.Note, "/shared.txt") {
		t.Errorf("first = %+v", first)
	}
	if out[1] != "Updated async subagent. task_id: the-task" {
		t.Errorf("update = %q", out[1])
	}
	if r := parseReport(t, out[2]); r.Result != "heard: second" || r.Status != background.Success {
		t.Errorf("after the update = %+v", r)
	}
	if !strings.Contains(out[3], "task id \"the-task\" is empty or taken") {
		t.Errorf("a repeated task id = %q", out[3])
	}
	e.mu.Lock()
	second := e.inputs[1]
	e.mu.Unlock()
	var texts []string
	for _, msg := range second.Messages {
		texts = append(texts, string(msg.Role)+":"+msg.Text())
	}
	if got := strings.Join(texts, "|"); got != "user:first|assistant:heard: first|user:second" {
		t.Errorf("the update's conversation = %s", got)
	}
	if f, _ := res.State.Files.Get("/from-task.txt"); f.Content != "task wrote this" {
		t.Errorf("/from-task.txt = %q", f.Content)
	}
	if f, _ := res.State.Files.Get("/shared.txt"); f.Content != "caller's version" {
		t.Errorf("/shared.txt = %q: the task overwrote the caller's change", f.Content)
	}
}

// The records are private: a subagent started by task gets none, and the
// server's API does not show them (agent.PrivateValuer).
func TestAsyncRecordsArePrivate(t *testing.T) {
	as, err := background.New(background.Config{
		Parent:    subagents.Parent{Agent: agent.Config{Model: replay.New()}},
		Subagents: []background.Subagent{{Subagent: subagents.Subagent{Name: "x", Description: "x"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer as.Close()
	if got := as.PrivateValues(); len(got) != 1 || got[0] != background.TasksValue {
		t.Errorf("PrivateValues = %v", got)
	}
	a, err := agent.New(agent.Config{Model: replay.New(), Middleware: []agent.Middleware{as}})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.PrivateValues(); len(got) != 1 || got[0] != background.TasksValue {
		t.Errorf("the agent's PrivateValues = %v (what task and the server keep to it)", got)
	}
}

func TestNewAsyncErrors(t *testing.T) {
	r := newGated("")
	for _, tc := range []struct {
		name string
		subs []background.Subagent
		want string
	}{
		{"none", nil, "none configured"},
		{"no name", []background.Subagent{{Subagent: subagents.Subagent{Runnable: r}}}, "no name"},
		{"duplicate", []background.Subagent{{Subagent: subagents.Subagent{Name: "a", Runnable: r}}, {Subagent: subagents.Subagent{Name: "a", Runnable: r}}}, "two subagents"},
		{"remote without graph", []background.Subagent{{Subagent: subagents.Subagent{Name: "a"}, URL: "http://x"}}, "both URL and GraphID"},
		{"remote with a prompt", []background.Subagent{{Subagent: subagents.Subagent{Name: "a", SystemPrompt: "p"}, URL: "http://x", GraphID: "g"}}, "defined by its server"},
		{"bad url", []background.Subagent{{Subagent: subagents.Subagent{Name: "a"}, URL: "ftp://x", GraphID: "g"}}, "want http(s)"},
		{"fork", []background.Subagent{{Subagent: subagents.Subagent{Name: "a", Mode: subagents.Fork}}}, "starts from its task alone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := background.New(background.Config{Parent: subagents.Parent{Agent: agent.Config{Model: replay.New()}}, Subagents: tc.subs})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// A background task's panic is its error, not the process's end.
func TestAsyncLocalPanic(t *testing.T) {
	noLeaks(t)
	m := &stepModel{}
	a := newAsyncAgent(t, m, nil, background.Config{
		Subagents: []background.Subagent{{Subagent: subagents.Subagent{Name: "p", Description: "panics", Runnable: panicky{}}}},
		Options:   background.Options{NewTaskID: func() string { return "p1" }},
	})
	var out string
	m.add(step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "p", "description": "x"})),
		step(calls(background.WaitAsyncTaskTool, map[string]any{"task_id": "p1"})),
		func(req *llm.Request) llm.Message { out = toolResults(req)[0]; return llm.AssistantText("ok") })
	if _, err := a.Invoke(context.Background(), agent.Prompt("go")); err != nil {
		t.Fatal(err)
	}
	if r := parseReport(t, out); r.Status != background.Error || !strings.Contains(r.Error, "boom") {
		t.Errorf("report = %+v", r)
	}
}

type panicky struct{}

func (panicky) Invoke(context.Context, agent.Input) (*agent.Result, error) { panic("boom") }

// TestAsyncModelSurface pins what the model reads of the background
// subagents: the prompt section and each tool's description and schema.
// go test ./middleware/subagents/background -run TestAsyncModelSurface -update accepts
// a change.
func TestAsyncModelSurface(t *testing.T) {
	as, err := background.New(background.Config{
		Parent: subagents.Parent{Agent: agent.Config{Model: replay.New()}},
		Subagents: []background.Subagent{
			{Subagent: subagents.Subagent{Name: "researcher", Description: "Researches a question."}},
			{Subagent: subagents.Subagent{Name: "remote-researcher", Description: "Researches on a server."}, URL: "http://127.0.0.1:1", GraphID: "g"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer as.Close()
	var b bytes.Buffer
	fmt.Fprintf(&b, "# async subagents prompt\n\n%s\n", as.SystemPrompt())
	for _, tl := range as.Tools() {
		writeSpec(t, &b, tl)
	}
	golden.Check(t, "testdata/async_surface.golden", b.Bytes())
}

func writeSpec(t *testing.T, b *bytes.Buffer, tl tool.Tool) {
	t.Helper()
	spec := tl.Spec()
	var params bytes.Buffer
	if err := json.Indent(&params, spec.Parameters, "", "  "); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(b, "\n## %s\n\n%s\n\n%s\n", spec.Name, spec.Description, params.String())
}

// A run that is cancelled (its consumer stops reading) leaves its
// background tasks running: they belong to the agent, and a later run
// collects them.
func TestAsyncLocalOutlivesACancelledRun(t *testing.T) {
	noLeaks(t)
	slow := newGated("still here")
	m := &stepModel{}
	a := newAsyncAgent(t, m, checkpoint.NewMemorySaver(), background.Config{
		Subagents: []background.Subagent{{Subagent: subagents.Subagent{Name: "slow", Description: "slow", Runnable: slow}}},
		Options:   background.Options{NewTaskID: func() string { return "s1" }},
	})
	m.add(step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "slow", "description": "x"})),
		func(*llm.Request) llm.Message { return llm.AssistantText("never read") })
	started := false
	for e, err := range a.Stream(context.Background(), agent.Input{ThreadID: "x", Messages: []llm.Message{llm.UserText("go")}}) {
		if err != nil {
			t.Fatal(err)
		}
		started = started || e.Type == agent.EventToolResult && e.Name == background.StartAsyncTaskTool
		if started && e.Type == agent.EventCheckpoint {
			break // the start is saved; this cancels the run
		}
	}
	received(t, slow.started, "the task")
	close(slow.release)
	var out string
	m.mu.Lock()
	m.steps, m.n = nil, 0
	m.mu.Unlock()
	m.add(step(calls(background.WaitAsyncTaskTool, map[string]any{"task_id": "s1", "timeout": 5})),
		func(req *llm.Request) llm.Message { out = toolResults(req)[0]; return llm.AssistantText("ok") })
	if _, err := a.Invoke(context.Background(), agent.Input{ThreadID: "x", Messages: []llm.Message{llm.UserText("and?")}}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-slow.cancelled:
		t.Errorf("the task was cancelled with its run: %v", err)
	default:
	}
	if r := parseReport(t, out); r.Status != background.Success || r.Result != "still here" {
		t.Errorf("report = %+v", r)
	}
}

// TestAsyncShutdownRecordsEachThread: tasks started on two threads and
// still running when the program ends are cancelled and recorded as such
// on the thread that started each, where a later run finds them
// cancelled, not lost.
func TestAsyncShutdownRecordsEachThread(t *testing.T) {
	noLeaks(t)
	slow := newGated("never")
	m := &stepModel{}
	saver := checkpoint.NewMemorySaver()
	as, err := background.New(background.Config{
		Parent:    subagents.Parent{Agent: agent.Config{Model: m}},
		Subagents: []background.Subagent{{Subagent: subagents.Subagent{Name: "slow", Description: "slow", Runnable: slow}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Model: m, Middleware: []agent.Middleware{as}, Checkpointer: saver, Durability: agent.DurabilitySync})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ids := map[string]string{}
	for _, thread := range []string{"a", "b"} {
		m.add(step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "slow", "description": "x"})),
			func(req *llm.Request) llm.Message {
				ids[thread] = taskIDOf(t, toolResults(req)[0])
				return llm.AssistantText("started")
			})
		if _, err := a.Invoke(context.Background(), agent.Input{ThreadID: thread, Messages: []llm.Message{llm.UserText("go")}}); err != nil {
			t.Fatal(err)
		}
		received(t, slow.started, "the task's start")
	}
	stopped, err := as.Shutdown(context.Background(), saver)
	if err != nil {
		t.Fatal(err)
	}
	if len(stopped) != 2 {
		t.Errorf("Shutdown stopped %v, want both tasks", stopped)
	}
	for thread, id := range ids {
		head, err := saver.Load(context.Background(), thread, "")
		if err != nil {
			t.Fatal(err)
		}
		tasks, err := background.Tasks(head.Values)
		if err != nil {
			t.Fatal(err)
		}
		if got := tasks[id].Status; got != background.Cancelled {
			t.Errorf("thread %s: task %s recorded %q, want cancelled", thread, id, got)
		}
	}
}
