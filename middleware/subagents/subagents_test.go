package subagents_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/middleware/memory"
	"github.com/deepagents-go/deepagents/middleware/patch"
	"github.com/deepagents-go/deepagents/middleware/subagents"
	"github.com/deepagents-go/deepagents/middleware/todos"
	"github.com/deepagents-go/deepagents/thread"
	"github.com/deepagents-go/deepagents/tool"
)

func taskCall(id, typ, desc string) llm.ToolCall {
	args, _ := json.Marshal(map[string]string{"description": desc, "subagent_type": typ})
	return llm.ToolCall{ID: id, Name: subagents.TaskTool, Args: args}
}

// noteTool writes a file into the state's files.
func noteTool() tool.Tool {
	type in struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	return tool.Must(tool.New("note", "Write a note file.", func(ctx context.Context, x in) (string, error) {
		agent.RuntimeFromContext(ctx).Files().Put(x.Path, thread.FileData{Content: x.Content, CreatedAt: time.Now(), ModifiedAt: time.Now()})
		return "noted", nil
	}))
}

func resultsByID(msgs []llm.Message) map[string]llm.Message {
	out := map[string]llm.Message{}
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			out[m.ToolCallID] = m
		}
	}
	return out
}

// todosCall is a write_todos call of the todo list list (JSON).
func todosCall(id, list string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: todos.WriteTodosTool, Args: json.RawMessage(`{"todos":` + list + `}`)}
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

// newPatch returns the middleware that repairs unanswered tool calls.
func newPatch(t *testing.T) *patch.Middleware {
	t.Helper()
	m, err := patch.New(patch.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return m
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

func newMain(t *testing.T, m llm.Model, cfg subagents.Config, extra ...agent.Middleware) *agent.Agent {
	t.Helper()
	cfg.Agent.Model = m
	subs, err := subagents.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Model: m, Tools: cfg.Agent.Tools, Middleware: append([]agent.Middleware{subs}, extra...)})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestTaskRunsSubagentsInParallel(t *testing.T) {
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{
			taskCall("t1", "general-purpose", "research Go"),
			taskCall("t2", "general-purpose", "research Rust"),
			taskCall("t3", "nobody", "x"),
		}, Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}},
		replay.Turn{Agent: "general-purpose", Content: "report one", Usage: llm.Usage{InputTokens: 7, OutputTokens: 3}, Expect: &replay.Expect{SystemContains: []string{"general-purpose assistant"}}},
		replay.Turn{Agent: "general-purpose", Content: "report two\n", Usage: llm.Usage{InputTokens: 5, OutputTokens: 2}},
		replay.Turn{Content: "combined", Expect: &replay.Expect{MessagesContain: []string{"report one", "report two"}}},
	)
	a := newMain(t, m, subagents.Config{})
	var subEvents, subEnds int
	var end agent.Event
	for e, err := range a.Stream(context.Background(), agent.Prompt("compare")) {
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Namespace) == 1 && strings.HasPrefix(e.Namespace[0], "general-purpose:t") {
			subEvents++
			if e.Type == agent.EventRunEnd {
				subEnds++
			}
		} else if len(e.Namespace) != 0 {
			t.Errorf("unexpected namespace %v", e.Namespace)
		}
		if e.Type == agent.EventRunEnd && len(e.Namespace) == 0 {
			end = e
		}
	}
	if subEnds != 2 || subEvents < 6 {
		t.Errorf("subagent events: %d (run_end %d)", subEvents, subEnds)
	}
	if end.Status != agent.StatusCompleted {
		t.Fatalf("end = %+v", end)
	}
	if want := (llm.Usage{InputTokens: 112, OutputTokens: 15}); *end.Usage != want {
		t.Errorf("usage = %+v, want %+v (subagents rolled up)", *end.Usage, want)
	}
	if m.Remaining() != 0 {
		t.Errorf("%d turns unplayed", m.Remaining())
	}
}

func TestTaskResults(t *testing.T) {
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{
			taskCall("ok", "general-purpose", "do it"),
			taskCall("bad", "flaky", "fail please"),
			taskCall("boom", "panicky", "panic please"),
			taskCall("none", "nobody", "x"),
		}},
		replay.Turn{Agent: "general-purpose", Content: "did it  \n"},
		replay.Turn{Agent: "flaky", Error: "provider down"},
		replay.Turn{Content: "done"},
	)
	a := newMain(t, m, subagents.Config{Subagents: []subagents.Subagent{
		{Name: "flaky", Description: "fails"},
		{Name: "panicky", Description: "panics", Runnable: panicRunnable{}},
	}})
	res, err := a.Invoke(context.Background(), agent.Prompt("go"))
	if err != nil {
		t.Fatal(err)
	}
	got := resultsByID(res.State.Messages)
	check := func(id, want string, isErr bool) {
		t.Helper()
		r := got[id]
		if !strings.Contains(r.Text(), want) || r.IsError != isErr {
			t.Errorf("%s: %q (error %v), want %q (error %v)", id, r.Text(), r.IsError, want, isErr)
		}
	}
	check("ok", "did it", false)
	if got["ok"].Text() != "did it" {
		t.Errorf("answer not trimmed: %q", got["ok"].Text())
	}
	check("bad", "subagent flaky failed", true)
	check("bad", "provider down", true)
	check("boom", "failed unexpectedly", true)
	check("none", "We cannot invoke subagent nobody because it does not exist, the only allowed types are `general-purpose`, `flaky`, `panicky`", true)
	if res.Text() != "done" {
		t.Errorf("text = %q", res.Text())
	}
}

type panicRunnable struct{}

func (panicRunnable) Invoke(context.Context, agent.Input) (*agent.Result, error) {
	panic("subagent exploded")
}

// echoRunnable is a compiled subagent: it answers with what it received.
type echoRunnable struct{ got *agent.Input }

func (e echoRunnable) Invoke(_ context.Context, in agent.Input) (*agent.Result, error) {
	*e.got = in
	msgs := append(append([]llm.Message(nil), in.Messages...), llm.AssistantText("echo: "+in.Messages[0].Text()))
	return &agent.Result{Status: agent.StatusCompleted, State: &thread.State{Messages: msgs}}, nil
}

func TestStateIsolationAndMergeBack(t *testing.T) {
	var seen agent.Input
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{{ID: "n", Name: "note", Args: json.RawMessage(`{"path":"/plan.md","content":"the plan"}`)}, todosCall("td", `[{"content":"x","status":"pending"}]`)}},
		replay.Turn{ToolCalls: []llm.ToolCall{taskCall("w", "writer", "write the draft"), taskCall("e", "echo", "hello")}},
		replay.Turn{Agent: "writer", ToolCalls: []llm.ToolCall{{ID: "wn", Name: "note", Args: json.RawMessage(`{"path":"/draft.md","content":"draft"}`)},
			todosCall("wt", `[{"content":"the writer's","status":"pending"},{"content":"own plan","status":"pending"}]`)},
			Expect: &replay.Expect{MessagesExclude: []string{"Updated todo list"}, LastMessageContains: []string{"write the draft"}, ToolsInclude: []string{"note"}, ToolsExclude: []string{"task"}}},
		replay.Turn{Agent: "writer", Content: "wrote /draft.md"},
		replay.Turn{Content: "ok"},
	)
	mem, err := memory.New(memory.Config{Backend: backend.NewStateBackend(nil)})
	if err != nil {
		t.Fatal(err)
	}
	a := newMain(t, m, subagents.Config{
		Parent: subagents.Parent{
			Agent:      agent.Config{Tools: []tool.Tool{noteTool()}},
			Middleware: func() []agent.Middleware { return []agent.Middleware{newTodos(t)} },
		},
		Subagents: []subagents.Subagent{
			{Name: "writer", Description: "writes", SystemPrompt: "You write."},
			{Name: "echo", Description: "echoes", Runnable: echoRunnable{&seen}},
		},
		NoGeneralPurpose: true,
	}, newTodos(t), mem) // memory keeps its value to the main agent
	res, err := a.Invoke(context.Background(), agent.Input{
		Messages: []llm.Message{llm.UserText("go")},
		Values:   map[string]json.RawMessage{"project": json.RawMessage(`"apollo"`), memory.Value: json.RawMessage(`{"/AGENTS.md":"secret"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := res.State.Files.Get("/draft.md"); !ok || d.Content != "draft" {
		t.Errorf("subagent's file did not merge back: %+v", d)
	}
	// The plan is each agent's own: the writer's does not come back.
	if plan, err := todos.Of(res.State.Values); err != nil || len(plan) != 1 {
		t.Errorf("main todos = %v, %v", plan, err)
	}
	if _, ok := seen.Values[todos.Value]; ok {
		t.Error("the plan passed to the subagent")
	}
	if got := resultsByID(res.State.Messages)["e"].Text(); got != "echo: hello" {
		t.Errorf("compiled subagent answer = %q", got)
	}
	if len(seen.Messages) != 1 || seen.Messages[0].Text() != "hello" {
		t.Errorf("compiled subagent got messages %v", seen.Messages)
	}
	if _, ok := seen.Values["project"]; !ok {
		t.Error("custom value not passed to the subagent")
	}
	if _, ok := seen.Values[memory.Value]; ok {
		t.Error("memory contents passed to the subagent")
	}
	if d, ok := seen.Files["/plan.md"]; !ok || d.Content != "the plan" {
		t.Errorf("files passed to the subagent: %v", seen.Files)
	}
	if diff := cmp.Diff([]string{"/draft.md", "/plan.md"}, res.ChangedFiles); diff != "" {
		t.Errorf("changed files (-want +got):\n%s", diff)
	}
}

func TestSubagentInterruptSurfacesAndResumes(t *testing.T) {
	ctx := context.Background()
	saver := checkpoint.NewMemorySaver()
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{taskCall("t", "careful", "write a note")}},
		replay.Turn{Agent: "careful", ToolCalls: []llm.ToolCall{{ID: "n", Name: "note", Args: json.RawMessage(`{"path":"/a.md","content":"x"}`)}}},
		replay.Turn{Agent: "careful", Content: "note rejected, stopping", Expect: &replay.Expect{LastMessageContains: []string{"no notes"}}},
		replay.Turn{Content: "ok", Expect: &replay.Expect{LastMessageContains: []string{"note rejected"}}},
	)
	subs, err := subagents.New(subagents.Config{
		Parent: subagents.Parent{Agent: agent.Config{Model: m, Tools: []tool.Tool{noteTool()}, Checkpointer: saver}}, NoGeneralPurpose: true,
		Subagents: []subagents.Subagent{{Name: "careful", Description: "asks first", InterruptOn: map[string]hitl.InterruptOn{"note": {}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Model: m, Checkpointer: saver, Middleware: []agent.Middleware{newPatch(t), subs}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(ctx, agent.Input{ThreadID: "main", Messages: []llm.Message{llm.UserText("go")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.StatusInterrupted || len(res.Interrupts) != 1 {
		t.Fatalf("result = %+v", res)
	}
	req := res.Interrupts[0]
	if req.Tool != "note" || len(req.Namespace) != 1 || req.Namespace[0] != "careful:t" {
		t.Errorf("request = %+v", req)
	}
	res, err = a.Resume(ctx, "main", []agent.Decision{{Type: agent.DecisionReject, Message: "no notes"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.StatusCompleted || res.Text() != "ok" {
		t.Fatalf("after resume: %+v", res)
	}
	if _, ok := res.State.Files.Get("/a.md"); ok {
		t.Error("rejected note was written")
	}
}
