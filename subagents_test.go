package deepagents_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/sqlite"
)

// subagentProcess is one "process" of TestSubagentApprovalSurvivesTheProcess:
// a database opened on the file and a deep agent built on it, as a program
// starting afresh builds them.
func subagentProcess(t *testing.T, path string, m llm.Model, ask bool) (*deepagents.Agent, func()) {
	t.Helper()
	var on map[string]deepagents.InterruptOn
	if ask {
		on = map[string]deepagents.InterruptOn{"write_file": {}}
	}
	db, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := deepagents.New(deepagents.Config{
		Model:        m,
		Checkpointer: db.Saver(),
		Subagents: []deepagents.Subagent{
			{Name: "careful", Description: "writes files, with approval", InterruptOn: on},
			{Name: "quick", Description: "answers at once"},
		},
	})
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	return a, func() { db.Close() }
}

// TestSubagentApprovalSurvivesTheProcess: a subagent's gated call stops
// the whole run; the interrupt names the subagent; the first "process"
// (its database and agent) goes away; a second one, on the same database
// file, resumes, and the decision is carried out inside the subagent, which
// then finishes its work, while its sibling's answer, given before the
// stop, is kept. The decision binds even when the second process's
// subagent no longer asks for approval.
func TestSubagentApprovalSurvivesTheProcess(t *testing.T) {
	tests := []struct {
		name     string
		decision deepagents.Decision
		sees     string // in the subagent's request after the decision
		file     string // the file's content afterwards; "" for none
		askAfter bool   // the second process's subagent asks for approval too
	}{
		{"approve", deepagents.Decision{Type: deepagents.DecisionApprove}, "Updated file /plan.md", "step 1", true},
		{"edit", deepagents.Decision{Type: deepagents.DecisionEdit, Args: json.RawMessage(`{"file_path":"/plan.md","content":"step 0"}`)}, "Updated file /plan.md", "step 0", true},
		{"reject", deepagents.Decision{Type: deepagents.DecisionReject, Message: "no plans today"}, "no plans today", "", true},
		{"reject, approvals since turned off", deepagents.Decision{Type: deepagents.DecisionReject, Message: "no plans today"}, "no plans today", "", false},
		{"edit, approvals since turned off", deepagents.Decision{Type: deepagents.DecisionEdit, Args: json.RawMessage(`{"file_path":"/plan.md","content":"step 0"}`)}, "Updated file /plan.md", "step 0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "threads.db")

			first := replay.New(
				replay.Turn{ToolCalls: []llm.ToolCall{
					call("t1", "task", `{"description":"write the plan","subagent_type":"careful"}`),
					call("t2", "task", `{"description":"say hi","subagent_type":"quick"}`),
				}},
				replay.Turn{Agent: "careful", ToolCalls: []llm.ToolCall{call("w", "write_file", `{"file_path":"/plan.md","content":"step 1"}`)}},
				replay.Turn{Agent: "quick", Content: "hi from quick"},
			)
			a, closeDB := subagentProcess(t, path, first, true)
			in := deepagents.Prompt("plan and greet")
			in.ThreadID = "th"
			res, err := a.Invoke(ctx, in)
			closeDB()
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != deepagents.StatusInterrupted || len(res.Interrupts) != 1 {
				t.Fatalf("first run: %s %+v", res.Status, res.Interrupts)
			}
			req := res.Interrupts[0]
			if req.Tool != "write_file" || strings.Join(req.Namespace, "/") != "careful:t1" {
				t.Errorf("the interrupt does not name the subagent: %+v", req)
			}

			// A new process: what it plays starts after the decision.
			second := replay.New(
				replay.Turn{Agent: "careful", Content: "plan handled", Expect: &replay.Expect{
					LastMessageContains: []string{tt.sees}, MessagesContain: []string{"write the plan"},
				}},
				replay.Turn{Content: "all done", Expect: &replay.Expect{MessagesContain: []string{"hi from quick", "plan handled"}}},
			)
			a, closeDB = subagentProcess(t, path, second, tt.askAfter)
			defer closeDB()
			var mu sync.Mutex
			var inside []string // the subagent's events on resume
			var end deepagents.Event
			for e, err := range a.Stream(ctx, deepagents.Input{ThreadID: "th", Decisions: []deepagents.Decision{tt.decision}}) {
				if err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				if strings.Join(e.Namespace, "/") == "careful:t1" {
					inside = append(inside, string(e.Type))
				}
				mu.Unlock()
				if e.Type == deepagents.EventRunEnd && len(e.Namespace) == 0 {
					end = e
				}
			}
			if end.Status != deepagents.StatusCompleted {
				t.Fatalf("resumed run: %+v", end)
			}
			if !strings.Contains(strings.Join(inside, " "), "tool_result") || inside[len(inside)-1] != "run_end" {
				t.Errorf("the resume did not continue inside the subagent: its events %v", inside)
			}
			if second.Remaining() != 0 {
				t.Errorf("%d turns unplayed", second.Remaining())
			}
			saver := a.Checkpointer()
			snap, err := saver.Load(ctx, "th", "")
			if err != nil {
				t.Fatal(err)
			}
			got, ok := snap.Files["/plan.md"]
			switch {
			case tt.file == "" && ok:
				t.Errorf("a rejected write happened: %q", got.Content)
			case tt.file != "" && got.Content != tt.file:
				t.Errorf("/plan.md = %q, want %q", got.Content, tt.file)
			}
			for _, id := range []string{"th", "th/t1"} {
				th, err := saver.Thread(ctx, id)
				if err != nil || th.Status != checkpoint.StatusIdle {
					t.Errorf("thread %s: %+v, %v; want idle", id, th, err)
				}
			}
		})
	}
}

// TestSubagentApprovalWithoutACheckpointer: when only a subagent asks for
// approval, the deep agent still keeps its threads (in memory) so that the
// run can stop and resume.
func TestSubagentApprovalWithoutACheckpointer(t *testing.T) {
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{call("t", "task", `{"description":"write","subagent_type":"careful"}`)}},
		replay.Turn{Agent: "careful", ToolCalls: []llm.ToolCall{call("w", "write_file", `{"file_path":"/a","content":"a"}`)}},
		replay.Turn{Agent: "careful", Content: "written"},
		replay.Turn{Content: "done"},
	)
	a, err := deepagents.New(deepagents.Config{Model: m, Subagents: []deepagents.Subagent{
		{Name: "careful", Description: "asks", InterruptOn: map[string]deepagents.InterruptOn{"write_file": {}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in := deepagents.Prompt("go")
	in.ThreadID = "th"
	res, err := a.Invoke(ctx, in)
	if err != nil || res.Status != deepagents.StatusInterrupted {
		t.Fatalf("%v %+v", err, res)
	}
	res, err = a.Resume(ctx, "th", []deepagents.Decision{{Type: deepagents.DecisionApprove}})
	if err != nil || res.Text() != "done" {
		t.Fatalf("%v %+v", err, res)
	}
}

// TestForkedContextIsSummarized: a forked subagent's copy of a long
// conversation is bounded by its own summarization, as any long
// conversation is: its first request holds a summary instead of what did
// not fit its (smaller) context window, and the caller's conversation is
// left as it was.
func TestForkedContextIsSummarized(t *testing.T) {
	filler := strings.Repeat("background detail ", 400) // about 1,800 tokens
	parent := replay.New(
		replay.Turn{Content: "noted"},
		replay.Turn{ToolCalls: []llm.ToolCall{call("f", "task", `{"description":"finish the job","subagent_type":"twin"}`)}},
		replay.Turn{Content: "done", Expect: &replay.Expect{LastMessageContains: []string{"finished"}}},
	)
	small := replay.NewFromScript(&replay.Script{
		ContextWindow: 1000,
		Turns: []replay.Turn{{Agent: "twin", Content: "finished", Expect: &replay.Expect{
			MessagesContain: []string{"SUMMARY OF THE START"}, MessagesExclude: []string{"background detail"},
			LastMessageContains: []string{"finish the job"},
		}}},
		Defaults: map[string]replay.Turn{"summarizer": {Content: "SUMMARY OF THE START"}},
	})
	a, err := deepagents.New(deepagents.Config{Model: parent, Subagents: []deepagents.Subagent{
		{Name: "twin", Description: "carries on", Model: small, Mode: deepagents.SubagentFork},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := a.Invoke(ctx, deepagents.Prompt("context: "+filler))
	if err != nil {
		t.Fatal(err)
	}
	res, err = a.Invoke(ctx, deepagents.Input{State: res.State, Messages: []llm.Message{llm.UserText("now delegate")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "done" || small.Remaining() != 0 {
		t.Fatalf("%q, %d subagent turns unplayed", res.Text(), small.Remaining())
	}
	if !strings.Contains(res.State.Messages[0].Text(), filler) {
		t.Error("the caller's conversation was summarized")
	}
}
