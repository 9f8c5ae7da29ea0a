package telemetry_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/telemetry"
	"github.com/deepagents-go/deepagents/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder returns a provider whose ended spans the recorder keeps.
func recorder(t *testing.T) (*sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { tp.Shutdown(context.Background()) }) //nolint:errcheck
	return tp, rec
}

// tree draws the spans as their parents nest them, siblings in the order
// they started.
func tree(spans []sdktrace.ReadOnlySpan) string {
	ids := map[trace.SpanID]bool{}
	for _, s := range spans {
		ids[s.SpanContext().SpanID()] = true
	}
	children := map[trace.SpanID][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		p := s.Parent().SpanID()
		if !ids[p] {
			p = trace.SpanID{}
		}
		children[p] = append(children[p], s)
	}
	for _, c := range children {
		sort.SliceStable(c, func(i, j int) bool { return c[i].StartTime().Before(c[j].StartTime()) })
	}
	var b strings.Builder
	var draw func(trace.SpanID, int)
	draw = func(p trace.SpanID, depth int) {
		for _, s := range children[p] {
			b.WriteString(strings.Repeat("  ", depth) + s.Name() + "\n")
			draw(s.SpanContext().SpanID(), depth+1)
		}
	}
	draw(trace.SpanID{}, 0)
	return b.String()
}

func attrs(s sdktrace.ReadOnlySpan) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

// named returns the spans of that name, in the order they started.
func named(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartTime().Before(out[j].StartTime()) })
	return out
}

type echoIn struct {
	Text string `json:"text"`
}

func echoTool() tool.Tool {
	return tool.Must(tool.New("echo", "Echo the text.", func(_ context.Context, in echoIn) (string, error) {
		if in.Text == "fail" {
			return "", errors.New("echo refuses to fail")
		}
		return "echo: " + in.Text, nil
	}))
}

func tc(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

// delegating is a script in which the main agent calls echo, then
// delegates to the general-purpose subagent, which lists files.
func delegating() *replay.Model {
	u := llm.Usage{InputTokens: 100, OutputTokens: 7, CacheReadTokens: 60, CacheWriteTokens: 20}
	return replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{tc("c1", "echo", `{"text":"secret-argument"}`)}, Usage: u},
		replay.Turn{ToolCalls: []llm.ToolCall{tc("c2", "task", `{"description":"list the files","subagent_type":"general-purpose"}`)}, Usage: u},
		replay.Turn{Agent: "general-purpose", ToolCalls: []llm.ToolCall{tc("s1", "ls", `{"path":"/"}`)}, Usage: u},
		replay.Turn{Agent: "general-purpose", Content: "There are no files.", Usage: u},
		replay.Turn{Content: "secret-answer", Usage: u},
	)
}

func newAgent(t *testing.T, cfg deepagents.Config) *deepagents.Agent {
	t.Helper()
	a, err := deepagents.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSpanTree runs a deep agent that delegates to a subagent and checks
// the tree of spans and their attributes.
func TestSpanTree(t *testing.T) {
	tp, rec := recorder(t)
	a := newAgent(t, deepagents.Config{Model: delegating(), Tools: []tool.Tool{echoTool()}, TracerProvider: tp})
	res, err := a.Invoke(context.Background(), agent.Input{ThreadID: "thread-1", Messages: []llm.Message{llm.UserText("secret-prompt")}})
	if err != nil {
		t.Fatal(err)
	}
	spans := rec.Ended()
	want := `invoke_agent main
  chat script
  execute_tool echo
  chat script
  execute_tool task
    invoke_agent general-purpose
      chat script
      execute_tool ls
      chat script
  chat script
`
	if got := tree(spans); got != want {
		t.Fatalf("span tree:\n%s\nwant\n%s", got, want)
	}
	for _, s := range spans {
		if s.InstrumentationScope().Name != telemetry.ScopeName {
			t.Errorf("%s: scope %q", s.Name(), s.InstrumentationScope().Name)
		}
	}

	run := attrs(named(spans, "invoke_agent main")[0])
	wantRun := map[string]any{
		"gen_ai.operation.name":                    "invoke_agent",
		"gen_ai.provider.name":                     "replay",
		"gen_ai.agent.name":                        "main",
		"gen_ai.request.model":                     "script",
		"gen_ai.conversation.id":                   "thread-1",
		"gen_ai.usage.input_tokens":                int64(res.Usage.InputTokens),
		"gen_ai.usage.output_tokens":               int64(res.Usage.OutputTokens),
		"gen_ai.usage.cache_read.input_tokens":     int64(300),
		"gen_ai.usage.cache_creation.input_tokens": int64(100),
		"deepagents.run.status":                    "completed",
		"deepagents.run.steps":                     int64(3),
	}
	checkAttrs(t, "invoke_agent main", run, wantRun)
	if res.Usage.InputTokens != 500 {
		t.Errorf("the run's usage %+v, want 5 calls' worth", res.Usage)
	}

	chat := named(spans, "chat script")[0]
	if chat.SpanKind() != trace.SpanKindClient {
		t.Errorf("chat span kind %v, want client", chat.SpanKind())
	}
	checkAttrs(t, "chat", attrs(chat), map[string]any{
		"gen_ai.operation.name":                    "chat",
		"gen_ai.provider.name":                     "replay",
		"gen_ai.request.model":                     "script",
		"gen_ai.response.model":                    "replay",
		"gen_ai.agent.name":                        "main",
		"gen_ai.conversation.id":                   "thread-1",
		"gen_ai.response.finish_reasons":           []string{"tool_call"},
		"gen_ai.usage.input_tokens":                int64(100),
		"gen_ai.usage.output_tokens":               int64(7),
		"gen_ai.usage.cache_read.input_tokens":     int64(60),
		"gen_ai.usage.cache_creation.input_tokens": int64(20),
	})
	last := named(spans, "chat script")
	checkAttrs(t, "last chat", attrs(last[len(last)-1]), map[string]any{"gen_ai.response.finish_reasons": []string{"stop"}})

	echo := named(spans, "execute_tool echo")[0]
	if echo.SpanKind() != trace.SpanKindInternal || echo.Status().Code != codes.Unset {
		t.Errorf("echo span kind %v status %v", echo.SpanKind(), echo.Status())
	}
	checkAttrs(t, "execute_tool echo", attrs(echo), map[string]any{
		"gen_ai.operation.name": "execute_tool",
		"gen_ai.tool.name":      "echo",
		"gen_ai.tool.call.id":   "c1",
		"gen_ai.tool.type":      "function",
	})

	sub := named(spans, "invoke_agent general-purpose")[0]
	checkAttrs(t, "invoke_agent general-purpose", attrs(sub), map[string]any{"gen_ai.agent.name": "general-purpose", "deepagents.run.status": "completed"})
	if sub.SpanKind() != trace.SpanKindInternal {
		t.Errorf("subagent span kind %v, want internal", sub.SpanKind())
	}
	// Content is off by default: nothing the user or a tool said is on
	// any span.
	for _, s := range spans {
		for _, kv := range s.Attributes() {
			if v := kv.Value.Emit(); strings.Contains(v, "secret") {
				t.Errorf("%s: %s = %q records content, which is off", s.Name(), kv.Key, v)
			}
		}
	}
}

func checkAttrs(t *testing.T, span string, got map[string]attribute.Value, want map[string]any) {
	t.Helper()
	for k, w := range want {
		v, ok := got[k]
		if !ok {
			t.Errorf("%s: no attribute %s", span, k)
			continue
		}
		var g any = v.AsInterface()
		if ws, ok := w.([]string); ok {
			if !slices.Equal(v.AsStringSlice(), ws) {
				t.Errorf("%s: %s = %v, want %v", span, k, g, w)
			}
			continue
		}
		if g != w {
			t.Errorf("%s: %s = %v (%T), want %v (%T)", span, k, g, g, w, w)
		}
	}
}

// TestContentCapture checks that content is recorded when turned on, by
// the option or by the environment, as JSON in the conventions' shapes.
func TestContentCapture(t *testing.T) {
	for _, how := range []string{"option", "env"} {
		t.Run(how, func(t *testing.T) {
			tp, rec := recorder(t)
			cfg := deepagents.Config{Model: delegating(), Tools: []tool.Tool{echoTool()}, TracerProvider: tp, SystemPrompt: "secret-system"}
			if how == "option" {
				cfg.TraceContent = true
			} else {
				t.Setenv(telemetry.CaptureContentEnv, "true")
			}
			a := newAgent(t, cfg)
			if _, err := a.Invoke(context.Background(), agent.Input{Messages: []llm.Message{llm.UserText("secret-prompt")}}); err != nil {
				t.Fatal(err)
			}
			spans := rec.Ended()
			run := attrs(named(spans, "invoke_agent main")[0])
			wantJSON(t, run["gen_ai.input.messages"], `[{"role":"user","parts":[{"type":"text","content":"secret-prompt"}]}]`)
			wantJSON(t, run["gen_ai.output.messages"], `[{"role":"assistant","parts":[{"type":"text","content":"secret-answer"}],"finish_reason":"stop"}]`)

			first := attrs(named(spans, "chat script")[0])
			if sys := first["gen_ai.system_instructions"].AsString(); !strings.Contains(sys, "secret-system") || !json.Valid([]byte(sys)) {
				t.Errorf("system instructions %q", sys)
			}
			wantJSON(t, first["gen_ai.input.messages"], `[{"role":"user","parts":[{"type":"text","content":"secret-prompt"}]}]`)
			wantJSON(t, first["gen_ai.output.messages"], `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"echo","arguments":{"text":"secret-argument"}}],"finish_reason":"tool_call"}]`)
			second := attrs(named(spans, "chat script")[1])
			wantJSON(t, second["gen_ai.input.messages"], `[{"role":"user","parts":[{"type":"text","content":"secret-prompt"}]},`+
				`{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"echo","arguments":{"text":"secret-argument"}}]},`+
				`{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","result":"echo: secret-argument"}]}]`)

			echo := attrs(named(spans, "execute_tool echo")[0])
			wantJSON(t, echo["gen_ai.tool.call.arguments"], `{"text":"secret-argument"}`)
			if got := echo["gen_ai.tool.call.result"].AsString(); got != "echo: secret-argument" {
				t.Errorf("tool result %q", got)
			}
		})
	}
}

func wantJSON(t *testing.T, v attribute.Value, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(v.AsString()), &g); err != nil {
		t.Errorf("%q is no JSON: %v", v.AsString(), err)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("got  %s\nwant %s", gb, wb)
	}
}

// TestContentIsBounded checks that long content is cut and old messages
// left out, the attributes staying valid JSON within the limit.
func TestContentIsBounded(t *testing.T) {
	const limit = 2048
	tp, rec := recorder(t)
	long := strings.Repeat("é", 5000) // two bytes a rune: cuts must not split one
	var history []llm.Message
	for range 20 {
		history = append(history, llm.UserText(long), llm.AssistantText("ok"))
	}
	a, err := agent.New(agent.Config{
		Model:      replay.New(replay.Turn{ToolCalls: []llm.ToolCall{tc("c1", "echo", `{"text":"`+strings.Repeat("x", 3000)+`"}`)}}, replay.Turn{Content: long}),
		Tools:      []tool.Tool{echoTool()},
		Middleware: []agent.Middleware{telemetry.New(tp, telemetry.Options{CaptureContent: true, MaxContentBytes: limit})},
	})
	if err != nil {
		t.Fatal(err)
	}
	st := &deepagents.State{Messages: history}
	if _, err := a.Invoke(context.Background(), agent.Input{State: st, Messages: []llm.Message{llm.UserText(long)}}); err != nil {
		t.Fatal(err)
	}
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			k := string(kv.Key)
			switch k {
			case "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result":
			default:
				continue
			}
			v := kv.Value.AsString()
			if len(v) > limit {
				t.Errorf("%s: %s is %d bytes, over the limit of %d", s.Name(), k, len(v), limit)
			}
			if k != "gen_ai.tool.call.result" && k != "gen_ai.tool.call.arguments" && !json.Valid([]byte(v)) {
				t.Errorf("%s: %s is not valid JSON: %.200q", s.Name(), k, v)
			}
			if !strings.HasPrefix(k, "gen_ai.tool") && strings.Contains(v, "\ufffd") {
				t.Errorf("%s: %s has a split rune", s.Name(), k)
			}
		}
	}
	chats := named(rec.Ended(), "chat script")
	first := attrs(chats[0])
	omitted := first["deepagents.input.messages.omitted"].AsInt64()
	if omitted <= 0 || omitted >= 41 {
		t.Errorf("omitted %d of 41 messages, want some but not all", omitted)
	}
	if in := first["gen_ai.input.messages"].AsString(); !strings.Contains(in, "bytes, cut]") {
		t.Errorf("a long text is not marked cut: %.300s", in)
	}
	args := attrs(named(rec.Ended(), "execute_tool echo")[0])["gen_ai.tool.call.arguments"].AsString()
	if !strings.HasSuffix(args, "bytes, cut]") {
		t.Errorf("long arguments not cut: %.100s…", args)
	}
}

// TestFailures checks the status of spans when things go wrong: a model
// error fails the chat and the run, a tool's error result fails its span
// only, and an unknown tool is told apart.
func TestFailures(t *testing.T) {
	tp, rec := recorder(t)
	a := newAgent(t, deepagents.Config{
		Model: replay.New(
			replay.Turn{ToolCalls: []llm.ToolCall{tc("c1", "echo", `{"text":"fail"}`)}},
			replay.Turn{ToolCalls: []llm.ToolCall{tc("c2", "nosuch", `{}`)}},
			replay.Turn{Error: "the provider is down"},
		),
		Tools:          []tool.Tool{echoTool()},
		TracerProvider: tp,
	})
	_, err := a.Invoke(context.Background(), agent.Prompt("go"))
	if err == nil {
		t.Fatal("the run did not fail")
	}
	spans := rec.Ended()
	echo := named(spans, "execute_tool echo")[0]
	if echo.Status().Code != codes.Error || attrs(echo)["error.type"].AsString() != "tool_error" {
		t.Errorf("echo: status %v, error.type %v", echo.Status(), attrs(echo)["error.type"].Emit())
	}
	if strings.Contains(echo.Status().Description, "refuses") {
		t.Errorf("the status %q quotes the tool's result, which is content", echo.Status().Description)
	}
	unknown := named(spans, "execute_tool nosuch")[0]
	if unknown.Status().Code != codes.Error || attrs(unknown)["error.type"].AsString() != "unknown_tool" {
		t.Errorf("unknown tool: status %v, error.type %v", unknown.Status(), attrs(unknown)["error.type"].Emit())
	}
	chats := named(spans, "chat script")
	if c := chats[len(chats)-1]; c.Status().Code != codes.Error || !strings.Contains(c.Status().Description, "the provider is down") {
		t.Errorf("failed chat: status %v", c.Status())
	}
	for _, c := range chats[:len(chats)-1] {
		if c.Status().Code != codes.Unset {
			t.Errorf("a chat that worked has status %v", c.Status())
		}
	}
	run := named(spans, "invoke_agent main")[0]
	if run.Status().Code != codes.Error || attrs(run)["deepagents.run.status"].AsString() != "failed" || attrs(run)["error.type"].AsString() == "" {
		t.Errorf("failed run: status %v, attributes %v", run.Status(), attrs(run))
	}
}

// TestInterrupts checks that a run stopped for approval is no error, that
// a subagent's interrupt marks its task call as interrupted, and that
// the resumed run is a run of its own, marked resumed.
func TestInterrupts(t *testing.T) {
	tp, rec := recorder(t)
	a := newAgent(t, deepagents.Config{
		Model: replay.New(
			replay.Turn{ToolCalls: []llm.ToolCall{tc("c1", "task", `{"description":"echo","subagent_type":"general-purpose"}`)}},
			replay.Turn{Agent: "general-purpose", ToolCalls: []llm.ToolCall{tc("s1", "echo", `{"text":"hi"}`)}},
			replay.Turn{Agent: "general-purpose", Content: "echoed"},
			replay.Turn{Content: "done"},
		),
		Tools:          []tool.Tool{echoTool()},
		InterruptOn:    map[string]deepagents.InterruptOn{"echo": {}},
		TracerProvider: tp,
	})
	ctx := context.Background()
	res, err := a.Invoke(ctx, agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}})
	if err != nil || res.Status != agent.StatusInterrupted {
		t.Fatalf("run: %v, %v", res.Status, err)
	}
	spans := rec.Ended()
	for _, s := range spans {
		if s.Status().Code == codes.Error {
			t.Errorf("%s has status Error in an interrupted run", s.Name())
		}
	}
	run := attrs(named(spans, "invoke_agent main")[0])
	checkAttrs(t, "interrupted run", run, map[string]any{"deepagents.run.status": "interrupted", "deepagents.run.interrupts": int64(1)})
	task := attrs(named(spans, "execute_tool task")[0])
	checkAttrs(t, "task", task, map[string]any{"deepagents.tool.interrupted": true})

	if _, err := a.Resume(ctx, "t", []agent.Decision{{Type: agent.DecisionApprove}}); err != nil {
		t.Fatal(err)
	}
	runs := named(rec.Ended(), "invoke_agent main")
	if len(runs) != 2 {
		t.Fatalf("%d main runs, want 2", len(runs))
	}
	checkAttrs(t, "resumed run", attrs(runs[1]), map[string]any{"deepagents.run.resumed": true, "deepagents.run.status": "completed", "gen_ai.conversation.id": "t"})
}

// TestOffAddsNothing checks that without a TracerProvider no middleware
// is added, to the main agent or to its subagents.
func TestOffAddsNothing(t *testing.T) {
	a := newAgent(t, deepagents.Config{Model: replay.New()})
	for _, m := range a.Middleware() {
		if m.Name() == "tracing" {
			t.Error("tracing is in the stack without a TracerProvider")
		}
	}
	tp, _ := recorder(t)
	a = newAgent(t, deepagents.Config{Model: replay.New(), TracerProvider: tp})
	if ms := a.Middleware(); len(ms) == 0 || ms[0].Name() != "tracing" {
		t.Errorf("with a TracerProvider, tracing is not the outermost middleware")
	}
}

// retryingModel reports a retry, as providers do, before answering.
type retryingModel struct{}

func (retryingModel) Stream(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		llm.NotifyRetry(ctx, llm.Retry{Provider: "test", Attempt: 1, MaxAttempts: 3, Wait: time.Second, Err: errors.New("429 rate limited")})
		yield(llm.Chunk{Type: llm.ChunkDone, Response: &llm.Response{Message: llm.AssistantText("ok"), StopReason: llm.StopMaxTokens}}, nil)
	}
}

// TestRetryEvents checks that a provider's retries are events of the chat
// span, and still notices of the run.
func TestRetryEvents(t *testing.T) {
	tp, rec := recorder(t)
	a, err := agent.New(agent.Config{Model: retryingModel{}, Middleware: []agent.Middleware{telemetry.New(tp, telemetry.Options{})}})
	if err != nil {
		t.Fatal(err)
	}
	notices := 0
	for e, err := range a.Stream(context.Background(), agent.Prompt("go")) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Type == agent.EventNotice {
			notices++
		}
	}
	chat := named(rec.Ended(), "chat")
	if len(chat) != 1 {
		t.Fatalf("%d chat spans named %q (a model without Info)", len(chat), "chat")
	}
	ev := chat[0].Events()
	if len(ev) != 1 || ev[0].Name != "retry" || notices != 1 {
		t.Errorf("events %v, %d notices; want one retry event and one notice", ev, notices)
	}
	checkAttrs(t, "chat", attrs(chat[0]), map[string]any{"gen_ai.provider.name": "_OTHER", "gen_ai.response.finish_reasons": []string{"length"}})
}

// TestSummarizerCallIsTraced checks that the summary call summarization
// makes with the agent's model is a chat span of its own.
func TestSummarizerCallIsTraced(t *testing.T) {
	tp, rec := recorder(t)
	script := &replay.Script{
		ContextWindow: 2000,
		Turns:         []replay.Turn{{Content: "done"}},
		Defaults:      map[string]replay.Turn{"summarizer": {Content: "A summary."}},
	}
	var history []llm.Message
	for range 30 {
		history = append(history, llm.UserText(strings.Repeat("word ", 60)), llm.AssistantText(strings.Repeat("reply ", 60)))
	}
	a := newAgent(t, deepagents.Config{Model: replay.NewFromScript(script), TracerProvider: tp})
	if _, err := a.Invoke(context.Background(), agent.Input{State: &deepagents.State{Messages: history}, Messages: []llm.Message{llm.UserText("go on")}}); err != nil {
		t.Fatal(err)
	}
	var agents []string
	for _, s := range named(rec.Ended(), "chat script") {
		agents = append(agents, attrs(s)["gen_ai.agent.name"].AsString())
	}
	if !slices.Contains(agents, "summarizer") || !slices.Contains(agents, "main") {
		t.Errorf("chat spans of %v, want the summarizer's and main's", agents)
	}
}

func TestErrorType(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{context.Canceled, "canceled"},
		{errors.Join(errors.New("x"), context.DeadlineExceeded), "timeout"},
		{agent.ErrMaxSteps, "max_steps"},
		{agent.ErrPanic, "panic"},
		{llm.ErrIncomplete, "incomplete"},
		{&llm.MissingKeyError{Provider: "p", EnvVar: "K"}, "missing_key"},
		{errors.New("plain"), "_OTHER"},
		{&json.SyntaxError{}, "*json.SyntaxError"},
		{wrap(&json.SyntaxError{}), "*json.SyntaxError"},
	}
	for _, tt := range tests {
		if got := telemetry.ErrorType(tt.err); got != tt.want {
			t.Errorf("ErrorType(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

type wrapped struct{ err error }

func (w wrapped) Error() string { return "wrapped: " + w.err.Error() }
func (w wrapped) Unwrap() error { return w.err }

func wrap(err error) error { return wrapped{err} }
