package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/middleware/patch"
	"github.com/deepagents-go/deepagents/middleware/todos"
	"github.com/deepagents-go/deepagents/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

type echoIn struct {
	Text  string `json:"text"`
	Delay int    `json:"delay_ms,omitempty"`
}

// echoTool returns its text after an optional delay.
func echoTool(t *testing.T) tool.Tool {
	t.Helper()
	return tool.Must(tool.New("echo", "Echo the text.", func(ctx context.Context, in echoIn) (string, error) {
		if in.Delay > 0 {
			select {
			case <-time.After(time.Duration(in.Delay) * time.Millisecond):
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		return "echo: " + in.Text, nil
	}))
}

func newAgent(t *testing.T, cfg agent.Config) *agent.Agent {
	t.Helper()
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// newTodos returns the todos middleware with the default configuration.
func newTodos(t *testing.T) *todos.Middleware {
	t.Helper()
	m, err := todos.New(todos.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// newPatch returns the middleware that repairs unanswered tool calls.
func newPatch(t *testing.T) *patch.Middleware {
	t.Helper()
	m, err := patch.New(patch.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// newHITL returns the human-in-the-loop middleware asking about on.
func newHITL(t *testing.T, on map[string]hitl.InterruptOn) *hitl.Middleware {
	t.Helper()
	m, err := hitl.New(hitl.Config{On: on})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// toolResults returns the tool messages of a conversation as "id=content".
func toolResults(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			out = append(out, m.ToolCallID+"="+m.Text())
		}
	}
	return out
}

func TestRunLoop(t *testing.T) {
	tests := []struct {
		name        string
		turns       []replay.Turn
		wantResults []string
		wantErrors  []string // substrings of error results, in order
		wantText    string
		wantSteps   int
	}{
		{
			name:      "answer without tools",
			turns:     []replay.Turn{{Content: "hello"}},
			wantText:  "hello",
			wantSteps: 1,
		},
		{
			name: "one tool call then answer",
			turns: []replay.Turn{
				{ToolCalls: []llm.ToolCall{call("a", "echo", `{"text":"x"}`)}},
				{Content: "done", Expect: &replay.Expect{LastMessageContains: []string{"echo: x"}}},
			},
			wantResults: []string{"a=echo: x"},
			wantText:    "done",
			wantSteps:   2,
		},
		{
			name: "parallel calls keep call order",
			turns: []replay.Turn{
				{ToolCalls: []llm.ToolCall{
					call("a", "echo", `{"text":"slow","delay_ms":60}`),
					call("b", "echo", `{"text":"fast"}`),
					call("c", "echo", `{"text":"mid","delay_ms":20}`),
				}},
				{Content: "done"},
			},
			wantResults: []string{"a=echo: slow", "b=echo: fast", "c=echo: mid"},
			wantText:    "done",
			wantSteps:   2,
		},
		{
			name: "unknown tool is an error result and the run goes on",
			turns: []replay.Turn{
				{ToolCalls: []llm.ToolCall{call("a", "nope", `{}`)}},
				{Content: "recovered"},
			},
			wantErrors: []string{`unknown tool "nope"`},
			wantText:   "recovered",
			wantSteps:  2,
		},
		{
			name: "wrong argument type names tool and field",
			turns: []replay.Turn{
				{ToolCalls: []llm.ToolCall{call("a", "echo", `{"text":42}`)}},
				{Content: "ok"},
			},
			wantErrors: []string{`tool "echo": field "text"`},
			wantText:   "ok",
			wantSteps:  2,
		},
		{
			name: "missing required field names tool and field",
			turns: []replay.Turn{
				{ToolCalls: []llm.ToolCall{call("a", "echo", `{"delay_ms":1}`)}},
				{Content: "ok"},
			},
			wantErrors: []string{`tool "echo": field "text": missing required field`},
			wantText:   "ok",
			wantSteps:  2,
		},
		{
			name: "malformed JSON arguments",
			turns: []replay.Turn{
				{ToolCalls: []llm.ToolCall{call("a", "echo", `{"text":`)}},
				{Content: "ok"},
			},
			wantErrors: []string{`tool "echo": arguments are not valid JSON`},
			wantText:   "ok",
			wantSteps:  2,
		},
		{
			name: "unknown field",
			turns: []replay.Turn{
				{ToolCalls: []llm.ToolCall{call("a", "echo", `{"text":"x","colour":"red"}`)}},
				{Content: "ok"},
			},
			wantErrors: []string{`field "colour": unknown field`},
			wantText:   "ok",
			wantSteps:  2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := replay.New(tt.turns...)
			a := newAgent(t, agent.Config{Model: m, Tools: []tool.Tool{echoTool(t)}})
			res, err := a.Invoke(context.Background(), agent.Prompt("go"))
			if err != nil {
				t.Fatalf("Invoke: %v", err)
			}
			if res.Status != agent.StatusCompleted {
				t.Errorf("status = %s", res.Status)
			}
			if got := res.Text(); got != tt.wantText {
				t.Errorf("text = %q, want %q", got, tt.wantText)
			}
			if res.Steps != tt.wantSteps {
				t.Errorf("steps = %d, want %d", res.Steps, tt.wantSteps)
			}
			if tt.wantResults != nil {
				if diff := cmp.Diff(tt.wantResults, toolResults(res.State.Messages)); diff != "" {
					t.Errorf("tool results (-want +got):\n%s", diff)
				}
			}
			var errs []llm.Message
			for _, msg := range res.State.Messages {
				if msg.Role == llm.RoleTool && msg.IsError {
					errs = append(errs, msg)
				}
			}
			if len(errs) != len(tt.wantErrors) {
				t.Fatalf("got %d error results, want %d: %v", len(errs), len(tt.wantErrors), toolResults(res.State.Messages))
			}
			for i, want := range tt.wantErrors {
				if got := errs[i].Text(); !strings.Contains(got, want) {
					t.Errorf("error result %d = %q, want it to contain %q", i, got, want)
				}
			}
			if n := m.Remaining(); n != 0 {
				t.Errorf("%d scripted turns left unplayed", n)
			}
		})
	}
}

func TestParallelToolsAreBounded(t *testing.T) {
	var running, peak atomic.Int32
	slow := tool.Must(tool.New("slow", "Sleep a bit.", func(ctx context.Context, _ struct{}) (string, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		return "ok", nil
	}))
	var calls []llm.ToolCall
	for i := range 7 {
		calls = append(calls, call(fmt.Sprint("c", i), "slow", `{}`))
	}
	m := replay.New(replay.Turn{ToolCalls: calls}, replay.Turn{Content: "done"})
	a := newAgent(t, agent.Config{Model: m, Tools: []tool.Tool{slow}, MaxParallelTools: 3})
	res, err := a.Invoke(context.Background(), agent.Prompt("go"))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(toolResults(res.State.Messages)); got != 7 {
		t.Fatalf("got %d results, want 7", got)
	}
	if p := peak.Load(); p > 3 || p < 2 {
		t.Errorf("peak concurrency = %d, want 2..3", p)
	}
}

// A negative MaxParallelTools is refused when the agent is built, not a
// panic when a turn first calls tools.
func TestMaxParallelToolsNegative(t *testing.T) {
	m := replay.New(replay.Turn{ToolCalls: []llm.ToolCall{call("c", "echo", `{"text":"x"}`)}}, replay.Turn{Content: "done"})
	_, err := agent.New(agent.Config{Model: m, Tools: []tool.Tool{echoTool(t)}, MaxParallelTools: -1})
	if err == nil || !strings.Contains(err.Error(), "MaxParallelTools must not be negative") {
		t.Fatalf("New: %v", err)
	}
}

func TestMaxSteps(t *testing.T) {
	var turns []replay.Turn
	for i := range 10 {
		turns = append(turns, replay.Turn{ToolCalls: []llm.ToolCall{call(fmt.Sprint("c", i), "echo", `{"text":"again"}`)}})
	}
	a := newAgent(t, agent.Config{Model: replay.New(turns...), Tools: []tool.Tool{echoTool(t)}, MaxSteps: 3})
	res, err := a.Invoke(context.Background(), agent.Prompt("loop forever"))
	if !errors.Is(err, agent.ErrMaxSteps) {
		t.Fatalf("err = %v, want ErrMaxSteps", err)
	}
	if res == nil || res.Status != agent.StatusFailed || res.Steps != 3 {
		t.Fatalf("result = %+v, want failed after 3 steps", res)
	}
	if !strings.Contains(err.Error(), "3 model calls") {
		t.Errorf("error %q does not say the limit", err)
	}
}

func TestScriptExhaustedFailsClearly(t *testing.T) {
	m := replay.New(replay.Turn{ToolCalls: []llm.ToolCall{call("a", "echo", `{"text":"x"}`)}})
	a := newAgent(t, agent.Config{Model: m, Tools: []tool.Tool{echoTool(t)}})
	_, err := a.Invoke(context.Background(), agent.Prompt("go"))
	if !errors.Is(err, replay.ErrExhausted) {
		t.Fatalf("err = %v, want ErrExhausted", err)
	}
	if !strings.Contains(err.Error(), `agent "main" made call 2`) {
		t.Errorf("error %q does not say which call", err)
	}
}

func TestScriptExpectationFailsClearly(t *testing.T) {
	m := replay.New(replay.Turn{Content: "x", Expect: &replay.Expect{SystemContains: []string{"pirate"}}})
	a := newAgent(t, agent.Config{Model: m, SystemPrompt: "You are helpful."})
	_, err := a.Invoke(context.Background(), agent.Prompt("go"))
	if !errors.Is(err, replay.ErrExpectation) || !strings.Contains(err.Error(), `"pirate"`) {
		t.Fatalf("err = %v, want an expectation error naming the string", err)
	}
}

// blockingModel streams nothing until its context ends.
type blockingModel struct{ started chan struct{} }

func (b *blockingModel) Stream(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		close(b.started)
		<-ctx.Done()
		yield(llm.Chunk{}, ctx.Err())
	}
}

func TestCancellation(t *testing.T) {
	t.Run("during the model stream", func(t *testing.T) {
		m := &blockingModel{started: make(chan struct{})}
		a := newAgent(t, agent.Config{Model: m})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() {
			_, err := a.Invoke(ctx, agent.Prompt("go"))
			done <- err
		}()
		<-m.started
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("run did not stop after cancel")
		}
	})
	t.Run("during tool calls", func(t *testing.T) {
		started := make(chan struct{}, 3)
		block := tool.Must(tool.New("block", "Block.", func(ctx context.Context, _ struct{}) (string, error) {
			started <- struct{}{}
			<-ctx.Done()
			return "", ctx.Err()
		}))
		m := replay.New(replay.Turn{ToolCalls: []llm.ToolCall{call("a", "block", `{}`), call("b", "block", `{}`), call("c", "block", `{}`)}})
		a := newAgent(t, agent.Config{Model: m, Tools: []tool.Tool{block}})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() {
			_, err := a.Invoke(ctx, agent.Prompt("go"))
			done <- err
		}()
		for range 3 {
			<-started
		}
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("run did not stop after cancel")
		}
	})
	t.Run("consumer stops streaming", func(t *testing.T) {
		var turns []replay.Turn
		for i := range 5 {
			turns = append(turns, replay.Turn{ToolCalls: []llm.ToolCall{call(fmt.Sprint("c", i), "echo", `{"text":"x","delay_ms":5}`)}})
		}
		a := newAgent(t, agent.Config{Model: replay.New(turns...), Tools: []tool.Tool{echoTool(t)}})
		n := 0
		for e, err := range a.Stream(context.Background(), agent.Prompt("go")) {
			if err != nil {
				t.Fatal(err)
			}
			if e.Type == agent.EventToolResult {
				n++
				break
			}
		}
		if n != 1 {
			t.Fatalf("saw %d tool results before stopping", n)
		}
		// goleak in TestMain checks that the run goroutine ended.
	})
}

func TestToolPanicBecomesErrorResult(t *testing.T) {
	boom := tool.Must(tool.New("boom", "Panic.", func(context.Context, struct{}) (string, error) {
		panic("kaboom")
	}))
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{call("a", "boom", `{}`), call("b", "echo", `{"text":"fine"}`)}},
		replay.Turn{Content: "survived"},
	)
	a := newAgent(t, agent.Config{Model: m, Tools: []tool.Tool{boom, echoTool(t)}, Logger: discardLogger()})
	res, err := a.Invoke(context.Background(), agent.Prompt("go"))
	if err != nil {
		t.Fatal(err)
	}
	got := toolResults(res.State.Messages)
	if len(got) != 2 || !strings.Contains(got[0], "kaboom") || got[1] != "b=echo: fine" {
		t.Fatalf("results = %v", got)
	}
	if res.Text() != "survived" {
		t.Errorf("text = %q", res.Text())
	}
}

func TestNewRejectsDuplicates(t *testing.T) {
	m := replay.New()
	if _, err := agent.New(agent.Config{Model: m, Tools: []tool.Tool{echoTool(t), echoTool(t)}}); err == nil || !strings.Contains(err.Error(), `"echo"`) {
		t.Errorf("duplicate tools: err = %v", err)
	}
	if _, err := agent.New(agent.Config{Model: m, Middleware: []agent.Middleware{newTodos(t), newTodos(t)}}); err == nil || !strings.Contains(err.Error(), `"todos"`) {
		t.Errorf("duplicate middleware: err = %v", err)
	}
	if _, err := agent.New(agent.Config{}); err == nil {
		t.Error("missing model: no error")
	}
}

// recorder is a middleware that logs every hook it sees.
type recorder struct {
	name string
	mu   *sync.Mutex
	log  *[]string
}

func (r recorder) add(s string) {
	r.mu.Lock()
	*r.log = append(*r.log, r.name+":"+s)
	r.mu.Unlock()
}

func (r recorder) Name() string { return r.name }
func (r recorder) BeforeAgent(context.Context, *agent.Runtime) error {
	r.add("before")
	return nil
}
func (r recorder) AfterAgent(context.Context, *agent.Runtime) error {
	r.add("after")
	return nil
}
func (r recorder) AfterModel(context.Context, *agent.Turn) error {
	r.add("after-model")
	return nil
}
func (r recorder) SystemPrompt() string { return "section " + r.name }
func (r recorder) WrapRun(ctx context.Context, req *agent.RunRequest, next agent.RunHandler) (*agent.Result, error) {
	r.add("run-in")
	res, err := next(ctx, req)
	r.add("run-out")
	return res, err
}
func (r recorder) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	r.add("model-in")
	req.System += " +" + r.name
	resp, err := next(ctx, req)
	r.add("model-out")
	return resp, err
}
func (r recorder) WrapTool(ctx context.Context, req *agent.ToolRequest, next agent.ToolHandler) (agent.ToolResult, error) {
	r.add("tool-in")
	res, err := next(ctx, req)
	res.Content += " [" + r.name + "]"
	r.add("tool-out")
	return res, err
}

func TestMiddlewareOrder(t *testing.T) {
	var mu sync.Mutex
	var log []string
	mws := []agent.Middleware{recorder{"A", &mu, &log}, recorder{"B", &mu, &log}, recorder{"C", &mu, &log}}
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{call("a", "echo", `{"text":"x"}`)}, Expect: &replay.Expect{
			SystemContains: []string{"base\n\nsection A\n\nsection B\n\nsection C +A +B +C"},
		}},
		replay.Turn{Content: "done", Expect: &replay.Expect{LastMessageContains: []string{"echo: x [C] [B] [A]"}}},
	)
	a := newAgent(t, agent.Config{Model: m, SystemPrompt: "base", Middleware: mws, Tools: []tool.Tool{echoTool(t)}})
	if _, err := a.Invoke(context.Background(), agent.Prompt("go")); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"A:run-in", "B:run-in", "C:run-in",
		"A:before", "B:before", "C:before",
		"A:model-in", "B:model-in", "C:model-in", "C:model-out", "B:model-out", "A:model-out",
		"A:after-model", "B:after-model", "C:after-model",
		"A:tool-in", "B:tool-in", "C:tool-in", "C:tool-out", "B:tool-out", "A:tool-out",
		"A:model-in", "B:model-in", "C:model-in", "C:model-out", "B:model-out", "A:model-out",
		"C:after", "B:after", "A:after",
		"C:run-out", "B:run-out", "A:run-out",
	}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("hook order (-want +got):\n%s", diff)
	}
}

func TestStreamEvents(t *testing.T) {
	m := replay.New(
		replay.Turn{Content: "planning", ToolCalls: []llm.ToolCall{call("t1", "write_todos", `{"todos":[{"content":"a","status":"in_progress"}]}`)}, Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}},
		replay.Turn{Content: "done", Usage: llm.Usage{InputTokens: 20, OutputTokens: 2, CacheReadTokens: 8}},
	)
	a := newAgent(t, agent.Config{Model: m, Middleware: []agent.Middleware{newTodos(t)}})
	var types []agent.EventType
	var last agent.Event
	for e, err := range a.Stream(context.Background(), agent.Prompt("go")) {
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Namespace) != 0 {
			t.Errorf("main agent event with namespace %v", e.Namespace)
		}
		types = append(types, e.Type)
		last = e
		if e.Type == agent.EventState {
			want := []todos.Todo{{Content: "a", Status: todos.InProgress}}
			got, _ := todos.FromEvent(e)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("state todos (-want +got):\n%s", diff)
			}
		}
	}
	want := []agent.EventType{
		agent.EventRunStart,
		agent.EventTextDelta, agent.EventMessage, agent.EventUsage,
		agent.EventToolCall, agent.EventState, agent.EventToolResult,
		agent.EventTextDelta, agent.EventMessage, agent.EventUsage,
		agent.EventRunEnd,
	}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("event types (-want +got):\n%s", diff)
	}
	if last.Status != agent.StatusCompleted || last.Usage == nil || *last.Usage != (llm.Usage{InputTokens: 30, OutputTokens: 7, CacheReadTokens: 8}) {
		t.Errorf("run_end = %+v", last)
	}
}

func TestStreamReportsFailureLast(t *testing.T) {
	m := replay.New(replay.Turn{Error: "provider exploded"})
	a := newAgent(t, agent.Config{Model: m})
	var events []agent.Event
	var gotErr error
	for e, err := range a.Stream(context.Background(), agent.Prompt("go")) {
		if err != nil {
			gotErr = err
			continue
		}
		events = append(events, e)
	}
	if gotErr == nil || !strings.Contains(gotErr.Error(), "provider exploded") {
		t.Fatalf("final error = %v", gotErr)
	}
	end := events[len(events)-1]
	if end.Type != agent.EventRunEnd || end.Status != agent.StatusFailed || !strings.Contains(end.Error, "provider exploded") {
		t.Errorf("last event = %+v", end)
	}
}

func discardLogger() *slogLogger { return newDiscardLogger() }

// retryingModel reports a retry, as a provider does, before answering.
type retryingModel struct{ llm.Model }

func (m retryingModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	llm.NotifyRetry(ctx, llm.Retry{Provider: "test", Attempt: 1, MaxAttempts: 4, Wait: 2 * time.Second, Err: errors.New("429 rate limited")})
	return m.Model.Stream(ctx, req)
}

func TestModelRetriesAreNotices(t *testing.T) {
	a := newAgent(t, agent.Config{Model: retryingModel{replay.New(replay.Turn{Content: "done"})}})
	var notices []agent.Event
	for e, err := range a.Stream(context.Background(), agent.Prompt("go")) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Type == agent.EventNotice {
			notices = append(notices, e)
		}
	}
	if len(notices) != 1 || notices[0].Name != agent.NoticeModelRetry || notices[0].Error != "429 rate limited" ||
		notices[0].Content != "The model call failed (429 rate limited); retrying in 2s (attempt 2 of 4)." {
		t.Errorf("notices = %+v", notices)
	}
}

func TestAllowedTools(t *testing.T) {
	other := tool.Must(tool.New("other", "Another tool.", func(context.Context, struct{}) (string, error) { return "ran", nil }))
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{call("a", "other", `{}`), call("b", "echo", `{"text":"hi"}`)}},
		replay.Turn{Content: "done"},
	).Record()
	a := newAgent(t, agent.Config{Model: m, Tools: []tool.Tool{echoTool(t), other}, AllowedTools: []string{"echo"}})
	if specs := a.ToolSpecs(); len(specs) != 1 || specs[0].Name != "echo" {
		t.Fatalf("offered %v, want only echo", specs)
	}
	res, err := a.Invoke(context.Background(), agent.Prompt("go"))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(toolResults(res.State.Messages), "|")
	if strings.Contains(got, "ran") || !strings.Contains(got, "echo: hi") {
		t.Errorf("results %s: the left-out tool ran, or the kept one did not", got)
	}
	if tools := m.Requests()[0].Request.Tools; len(tools) != 1 {
		t.Errorf("the model was offered %d tools", len(tools))
	}
	_, err = agent.New(agent.Config{Model: m, Tools: []tool.Tool{echoTool(t)}, AllowedTools: []string{"ech"}})
	if !errors.Is(err, agent.ErrUnknownTool) {
		t.Errorf("unknown allowed tool: %v", err)
	}
}
