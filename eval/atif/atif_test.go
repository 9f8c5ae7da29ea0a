package atif

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/internal/golden"
	"github.com/deepagents-go/deepagents/llm"
)

// script is the event stream of a run that delegates to a subagent, calls
// a tool that fails, and answers.
func script() []agent.Event {
	sub := []string{"general-purpose:call_2"}
	return []agent.Event{
		{Type: agent.EventRunStart, ThreadID: "thread-1"},
		{Type: agent.EventTextDelta, Delta: "Let me "},
		{Type: agent.EventMessage, Message: &llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
			{Type: llm.PartReasoning, Text: "Count the words, and have them checked."}, llm.Text("Let me count."),
		}, ToolCalls: []llm.ToolCall{
			{ID: "call_1", Name: "execute", Args: json.RawMessage(`{"command":"wc -w < notes.txt"}`)},
			{ID: "call_2", Name: "task", Args: json.RawMessage(`{"description":"Check that notes.txt has 3 words","subagent_type":"general-purpose"}`)},
		}}},
		{Type: agent.EventUsage, Name: "anthropic:claude-sonnet-4-5", Usage: &llm.Usage{InputTokens: 1000, OutputTokens: 50, CacheReadTokens: 800, CacheWriteTokens: 100}},
		{Type: agent.EventToolCall, ToolCallID: "call_1", Name: "execute", Args: json.RawMessage(`{"command":"wc -w < notes.txt"}`)},
		{Type: agent.EventToolResult, ToolCallID: "call_1", Name: "execute", Content: "3"},
		{Type: agent.EventToolCall, ToolCallID: "call_2", Name: "task"},
		{Type: agent.EventRunStart, Namespace: sub, ThreadID: "thread-2"},
		{Type: agent.EventMessage, Namespace: sub, Message: &llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("It has 3 words.")}}},
		{Type: agent.EventUsage, Namespace: sub, Name: "anthropic:claude-haiku-4-5", Usage: &llm.Usage{InputTokens: 200, OutputTokens: 10}},
		{Type: agent.EventRunEnd, Namespace: sub, Status: agent.StatusCompleted},
		{Type: agent.EventToolResult, ToolCallID: "call_2", Name: "task", Content: "It has 3 words."},
		{Type: agent.EventState, Files: []string{"count.txt"}},
		{Type: agent.EventMessage, Message: &llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
			{ID: "call_3", Name: "read_file", Args: json.RawMessage(`"count.txt"`)},
		}}},
		{Type: agent.EventUsage, Name: "anthropic:claude-sonnet-4-5", Usage: &llm.Usage{InputTokens: 1100, OutputTokens: 20, CacheReadTokens: 1000}},
		{Type: agent.EventToolResult, ToolCallID: "call_3", Name: "read_file", Content: "invalid arguments", IsError: true},
		// A middleware's own model call (a summary): counted in the
		// totals, no step of its own.
		{Type: agent.EventUsage, Namespace: []string{"summarization"}, Name: "anthropic:claude-haiku-4-5", Usage: &llm.Usage{InputTokens: 300, OutputTokens: 30}},
		{Type: agent.EventMessage, Message: &llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("Counted: 3.")}}},
		{Type: agent.EventUsage, Name: "anthropic:claude-sonnet-4-5", Usage: &llm.Usage{InputTokens: 1200, OutputTokens: 5, CacheReadTokens: 1100}},
		{Type: agent.EventCheckpoint, CheckpointID: "cp-1"},
		{Type: agent.EventRunEnd, Status: agent.StatusCompleted, Usage: &llm.Usage{InputTokens: 3800, OutputTokens: 115}},
	}
}

func build(events []agent.Event, o Options) (*Trajectory, []Subagent) {
	b := NewBuilder(o)
	for _, e := range events {
		b.Add(e)
	}
	return b.Build()
}

func options() Options {
	return Options{
		Agent:        Agent{Version: "test"},
		Prompt:       "Write the number of words of notes.txt to count.txt.",
		Price:        func(spec string) (llm.Price, bool) { return llm.PriceOf(spec, nil) },
		SubagentPath: func(ns []string, _ int) string { return "0." + strings.ReplaceAll(ns[0], ":", "-") + ".json" },
	}
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// A scripted run's trajectory, and its subagent's, validate against the
// pinned schema and are the golden files.
func TestBuild(t *testing.T) {
	main, subs := build(script(), options())
	data := marshal(t, main)
	if err := Validate(data); err != nil {
		t.Fatalf("the run's trajectory does not validate: %v\n%s", err, data)
	}
	golden.Check(t, "testdata/trajectory.json", data)
	if len(subs) != 1 || strings.Join(subs[0].Namespace, "/") != "general-purpose:call_2" {
		t.Fatalf("subagents: %+v", subs)
	}
	sub := marshal(t, subs[0].Trajectory)
	if err := Validate(sub); err != nil {
		t.Fatalf("the subagent's trajectory does not validate: %v\n%s", err, sub)
	}
	golden.Check(t, "testdata/subagent.json", sub)

	// What the golden files say, spelled out.
	if main.SessionID != "thread-1" || main.Agent.Name != "deepagents" || main.Agent.ModelName != "anthropic:claude-sonnet-4-5" || len(main.Steps) != 4 {
		t.Fatalf("the trajectory: %s", data)
	}
	user, first, failed, last := main.Steps[0], main.Steps[1], main.Steps[2], main.Steps[3]
	if user.Source != SourceUser || user.Message != options().Prompt {
		t.Errorf("step 1 is not the prompt: %+v", user)
	}
	if first.Message != "Let me count." || first.ReasoningContent == "" || len(first.ToolCalls) != 2 || first.Observation == nil || len(first.Observation.Results) != 2 {
		t.Fatalf("step 2: %+v", first)
	}
	if m := first.Metrics; m == nil || *m.PromptTokens != 1000 || *m.CachedTokens != 800 || m.CostUSD == nil || *m.CostUSD <= 0 {
		t.Errorf("step 2's metrics: %+v", m)
	}
	if refs := first.Observation.Results[1].SubagentTrajectoryRef; len(refs) != 1 || refs[0].SessionID != subs[0].Trajectory.SessionID || refs[0].TrajectoryPath != "0.general-purpose-call_2.json" {
		t.Errorf("the delegation's reference: %+v", refs)
	}
	if string(failed.ToolCalls[0].Arguments) != `{"input":"count.txt"}` || failed.Extra["failed_tool_calls"] == nil {
		t.Errorf("step 3: %+v", failed)
	}
	if last.Message != "Counted: 3." || last.Observation != nil {
		t.Errorf("step 4: %+v", last)
	}
	// The totals are the whole tree's: the subagent's and the
	// middleware's calls included.
	if f := main.FinalMetrics; f == nil || *f.TotalPromptTokens != 3800 || *f.TotalCompletionTokens != 115 || *f.TotalSteps != 4 || f.Extra["model_calls"] != 5 {
		t.Errorf("final metrics: %+v", main.FinalMetrics)
	}
	if s := subs[0].Trajectory; s.Steps[0].Message != "Check that notes.txt has 3 words" || *s.FinalMetrics.TotalPromptTokens != 200 {
		t.Errorf("the subagent's trajectory: %s", sub)
	}
}

// A run that ends in the middle of its answer keeps what it streamed, and
// says how it ended; a model of no known price leaves the cost out and
// says which.
func TestBuildPartial(t *testing.T) {
	o := options()
	o.Price = func(string) (llm.Price, bool) { return llm.Price{}, false }
	main, subs := build([]agent.Event{
		{Type: agent.EventTextDelta, Delta: "I will "},
		{Type: agent.EventTextDelta, Delta: "count"},
		{Type: agent.EventUsage, Name: "x:y", Usage: &llm.Usage{InputTokens: 10}},
		{Type: agent.EventError, Error: "the model: connection reset"},
		{Type: agent.EventRunEnd, Status: agent.StatusFailed, Error: "the model: connection reset"},
	}, o)
	data := marshal(t, main)
	if err := Validate(data); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if len(subs) != 0 || main.SessionID != "deepagents" || len(main.Steps) != 2 || main.Steps[1].Message != "I will count" || main.Steps[1].Extra["partial"] != true {
		t.Fatalf("a partial answer: %s", data)
	}
	if main.Extra["status"] != "failed" || main.FinalMetrics.TotalCostUSD != nil || main.FinalMetrics.Extra["unpriced_models"] == nil {
		t.Errorf("how it ended, what it cost: %s", data)
	}
}

// Tool arguments are always a JSON object.
func TestArguments(t *testing.T) {
	for in, want := range map[string]string{
		``:            `{}`,
		`null`:        `{}`,
		` {"a": 1} `:  `{"a": 1}`,
		`[1,2]`:       `{"input":[1,2]}`,
		`"x"`:         `{"input":"x"}`,
		`{"broken":`:  `{"input":"{\"broken\":"}`,
		`not json at`: `{"input":"not json at"}`,
	} {
		if got := string(arguments(json.RawMessage(in))); got != want {
			t.Errorf("arguments(%q) = %s, want %s", in, got, want)
		}
	}
}

// Validate rejects what is not ATIF, saying what is wrong.
func TestValidateRejects(t *testing.T) {
	valid := func() map[string]any {
		return map[string]any{
			"schema_version": "ATIF-v1.4",
			"session_id":     "s",
			"agent":          map[string]any{"name": "a", "version": "1"},
			"steps": []any{
				map[string]any{"step_id": 1, "source": "user", "message": "hi"},
				map[string]any{"step_id": 2, "source": "agent", "message": "", "model_name": "m",
					"tool_calls":  []any{map[string]any{"tool_call_id": "c", "function_name": "f", "arguments": map[string]any{}}},
					"observation": map[string]any{"results": []any{map[string]any{"source_call_id": "c", "content": "ok"}}},
					"metrics":     map[string]any{"prompt_tokens": 3, "cost_usd": nil}},
			},
			"final_metrics": map[string]any{"total_steps": 2},
		}
	}
	step := func(v map[string]any, i int) map[string]any { return v["steps"].([]any)[i].(map[string]any) }
	if err := Validate(marshal(t, valid())); err != nil {
		t.Fatalf("the valid trajectory: %v", err)
	}
	for _, c := range []struct {
		name, want string
		edit       func(map[string]any)
	}{
		{"no session_id", "session_id", func(v map[string]any) { delete(v, "session_id") }},
		{"no agent version", "version", func(v map[string]any) { delete(v["agent"].(map[string]any), "version") }},
		{"a step without its message", "message", func(v map[string]any) { delete(step(v, 0), "message") }},
		{"another schema version", "schema_version", func(v map[string]any) { v["schema_version"] = "ATIF-v9" }},
		{"an unknown field", "colour", func(v map[string]any) { v["colour"] = "blue" }},
		{"a source that is none", "source", func(v map[string]any) { step(v, 0)["source"] = "tool" }},
		{"metrics on a user step", "metrics", func(v map[string]any) { step(v, 0)["metrics"] = map[string]any{} }},
		{"arguments that are no object", "arguments", func(v map[string]any) {
			step(v, 1)["tool_calls"].([]any)[0].(map[string]any)["arguments"] = "x"
		}},
		{"a fractional token count", "prompt_tokens", func(v map[string]any) { step(v, 1)["metrics"].(map[string]any)["prompt_tokens"] = 1.5 }},
		{"step_ids out of order", "step_id is 3, want 2", func(v map[string]any) { step(v, 1)["step_id"] = 3 }},
		{"a result of no call of its step", `source_call_id "d"`, func(v map[string]any) {
			step(v, 1)["observation"].(map[string]any)["results"].([]any)[0].(map[string]any)["source_call_id"] = "d"
		}},
	} {
		v := valid()
		c.edit(v)
		err := Validate(marshal(t, v))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate = %v, want an error about %s", c.name, err, c.want)
		}
	}
	if err := Validate([]byte(`{"schema_version":`)); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("broken JSON: %v", err)
	}
}

// A subagent of a subagent is referenced by the subagent that started it;
// one started by no call its parent made is referenced by the parent's
// last step, as an action of no tool call. Every trajectory validates.
func TestBuildNested(t *testing.T) {
	a, ab := []string{"a:c1"}, []string{"a:c1", "b:c2"}
	call := func(ns []string, id string) agent.Event {
		return agent.Event{Type: agent.EventMessage, Namespace: ns, Message: &llm.Message{Role: llm.RoleAssistant,
			ToolCalls: []llm.ToolCall{{ID: id, Name: "task", Args: json.RawMessage(`{"description":"do ` + id + `"}`)}}}}
	}
	main, subs := build([]agent.Event{
		call(nil, "c1"),
		call(a, "c2"),
		{Type: agent.EventMessage, Namespace: ab, Message: &llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("done")}}},
		{Type: agent.EventToolResult, Namespace: a, ToolCallID: "c2", Content: "done"},
		{Type: agent.EventMessage, Namespace: []string{"orphan:c9"}, Message: &llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("?")}}},
		{Type: agent.EventToolResult, ToolCallID: "c1", Content: "done"},
	}, Options{SessionID: "s"})
	if len(subs) != 3 {
		t.Fatalf("subagents: %+v", subs)
	}
	for _, tr := range append([]*Trajectory{main}, subs[0].Trajectory, subs[1].Trajectory, subs[2].Trajectory) {
		if err := Validate(marshal(t, tr)); err != nil {
			t.Errorf("%s: %v\n%s", tr.SessionID, err, marshal(t, tr))
		}
	}
	refs := func(tr *Trajectory, step int) (out []string) {
		for _, r := range tr.Steps[step].Observation.Results {
			for _, ref := range r.SubagentTrajectoryRef {
				out = append(out, r.SourceCallID+"->"+ref.SessionID)
			}
		}
		return out
	}
	if got := strings.Join(refs(main, 0), " "); got != "c1->s/a:c1 ->s/orphan:c9" {
		t.Errorf("the main agent's references: %s", got)
	}
	if got := strings.Join(refs(subs[0].Trajectory, 1), " "); got != "c2->s/a:c1/b:c2" {
		t.Errorf("the subagent's references: %s\n%s", got, marshal(t, subs[0].Trajectory))
	}
	if sub := subs[1].Trajectory; sub.Steps[0].Source != SourceUser || sub.Steps[0].Message != "do c2" {
		t.Errorf("what the nested subagent was asked: %+v", sub.Steps[0])
	}
}

// A model that reuses a tool call's id across turns starts a subagent
// at the same namespace twice: two runs, two trajectories, with their
// own sessions and files, each linked from the step that delegated it.
func TestBuildReusedCallID(t *testing.T) {
	sub := []string{"general-purpose:call_1"}
	delegate := func(what string) agent.Event {
		return agent.Event{Type: agent.EventMessage, Message: &llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
			{ID: "call_1", Name: "task", Args: json.RawMessage(`{"description":"` + what + `"}`)}}}}
	}
	answer := func(text string) agent.Event {
		return agent.Event{Type: agent.EventMessage, Namespace: sub, Message: &llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text(text)}}}
	}
	events := []agent.Event{
		{Type: agent.EventRunStart, ThreadID: "t"},
		delegate("first"),
		{Type: agent.EventRunStart, Namespace: sub},
		answer("one"),
		{Type: agent.EventRunEnd, Namespace: sub, Status: agent.StatusCompleted},
		{Type: agent.EventToolResult, ToolCallID: "call_1", Content: "one"},
		delegate("second"),
		{Type: agent.EventRunStart, Namespace: sub},
		answer("two"),
		{Type: agent.EventRunEnd, Namespace: sub, Status: agent.StatusCompleted},
		{Type: agent.EventToolResult, ToolCallID: "call_1", Content: "two"},
		{Type: agent.EventRunEnd, Status: agent.StatusCompleted},
	}
	b := NewBuilder(Options{SubagentPath: func(ns []string, run int) string { return strings.Join(ns, "/") + "#" + string(rune('0'+run)) }})
	for _, e := range events {
		b.Add(e)
	}
	main, subs := b.Build()
	if len(subs) != 2 {
		t.Fatalf("%d subagent trajectories, want 2", len(subs))
	}
	for i, tt := range []struct{ session, prompt, answer, path string }{
		{"t/general-purpose:call_1", "first", "one", "general-purpose:call_1#0"},
		{"t/general-purpose:call_1#2", "second", "two", "general-purpose:call_1#1"},
	} {
		s := subs[i]
		if s.Run != i || s.Trajectory.SessionID != tt.session || len(s.Trajectory.Steps) != 2 ||
			s.Trajectory.Steps[0].Message != tt.prompt || s.Trajectory.Steps[1].Message != tt.answer {
			b, _ := json.Marshal(s)
			t.Errorf("run %d: %s", i, b)
		}
		if len(main.Steps) != 2 {
			t.Fatalf("%d main steps, want 2", len(main.Steps))
		}
		step := main.Steps[i]
		if o := step.Observation; o == nil || len(o.Results) != 1 || len(o.Results[0].SubagentTrajectoryRef) != 1 ||
			o.Results[0].SubagentTrajectoryRef[0].SessionID != tt.session || o.Results[0].SubagentTrajectoryRef[0].TrajectoryPath != tt.path {
			b, _ := json.Marshal(step)
			t.Errorf("the step that delegated run %d: %s", i, b)
		}
	}
}

// A price of inf or nan prices nothing: the trajectory stays JSON, its
// model unpriced.
func TestBuildNonFinitePrice(t *testing.T) {
	for _, bad := range []float64{math.Inf(1), math.NaN()} {
		b := NewBuilder(Options{Price: func(string) (llm.Price, bool) { return llm.Price{Input: bad, Output: bad}, true }})
		for _, e := range script() {
			b.Add(e)
		}
		main, subs := b.Build()
		for _, tr := range append([]*Trajectory{main}, subs[0].Trajectory) {
			if _, err := json.Marshal(tr); err != nil {
				t.Errorf("price %v: %v", bad, err)
			}
		}
		if main.FinalMetrics.TotalCostUSD != nil || main.FinalMetrics.Extra["unpriced_models"] == nil {
			t.Errorf("price %v: %+v", bad, main.FinalMetrics)
		}
	}
}
