package subagents_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/middleware/subagents"
	"github.com/deepagents-go/deepagents/tool"
)

// TestForkedSubagentSeesTheParentsConversation: a fact said only in an
// earlier user message reaches a forked subagent's model request, after
// which comes its task; an isolated subagent called in the same turn gets
// the task alone. Neither sees the parent's pending turn (the task calls),
// and each keeps its own system prompt.
func TestForkedSubagentSeesTheParentsConversation(t *testing.T) {
	const fact = "the locker code is 4417"
	m := replay.New(
		replay.Turn{Content: "Noted."},
		replay.Turn{Content: "I will delegate.", ToolCalls: []llm.ToolCall{
			taskCall("f", "forked", "open the locker"),
			taskCall("i", "isolated", "tidy the desk"),
		}},
		replay.Turn{Agent: "forked", Content: "opened it with 4417", Expect: &replay.Expect{
			MessagesContain:     []string{fact, "Noted.", "now get to work"},
			LastMessageContains: []string{"open the locker"},
			MessagesExclude:     []string{"tidy the desk", "I will delegate."},
			SystemContains:      []string{"You are the locksmith."},
			SystemExclude:       []string{"You are the boss."},
		}},
		replay.Turn{Agent: "isolated", Content: "desk tidy", Expect: &replay.Expect{
			MessagesExclude:     []string{"4417", "now get to work", "open the locker"},
			LastMessageContains: []string{"tidy the desk"},
		}},
		replay.Turn{Content: "all done", Expect: &replay.Expect{MessagesContain: []string{"opened it with 4417", "desk tidy"}}},
	).Record()
	subs, err := subagents.New(subagents.Config{
		Parent:           subagents.Parent{Agent: agent.Config{Model: m}},
		NoGeneralPurpose: true,
		Subagents: []subagents.Subagent{
			{Name: "forked", Description: "opens things", SystemPrompt: "You are the locksmith.", Mode: subagents.Fork},
			{Name: "isolated", Description: "tidies", SystemPrompt: "You are the cleaner.", Mode: subagents.Isolated},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Model: m, SystemPrompt: "You are the boss.", Middleware: []agent.Middleware{subs}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(context.Background(), agent.Prompt(fact))
	if err != nil {
		t.Fatal(err)
	}
	res, err = a.Invoke(context.Background(), agent.Input{State: res.State, Messages: []llm.Message{llm.UserText("now get to work")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "all done" || m.Remaining() != 0 {
		t.Fatalf("result %q, %d turns unplayed", res.Text(), m.Remaining())
	}
	// The forked request: the parent's three earlier messages, then the
	// task, nothing of the turn that called it.
	for _, r := range m.Requests() {
		if r.Agent != "forked" {
			continue
		}
		var roles []string
		for _, msg := range r.Request.Messages {
			roles = append(roles, string(msg.Role))
		}
		if got := strings.Join(roles, ","); got != "user,assistant,user,user" {
			t.Errorf("forked request roles %s, want user,assistant,user,user", got)
		}
	}
}

// TestForkedCompiledSubagentAndPrivateValues: a compiled subagent in fork
// mode gets the conversation too, and still none of the caller's private
// values.
func TestForkedCompiledSubagentAndPrivateValues(t *testing.T) {
	var seen agent.Input
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{taskCall("e", "echo", "repeat")}},
		replay.Turn{Content: "ok"},
	)
	a := newMain(t, m, subagents.Config{
		NoGeneralPurpose: true,
		Subagents:        []subagents.Subagent{{Name: "echo", Description: "echoes", Runnable: echoRunnable{&seen}, Mode: subagents.Fork}},
	}, privateValue{})
	_, err := a.Invoke(context.Background(), agent.Input{
		Messages: []llm.Message{llm.UserText("secret plan: fly")},
		Values:   map[string]json.RawMessage{"mine": json.RawMessage(`1`), "shared": json.RawMessage(`2`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen.Messages) != 2 || seen.Messages[0].Text() != "secret plan: fly" || seen.Messages[1].Text() != "repeat" {
		t.Errorf("compiled fork got %v", seen.Messages)
	}
	if _, ok := seen.Values["mine"]; ok {
		t.Error("a private value reached the forked subagent")
	}
	if _, ok := seen.Values["shared"]; !ok {
		t.Error("a shared value did not reach the forked subagent")
	}
}

// privateValue keeps the value "mine" to its agent.
type privateValue struct{}

func (privateValue) Name() string            { return "private_value" }
func (privateValue) PrivateValues() []string { return []string{"mine"} }

// TestForkedSubagentApprovalResumes: a forked subagent that stops for
// approval resumes from its own checkpointed thread: the decision goes to
// it, and it does not get the conversation a second time.
func TestForkedSubagentApprovalResumes(t *testing.T) {
	ctx := context.Background()
	saver := checkpoint.NewMemorySaver()
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{taskCall("t", "careful", "write it down")}},
		replay.Turn{Agent: "careful", ToolCalls: []llm.ToolCall{{ID: "n", Name: "note", Args: json.RawMessage(`{"path":"/a.md","content":"blue"}`)}},
			Expect: &replay.Expect{MessagesContain: []string{"favourite colour is blue"}}},
		replay.Turn{Agent: "careful", Content: "written", Expect: &replay.Expect{LastMessageContains: []string{"noted"}}},
		replay.Turn{Content: "ok", Expect: &replay.Expect{LastMessageContains: []string{"written"}}},
	).Record()
	subs, err := subagents.New(subagents.Config{
		Parent: subagents.Parent{Agent: agent.Config{Model: m, Tools: []tool.Tool{noteTool()}, Checkpointer: saver}}, NoGeneralPurpose: true,
		Subagents: []subagents.Subagent{{Name: "careful", Description: "asks first", Mode: subagents.Fork, InterruptOn: map[string]hitl.InterruptOn{"note": {}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Model: m, Checkpointer: saver, Middleware: []agent.Middleware{subs}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(ctx, agent.Input{ThreadID: "main", Messages: []llm.Message{llm.UserText("my favourite colour is blue")}})
	if err != nil || res.Status != agent.StatusInterrupted {
		t.Fatalf("%v %+v", err, res)
	}
	if ns := res.Interrupts[0].Namespace; len(ns) != 1 || ns[0] != "careful:t" {
		t.Errorf("namespace %v", ns)
	}
	res, err = a.Resume(ctx, "main", []agent.Decision{{Type: agent.DecisionApprove}})
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("%v %+v", err, res)
	}
	if d, ok := res.State.Files.Get("/a.md"); !ok || d.Content != "blue" {
		t.Errorf("approved note: %+v", d)
	}
	snap, err := saver.Load(ctx, "main/t", "")
	if err != nil {
		t.Fatal(err)
	}
	var users int
	for _, msg := range snap.Messages {
		if msg.Role == llm.RoleUser {
			users++
		}
	}
	if users != 2 { // the copied one and the task
		t.Errorf("the subagent's thread has %d user messages, want 2", users)
	}
}

func TestSubagentModeValidationAndDescription(t *testing.T) {
	_, err := subagents.New(subagents.Config{NoGeneralPurpose: true, Subagents: []subagents.Subagent{{Name: "x", Mode: "clone", Runnable: echoRunnable{}}}})
	if !errors.Is(err, subagents.ErrMode) || !strings.Contains(err.Error(), `"clone"`) {
		t.Errorf("unknown mode: %v", err)
	}
	iso, err := subagents.New(subagents.Config{Parent: subagents.Parent{Agent: agent.Config{Model: replay.New()}}})
	if err != nil {
		t.Fatal(err)
	}
	if d := iso.Tools()[0].Spec().Description; strings.Contains(d, "forked") || !strings.Contains(d, "sees nothing else of this conversation") {
		t.Errorf("description without forks: %s", d)
	}
	if strings.Contains(iso.SystemPrompt(), "forked") {
		t.Errorf("prompt without forks mentions them: %s", iso.SystemPrompt())
	}
	fork, err := subagents.New(subagents.Config{Parent: subagents.Parent{Agent: agent.Config{Model: replay.New()}},
		Subagents: []subagents.Subagent{{Name: "twin", Description: "continues your work", Mode: subagents.Fork}}})
	if err != nil {
		t.Fatal(err)
	}
	d := fork.Tools()[0].Spec().Description
	if !strings.Contains(d, "- twin (forked): continues your work") || !strings.Contains(d, "- general-purpose: ") || !strings.Contains(d, "copy of this conversation") {
		t.Errorf("description with a fork: %s", d)
	}
	if !strings.Contains(fork.SystemPrompt(), `marked "forked"`) {
		t.Errorf("prompt with a fork: %s", fork.SystemPrompt())
	}
}
