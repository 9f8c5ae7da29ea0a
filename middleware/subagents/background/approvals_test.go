package background_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/middleware/subagents"
	"github.com/deepagents-go/deepagents/middleware/subagents/background"
	"github.com/deepagents-go/deepagents/sqlite"
	"github.com/deepagents-go/deepagents/tool"
)

// writerModel is a model whose background subagent "writer" asks to write
// /w.md, then reports the result of that call; the main agent follows the
// steps added to it.
func writerModel() *stepModel {
	return &stepModel{subs: map[string]func(context.Context, *llm.Request) (llm.Message, error){
		"writer": func(_ context.Context, req *llm.Request) (llm.Message, error) {
			if res := toolResults(req); len(res) > 0 {
				return llm.AssistantText("writer says: " + res[0]), nil
			}
			return calls("note", map[string]string{"path": "/w.md", "content": "words"}), nil
		},
	}}
}

// asyncWriter builds a main agent whose background subagent writer asks
// before note, over saver, with ids task-1, task-2, ...
func asyncWriter(t *testing.T, m llm.Model, saver checkpoint.Saver, opts background.Options) (*agent.Agent, *background.Middleware) {
	t.Helper()
	n := 0
	opts.NewTaskID = func() string { n++; return "task-" + string(rune('0'+n)) }
	as, err := background.New(background.Config{
		Parent: subagents.Parent{Agent: agent.Config{Model: m, Checkpointer: saver, Tools: []tool.Tool{noteTool()}}},
		Subagents: []background.Subagent{{Subagent: subagents.Subagent{Name: "writer", Description: "writes", SystemPrompt: "You write.",
			InterruptOn: map[string]hitl.InterruptOn{"note": {}}}}},
		Options: opts,
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Model: m, Checkpointer: saver, Middleware: []agent.Middleware{as}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, as
}

// startWriter plays the main agent's first run: it starts the writer and
// ends its turn.
func startWriter(t *testing.T, a *agent.Agent, m *stepModel) {
	t.Helper()
	m.add(
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "writer", "description": "write the words"})),
		step(llm.AssistantText("started")),
	)
	res, err := a.Invoke(context.Background(), agent.Input{ThreadID: "t1", Messages: []llm.Message{llm.UserText("go")}})
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("first run: %v %+v", err, res)
	}
}

// collect plays a run in which the main agent waits for task-1, and
// returns the report.
func collect(t *testing.T, a *agent.Agent, m *stepModel, tool string) (taskReport, *agent.Result) {
	t.Helper()
	var r taskReport
	m.add(
		step(calls(tool, map[string]any{"task_id": "task-1"})),
		func(req *llm.Request) llm.Message {
			r = parseReport(t, toolResults(req)[0])
			return llm.AssistantText("ok")
		},
	)
	res, err := a.Invoke(context.Background(), agent.Input{ThreadID: "t1", Messages: []llm.Message{llm.UserText("is it done?")}})
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("collecting run: %v %+v", err, res)
	}
	return r, res
}

// A background task that reaches an approval parks: the driver hears of
// it (Watch) and lists it (Approvals), naming the subagent and its task;
// the model reads awaiting_approval; an answer resumes the subagent, whose
// model reads the decision, and the thread's next wait collects the
// result.
func TestAsyncApprovalAnswered(t *testing.T) {
	for _, tc := range []struct {
		name     string
		decision agent.Decision
		want     string
		written  bool
	}{
		{"approve", agent.Decision{Type: agent.DecisionApprove}, "writer says: noted", true},
		{"reject", agent.Decision{Type: agent.DecisionReject, Message: "not now"}, "writer says: " + agent.RejectedToolCall + ": not now", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noLeaks(t)
			m := writerModel()
			a, as := asyncWriter(t, m, checkpoint.NewMemorySaver(), background.Options{})
			heard := make(chan background.Approval, 4)
			stop := as.Watch(func(ap background.Approval) { heard <- ap })
			defer stop()
			startWriter(t, a, m)
			ap := received(t, heard, "the approval")
			if ap.Status != background.AwaitingApproval || ap.ThreadID != "t1" || ap.TaskID != "task-1" || ap.Subagent != "writer" ||
				ap.Task != "write the words" || ap.Tools() != "note" || ap.SubagentThread != "t1/task-1" {
				t.Errorf("approval = %+v", ap)
			}
			if ns := ap.Requests[0].Namespace; len(ns) != 1 || !strings.HasPrefix(ns[0], "writer:") {
				t.Errorf("namespace = %v", ns)
			}
			list, err := as.Approvals(context.Background(), "t1")
			if err != nil || len(list) != 1 || list[0].TaskID != "task-1" {
				t.Fatalf("approvals = %+v, %v", list, err)
			}
			if other, err := as.Approvals(context.Background(), "t2"); err != nil || len(other) != 0 {
				t.Errorf("another thread's approvals = %+v, %v", other, err)
			}
			if r, _ := collect(t, a, m, background.CheckAsyncTaskTool); r.Status != background.AwaitingApproval || !strings.Contains(r.Note, "approve note") {
				t.Errorf("check while it waits = %+v", r)
			}
			// Wrong answers fail at once and change nothing.
			for _, bad := range [][]agent.Decision{nil, {{Type: "maybe"}}, {{Type: agent.DecisionApprove}, {Type: agent.DecisionApprove}}} {
				if err := as.Answer(context.Background(), "t1", "task-1", bad); err == nil {
					t.Errorf("answer %+v accepted", bad)
				}
			}
			if err := as.Answer(context.Background(), "t2", "task-1", []agent.Decision{tc.decision}); !errors.Is(err, background.ErrNotWaiting) {
				t.Errorf("answer on another thread: %v", err)
			}
			if err := as.Answer(context.Background(), "t1", "task-1", []agent.Decision{tc.decision}); err != nil {
				t.Fatal(err)
			}
			if ap := received(t, heard, "the answer"); ap.Status != background.Running || ap.TaskID != "task-1" {
				t.Errorf("after the answer, heard %+v", ap)
			}
			if err := as.Answer(context.Background(), "t1", "task-1", []agent.Decision{tc.decision}); !errors.Is(err, background.ErrNotWaiting) {
				t.Errorf("a second answer: %v", err)
			}
			r, res := collect(t, a, m, background.WaitAsyncTaskTool)
			if r.Status != background.Success || r.Result != tc.want {
				t.Errorf("wait = %+v", r)
			}
			if _, ok := res.State.Files.Get("/w.md"); ok != tc.written {
				t.Errorf("/w.md written: %v", ok)
			}
			if list, _ := as.Approvals(context.Background(), "t1"); len(list) != 0 {
				t.Errorf("approvals after the answer = %+v", list)
			}
		})
	}
}

// A task that parked before the model's first wait is reported at once:
// the model has not heard of it, and a wait through it would only end at
// the wait's timeout.
func TestAsyncWaitReportsAParkNotYetHeardOf(t *testing.T) {
	noLeaks(t)
	m := writerModel()
	a, as := asyncWriter(t, m, checkpoint.NewMemorySaver(), background.Options{MaxWait: 3 * time.Second})
	heard := make(chan background.Approval, 4)
	stop := as.Watch(func(ap background.Approval) { heard <- ap })
	defer stop()
	startWriter(t, a, m)
	received(t, heard, "the approval")
	r, _ := collect(t, a, m, background.WaitAsyncTaskTool)
	if r.Status != background.AwaitingApproval || strings.Contains(r.Note, "still waiting after") {
		t.Errorf("the first wait = %+v, want awaiting_approval at once", r)
	}
}

// With ApprovalWait, a request nobody answers is denied: the model reads
// status denied and why, and the task no longer waits.
func TestAsyncApprovalDeniedUnanswered(t *testing.T) {
	noLeaks(t)
	m := writerModel()
	a, as := asyncWriter(t, m, checkpoint.NewMemorySaver(), background.Options{ApprovalWait: 1})
	heard := make(chan background.Approval, 4)
	defer as.Watch(func(ap background.Approval) { heard <- ap })()
	startWriter(t, a, m)
	if ap := received(t, heard, "the approval"); ap.Status != background.AwaitingApproval {
		t.Errorf("first heard %+v", ap)
	}
	if ap := received(t, heard, "the denial"); ap.Status != background.Denied || ap.TaskID != "task-1" {
		t.Errorf("then heard %+v", ap)
	}
	r, res := collect(t, a, m, background.WaitAsyncTaskTool)
	if r.Status != background.Denied || !strings.Contains(r.Error, "nobody answered") || !strings.Contains(r.Error, "note") {
		t.Errorf("wait = %+v", r)
	}
	if err := as.Answer(context.Background(), "t1", "task-1", []agent.Decision{{Type: agent.DecisionApprove}}); !errors.Is(err, background.ErrNotWaiting) {
		t.Errorf("answer after the denial: %v", err)
	}
	if recs, _ := background.Tasks(res.State.Values); recs["task-1"].Status != background.Denied {
		t.Errorf("record = %+v", recs["task-1"])
	}
	if _, ok := res.State.Files.Get("/w.md"); ok {
		t.Error("the denied note was written")
	}
}

// A task waiting for approval outlives its process: the database closed
// under it (as kill -9 leaves it), a new agent on the reopened database
// lists the approval, the model reads awaiting_approval rather than lost,
// and the answer resumes the subagent, whose result the parent collects.
func TestAsyncApprovalSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "threads.db")
	ctx := context.Background()
	open := func() *sqlite.DB {
		db, err := sqlite.Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open()
	m := writerModel()
	a, as := asyncWriter(t, m, db.Saver(), background.Options{})
	heard := make(chan background.Approval, 4)
	as.Watch(func(ap background.Approval) { heard <- ap })
	startWriter(t, a, m)
	received(t, heard, "the approval")
	// The process ends without a word: nothing is shut down or recorded.
	db.Close()

	db = open()
	defer db.Close()
	m2 := writerModel()
	a2, as2 := asyncWriter(t, m2, db.Saver(), background.Options{})
	list, err := as2.Approvals(ctx, "t1")
	if err != nil || len(list) != 1 {
		t.Fatalf("approvals after the restart = %+v, %v", list, err)
	}
	if ap := list[0]; ap.TaskID != "task-1" || ap.Subagent != "writer" || ap.Task != "write the words" || ap.Tools() != "note" {
		t.Errorf("approval = %+v", ap)
	}
	if r, _ := collect(t, a2, m2, background.CheckAsyncTaskTool); r.Status != background.AwaitingApproval {
		t.Errorf("check after the restart = %+v", r)
	}
	if err := as2.Answer(ctx, "t1", "task-1", []agent.Decision{{Type: agent.DecisionApprove}}); err != nil {
		t.Fatal(err)
	}
	r, res := collect(t, a2, m2, background.WaitAsyncTaskTool)
	if r.Status != background.Success || r.Result != "writer says: noted" {
		t.Errorf("wait = %+v", r)
	}
	if f, ok := res.State.Files.Get("/w.md"); !ok || f.Content != "words" {
		t.Errorf("/w.md = %+v, %v", f, ok)
	}
	if list, _ := as2.Approvals(ctx, "t1"); len(list) != 0 {
		t.Errorf("approvals after the answer = %+v", list)
	}
}
