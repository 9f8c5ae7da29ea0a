package deepagents_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/hooks"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/summarization"
	"github.com/deepagents-go/deepagents/thread"
)

// answer is a Go hook that answers out, and records what it was given.
type answer struct {
	mu  sync.Mutex
	out *hooks.Output
	got []hooks.Input
}

func (a *answer) hook(e hooks.Event, matcher string) hooks.Hook {
	return hooks.Hook{Event: e, Matcher: matcher, Func: func(_ context.Context, in *hooks.Input) (*hooks.Output, error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.got = append(a.got, *in)
		return a.out, nil
	}}
}

func (a *answer) inputs() []hooks.Input {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]hooks.Input(nil), a.got...)
}

// TestHooksMeetRulesAndModes: a PreToolUse hook's deny wins over every
// rule and mode, its ask asks even where they would let the call run, and
// its allow skips the prompt but never a deny or an ask rule, nor plan
// mode's refusal.
func TestHooksMeetRulesAndModes(t *testing.T) {
	const write = `{"file_path":"/a.txt","content":"x"}`
	tests := []struct {
		hook  *hooks.Output
		mode  deepagents.PermissionMode
		tool  string
		args  string
		rules []string
		want  string
	}{
		{hooks.Deny("no"), deepagents.ModeBypass, "execute", `{"command":"ls"}`, []string{"allow execute"}, "hooked"},
		{hooks.Deny("no"), deepagents.ModeAsk, "read_file", `{"file_path":"/seed.txt"}`, nil, "hooked"},
		{hooks.Deny("no"), deepagents.ModePlan, "read_file", `{"file_path":"/seed.txt"}`, nil, "hooked"},
		{hooks.Ask("look"), deepagents.ModeBypass, "execute", `{"command":"ls"}`, nil, "asked"},
		{hooks.Ask("look"), deepagents.ModeAsk, "execute", `{"command":"ls"}`, []string{"allow execute"}, "asked"},
		{hooks.Ask("look"), deepagents.ModeAsk, "read_file", `{"file_path":"/seed.txt"}`, nil, "asked"},
		{hooks.Allow("fine"), deepagents.ModeAsk, "execute", `{"command":"ls"}`, nil, "ran"},
		{hooks.Allow("fine"), deepagents.ModeAsk, "write_file", write, nil, "ran"},
		{hooks.Allow("fine"), deepagents.ModeBypass, "execute", `{"command":"rm -rf /"}`, []string{"deny execute(rm)"}, "denied"},
		{hooks.Allow("fine"), deepagents.ModeBypass, "execute", `{"command":"git push"}`, []string{"ask execute(git push)"}, "asked"},
		{hooks.Allow("fine"), deepagents.ModePlan, "write_file", write, nil, "refused"},
		{nil, deepagents.ModeAsk, "execute", `{"command":"ls"}`, nil, "asked"},
		{nil, deepagents.ModeBypass, "execute", `{"command":"ls"}`, nil, "ran"},
		{hooks.Halt("enough"), deepagents.ModeBypass, "execute", `{"command":"ls"}`, nil, "stopped"},
	}
	for _, tc := range tests {
		name := string(tc.mode) + "/" + tc.tool + "/" + strings.Join(tc.rules, ",")
		if tc.hook != nil {
			out, _ := json.Marshal(tc.hook)
			name += "/" + string(out)
		}
		t.Run(name, func(t *testing.T) {
			h := &answer{out: tc.hook}
			m := replay.New(replay.Turn{ToolCalls: []llm.ToolCall{{ID: "c", Name: tc.tool, Args: json.RawMessage(tc.args)}}}, replay.Turn{Content: "done"})
			a := hookedAgent(t, m, checkpoint.NewMemorySaver(), tc.mode, []hooks.Hook{h.hook(hooks.PreToolUse, "")}, tc.rules...)
			res, err := a.Invoke(context.Background(), seeded())
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if tc.want == "stopped" {
				// The call is refused and the run ends without another
				// model call.
				if res.Status == agent.StatusCompleted && res.Steps == 1 && strings.Contains(resultOf(res, "c"), "stopped the agent: enough") {
					got = "stopped"
				}
			} else {
				got = outcome(t, res, "c")
			}
			if got != tc.want {
				t.Errorf("got %s, want %s (%+v)", got, tc.want, res.State.Messages)
			}
			ins := h.inputs()
			if len(ins) != 1 || ins[0].ToolName != tc.tool || ins[0].ToolUseID != "c" || string(ins[0].ToolInput) != tc.args || ins[0].SessionID != "t" {
				t.Errorf("the hook got %+v", ins)
			}
		})
	}
}

// seeded is the input of the tests' runs: thread t, a prompt, a file.
func seeded() agent.Input {
	in := agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("go")}}
	in.Files = map[string]thread.FileData{"/seed.txt": {Content: "seed\n"}}
	return in
}

// resultOf is the text of call id's result.
func resultOf(res *agent.Result, id string) string {
	for _, msg := range res.State.Messages {
		if msg.Role == llm.RoleTool && msg.ToolCallID == id {
			return msg.Text()
		}
	}
	return ""
}

// TestHookUpdatedInput: a PreToolUse hook's updatedInput is what the
// rules judge and the tool runs with.
func TestHookUpdatedInput(t *testing.T) {
	for _, tc := range []struct {
		updated string
		rules   []string
		want    string
	}{
		{`{"command":"echo safe"}`, nil, "ran echo safe"},
		{`{"command":"rm -rf /"}`, []string{"deny execute(rm)"}, "permission denied"},
		{`["not", "an object"]`, nil, "ran ls"},
	} {
		t.Run(tc.updated, func(t *testing.T) {
			out := &hooks.Output{Specific: &hooks.Specific{PermissionDecision: "allow", UpdatedInput: json.RawMessage(tc.updated)}}
			h := &answer{out: out}
			m := replay.New(replay.Turn{ToolCalls: []llm.ToolCall{{ID: "c", Name: "execute", Args: json.RawMessage(`{"command":"ls"}`)}}}, replay.Turn{Content: "done"})
			a := hookedAgent(t, m, checkpoint.NewMemorySaver(), deepagents.ModeBypass, []hooks.Hook{h.hook(hooks.PreToolUse, "execute")}, tc.rules...)
			res, err := a.Invoke(context.Background(), seeded())
			if err != nil {
				t.Fatal(err)
			}
			if got := resultOf(res, "c"); !strings.Contains(got, tc.want) {
				t.Errorf("result %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPostToolUseFeedback: a PostToolUse hook's block reason and context
// reach the model with the result; a failed call runs no PostToolUse
// hook; a matcher selects the tools.
func TestPostToolUseFeedback(t *testing.T) {
	h := &answer{out: &hooks.Output{Decision: "block", Reason: "lint failed: line 3", Specific: &hooks.Specific{AdditionalContext: "the style guide is in STYLE.md"}}}
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{
			{ID: "w", Name: "write_file", Args: json.RawMessage(`{"file_path":"/a.go","content":"package a"}`)},
			{ID: "bad", Name: "read_file", Args: json.RawMessage(`{"file_path":"/missing"}`)},
			{ID: "r", Name: "read_file", Args: json.RawMessage(`{"file_path":"/seed.txt"}`)},
		}},
		replay.Turn{Content: "done", Expect: &replay.Expect{MessagesContain: []string{"PostToolUse hook feedback:\nlint failed: line 3", "the style guide is in STYLE.md"}}},
	)
	a := hookedAgent(t, m, checkpoint.NewMemorySaver(), deepagents.ModeBypass, []hooks.Hook{h.hook(hooks.PostToolUse, "write_file|read_file")})
	res, err := a.Invoke(context.Background(), seeded())
	if err != nil {
		t.Fatal(err)
	}
	if got := resultOf(res, "w"); !strings.Contains(got, "lint failed") {
		t.Errorf("write's result: %q", got)
	}
	if got := resultOf(res, "bad"); strings.Contains(got, "lint failed") {
		t.Errorf("a failed call ran the hook: %q", got)
	}
	ins := h.inputs()
	if len(ins) != 2 {
		t.Fatalf("the hook ran %d times, want 2 (the calls that succeeded): %+v", len(ins), ins)
	}
	for _, in := range ins {
		var resp struct{ Content string }
		if err := json.Unmarshal(in.ToolResponse, &resp); err != nil || resp.Content == "" {
			t.Errorf("%s's tool_response: %s", in.ToolName, in.ToolResponse)
		}
	}
}

// TestUserPromptSubmit: a block drops the prompt and fails the run with
// ErrPromptBlocked; context reaches the model with the prompt.
func TestUserPromptSubmit(t *testing.T) {
	t.Run("block", func(t *testing.T) {
		saver := checkpoint.NewMemorySaver()
		h := &answer{out: hooks.Block("no secrets in prompts")}
		a := hookedAgent(t, replay.New(replay.Turn{Content: "never"}), saver, "", []hooks.Hook{h.hook(hooks.UserPromptSubmit, "")})
		_, err := a.Invoke(context.Background(), agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("my password is hunter2")}})
		if !errors.Is(err, hooks.ErrPromptBlocked) || !strings.Contains(err.Error(), "no secrets in prompts") {
			t.Fatalf("err = %v, want ErrPromptBlocked with the reason", err)
		}
		if ins := h.inputs(); len(ins) != 1 || ins[0].Prompt != "my password is hunter2" {
			t.Errorf("the hook got %+v", ins)
		}
		if cp, err := saver.Load(context.Background(), "t", ""); err == nil {
			for _, m := range cp.Messages {
				if strings.Contains(m.Text(), "hunter2") {
					t.Errorf("the blocked prompt was kept: %+v", cp.Messages)
				}
			}
		}
	})
	t.Run("context", func(t *testing.T) {
		h := &answer{out: hooks.Context("the sprint ends Friday")}
		m := replay.New(replay.Turn{Content: "ok", Expect: &replay.Expect{LastMessageContains: []string{"what is due?", "the sprint ends Friday"}}})
		a := hookedAgent(t, m, checkpoint.NewMemorySaver(), "", []hooks.Hook{h.hook(hooks.UserPromptSubmit, "")})
		if _, err := a.Invoke(context.Background(), agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("what is due?")}}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestStopHookContinues: a Stop hook that blocks sends the agent back to
// work with its reason; stop_hook_active tells it so, and a hook that
// always blocks is cut off after MaxStopContinuations.
func TestStopHookContinues(t *testing.T) {
	t.Run("once", func(t *testing.T) {
		var got []hooks.Input
		stop := hooks.Hook{Event: hooks.Stop, Func: func(_ context.Context, in *hooks.Input) (*hooks.Output, error) {
			got = append(got, *in)
			if *in.StopHookActive {
				return nil, nil
			}
			return hooks.Block("run the tests before you finish"), nil
		}}
		m := replay.New(replay.Turn{Content: "finished"}, replay.Turn{Content: "tests pass", Expect: &replay.Expect{LastMessageContains: []string{"Stop hook feedback:\nrun the tests before you finish"}}})
		a := hookedAgent(t, m, nil, "", []hooks.Hook{stop})
		res, err := a.Invoke(context.Background(), seeded())
		if err != nil {
			t.Fatal(err)
		}
		if res.Steps != 2 || res.LastMessage().Text() != "tests pass" {
			t.Errorf("steps %d, last %q", res.Steps, res.LastMessage().Text())
		}
		if len(got) != 2 || got[0].LastAssistantMessage != "finished" || *got[0].StopHookActive || !*got[1].StopHookActive {
			t.Errorf("the hook got %+v", got)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		h := &answer{out: hooks.Block("again")}
		turns := make([]replay.Turn, hooks.MaxStopContinuations+2)
		for i := range turns {
			turns[i] = replay.Turn{Content: "done"}
		}
		a := hookedAgent(t, replay.New(turns...), nil, "", []hooks.Hook{h.hook(hooks.Stop, "")})
		res, err := a.Invoke(context.Background(), seeded())
		if err != nil {
			t.Fatal(err)
		}
		if res.Steps != hooks.MaxStopContinuations+1 {
			t.Errorf("%d model calls, want %d", res.Steps, hooks.MaxStopContinuations+1)
		}
	})
}

// TestSubagentHooks: a subagent's final answer runs SubagentStop (matched
// on its name), not Stop; its tool calls run PreToolUse like the main
// agent's.
func TestSubagentHooks(t *testing.T) {
	sub, stop, pre := &answer{out: hooks.Block("check your work")}, &answer{}, &answer{out: hooks.Deny("not here")}
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{{ID: "t1", Name: "task", Args: json.RawMessage(`{"description":"list files","subagent_type":"general-purpose"}`)}}},
		replay.Turn{Agent: "general-purpose", ToolCalls: []llm.ToolCall{{ID: "s1", Name: "execute", Args: json.RawMessage(`{"command":"ls"}`)}}},
		replay.Turn{Agent: "general-purpose", Content: "could not", Expect: &replay.Expect{MessagesContain: []string{"PreToolUse hook refused this call: not here"}}},
		replay.Turn{Agent: "general-purpose", Content: "checked", Expect: &replay.Expect{LastMessageContains: []string{"SubagentStop hook feedback:\ncheck your work"}}},
		replay.Turn{Agent: "general-purpose", Content: "checked again"},
		replay.Turn{Content: "done"},
	)
	// The hook blocks once: the second SubagentStop has stop_hook_active.
	once := hooks.Hook{Event: hooks.SubagentStop, Matcher: "general-purpose", Func: func(ctx context.Context, in *hooks.Input) (*hooks.Output, error) {
		out, _ := sub.hook(hooks.SubagentStop, "").Func(ctx, in)
		if *in.StopHookActive {
			return nil, nil
		}
		return out, nil
	}}
	a := hookedAgent(t, m, checkpoint.NewMemorySaver(), deepagents.ModeBypass, []hooks.Hook{once, stop.hook(hooks.Stop, ""), pre.hook(hooks.PreToolUse, "execute")})
	res, err := a.Invoke(context.Background(), seeded())
	if err != nil {
		t.Fatal(err)
	}
	if got := resultOf(res, "t1"); got != "checked" {
		t.Errorf("the task's result: %q", got)
	}
	if ins := pre.inputs(); len(ins) != 1 || ins[0].SessionID != "t" {
		t.Errorf("the subagent's PreToolUse got %+v, want the session of thread t", ins)
	}
	if ins := sub.inputs(); len(ins) != 2 || ins[0].AgentType != "general-purpose" || ins[0].HookEventName != hooks.SubagentStop {
		t.Errorf("SubagentStop got %+v", ins)
	}
	if ins := stop.inputs(); len(ins) != 1 || ins[0].LastAssistantMessage != "done" {
		t.Errorf("Stop got %+v", ins)
	}
}

// TestNotificationAndPreCompact: a run that stops for approval notifies;
// /compact runs PreCompact with the user's focus.
func TestNotificationAndPreCompact(t *testing.T) {
	note, compact := &answer{}, &answer{}
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{{ID: "c", Name: "execute", Args: json.RawMessage(`{"command":"ls"}`)}}},
		replay.Turn{Content: "summary of it all"},
	)
	saver := checkpoint.NewMemorySaver()
	a := hookedAgent(t, m, saver, deepagents.ModeAsk, []hooks.Hook{note.hook(hooks.Notification, hooks.NotifyPermission), compact.hook(hooks.PreCompact, "manual")})
	res, err := a.Invoke(context.Background(), seeded())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.StatusInterrupted {
		t.Fatalf("status %s", res.Status)
	}
	if ins := note.inputs(); len(ins) != 1 || ins[0].NotificationType != hooks.NotifyPermission || !strings.Contains(ins[0].Message, "execute") {
		t.Errorf("Notification got %+v", ins)
	}
	// Reject, then compact the thread with a focus.
	if _, err := a.Resume(context.Background(), "t", []agent.Decision{{Type: agent.DecisionReject}}); err != nil {
		t.Fatal(err)
	}
	ctx := summarization.WithFocus(summarization.CompactNow(context.Background()), "keep the file names")
	if _, err := a.Invoke(ctx, agent.Input{ThreadID: "t", Prepare: true}); err != nil {
		t.Fatal(err)
	}
	if ins := compact.inputs(); len(ins) != 1 || ins[0].Trigger != "manual" || ins[0].CustomInstructions == nil || *ins[0].CustomInstructions != "keep the file names" {
		t.Errorf("PreCompact got %+v", ins)
	}
}

// TestUpdatedInputWhileStreaming: the message event keeps the model's
// arguments while a hook's updatedInput changes the ones the tool runs
// with (and the race detector sees no shared write).
func TestUpdatedInputWhileStreaming(t *testing.T) {
	out := &hooks.Output{Specific: &hooks.Specific{PermissionDecision: "allow", UpdatedInput: json.RawMessage(`{"command":"echo safe"}`)}}
	h := &answer{out: out}
	m := replay.New(replay.Turn{ToolCalls: []llm.ToolCall{{ID: "c", Name: "execute", Args: json.RawMessage(`{"command":"ls"}`)}}}, replay.Turn{Content: "done"})
	a := hookedAgent(t, m, checkpoint.NewMemorySaver(), deepagents.ModeBypass, []hooks.Hook{h.hook(hooks.PreToolUse, "execute")})
	var said, ran string
	for ev, err := range a.Stream(context.Background(), seeded()) {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case ev.Type == agent.EventMessage && len(ev.Message.ToolCalls) > 0:
			said = string(ev.Message.ToolCalls[0].Args)
		case ev.Type == agent.EventToolResult:
			ran = ev.Content
		}
	}
	if said != `{"command":"ls"}` || ran != "ran echo safe" {
		t.Errorf("the message event says %s, the tool ran %q", said, ran)
	}
}

// TestFailureAndSubagentStart: a failed call runs PostToolUseFailure (not
// PostToolUse) with its error, and the hook's context reaches the model
// with the error; a subagent's start runs SubagentStart (matched on its
// name), whose context reaches the subagent with its task.
func TestFailureAndSubagentStart(t *testing.T) {
	fail := &answer{out: hooks.Context("the file moved to /docs/missing.md")}
	post := &answer{}
	start := &answer{out: &hooks.Output{Specific: &hooks.Specific{AdditionalContext: "work in /src only"}}}
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{{ID: "bad", Name: "read_file", Args: json.RawMessage(`{"file_path":"/missing"}`)}}},
		replay.Turn{ToolCalls: []llm.ToolCall{{ID: "t1", Name: "task", Args: json.RawMessage(`{"description":"list files","subagent_type":"general-purpose"}`)}},
			Expect: &replay.Expect{MessagesContain: []string{"<PostToolUseFailure-hook-context>\nthe file moved to /docs/missing.md"}}},
		replay.Turn{Agent: "general-purpose", Content: "listed", Expect: &replay.Expect{LastMessageContains: []string{"list files", "<SubagentStart-hook-context>\nwork in /src only"}}},
		replay.Turn{Content: "done"},
	)
	a := hookedAgent(t, m, checkpoint.NewMemorySaver(), deepagents.ModeBypass, []hooks.Hook{
		fail.hook(hooks.PostToolUseFailure, "read_file"), post.hook(hooks.PostToolUse, ""),
		start.hook(hooks.SubagentStart, "general-purpose"), start.hook(hooks.SubagentStart, "other")})
	if _, err := a.Invoke(context.Background(), seeded()); err != nil {
		t.Fatal(err)
	}
	ins := fail.inputs()
	if len(ins) != 1 || ins[0].ToolName != "read_file" || !strings.Contains(ins[0].Error, "/missing") || ins[0].HookEventName != hooks.PostToolUseFailure {
		t.Errorf("PostToolUseFailure got %+v", ins)
	}
	posted := post.inputs()
	if len(posted) == 0 {
		t.Error("PostToolUse ran for no call (the task succeeded)")
	}
	for _, in := range posted {
		if in.ToolUseID == "bad" {
			t.Errorf("PostToolUse ran for the failed call: %+v", in)
		}
	}
	if ins := start.inputs(); len(ins) != 1 || ins[0].AgentType != "general-purpose" || ins[0].AgentID == "" || ins[0].SessionID != "t" {
		t.Errorf("SubagentStart got %+v", ins)
	}
}

// TestPermissionRequest: a call about to wait for approval runs the
// PermissionRequest hooks (matched on the tool's name): an allow runs it
// in the user's place, a deny refuses it with the reason, no answer asks;
// an ask rule still asks whatever the hook says; a call that would not ask
// runs no hook.
func TestPermissionRequest(t *testing.T) {
	allowWrite := &answer{out: &hooks.Output{Specific: &hooks.Specific{HookEventName: hooks.PermissionRequest, Decision: &hooks.PermissionDecision{Behavior: "allow"}}}}
	denyDeploy := &answer{out: &hooks.Output{Specific: &hooks.Specific{HookEventName: hooks.PermissionRequest, Decision: &hooks.PermissionDecision{Behavior: "deny", Message: "deploys go through CI"}}}}
	silent := &answer{}
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{
			{ID: "w", Name: "write_file", Args: json.RawMessage(`{"file_path":"/a.txt","content":"a"}`)},
			{ID: "d", Name: "deploy", Args: json.RawMessage(`{}`)},
			{ID: "r", Name: "read_file", Args: json.RawMessage(`{"file_path":"/seed.txt"}`)},
			{ID: "x", Name: "execute", Args: json.RawMessage(`{"command":"git push"}`)},
			{ID: "n", Name: "notes", Args: json.RawMessage(`{}`)},
		}},
		replay.Turn{Content: "done"},
	)
	a := hookedAgent(t, m, checkpoint.NewMemorySaver(), deepagents.ModeAsk, []hooks.Hook{
		allowWrite.hook(hooks.PermissionRequest, "write_file|execute"), denyDeploy.hook(hooks.PermissionRequest, "deploy"), silent.hook(hooks.PermissionRequest, "read_file|notes")},
		"ask execute(git push)")
	res, err := a.Invoke(context.Background(), seeded())
	if err != nil {
		t.Fatal(err)
	}
	// Execute, under its ask rule, and notes, whose hook did not answer,
	// wait; the write does not.
	if len(res.Interrupts) != 2 || res.Interrupts[0].ToolCallID != "x" || res.Interrupts[1].ToolCallID != "n" {
		t.Fatalf("interrupts %+v, want execute's and notes'", res.Interrupts)
	}
	if got := resultOf(res, "d"); !strings.Contains(got, "a PermissionRequest hook refused this call: deploys go through CI") {
		t.Errorf("deploy's result: %q", got)
	}
	if ins := silent.inputs(); len(ins) != 1 || ins[0].ToolName != "notes" {
		t.Errorf("the silent hook ran for %+v, want notes only (read_file asks no one)", ins)
	}
	if ins := allowWrite.inputs(); len(ins) != 2 || ins[0].HookEventName != hooks.PermissionRequest || ins[0].ToolName == "" || len(ins[0].ToolInput) == 0 {
		t.Errorf("the hook got %+v", ins)
	}
	res, err = a.Invoke(context.Background(), agent.Input{ThreadID: "t", Decisions: []agent.Decision{{Type: agent.DecisionApprove}, {Type: agent.DecisionApprove}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultOf(res, "w"); strings.Contains(got, "Error") || got == "" {
		t.Errorf("the write's result: %q", got)
	}
}
