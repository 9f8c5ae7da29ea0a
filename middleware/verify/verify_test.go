package verify_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/todos"
	"github.com/deepagents-go/deepagents/middleware/verify"
	"github.com/deepagents-go/deepagents/tool"
)

var (
	edit = tool.Must(tool.New("edit", "edits", func(context.Context, struct{}) (string, error) { return "edited", nil },
		tool.WithTraits(tool.Traits{EditsFiles: true})))
	run = tool.Must(tool.New("run", "runs", func(context.Context, struct{}) (string, error) { return "ok", nil },
		tool.WithTraits(tool.Traits{RunsCommands: true})))
)

func call(id, name, args string) replay.Turn {
	return replay.Turn{ToolCalls: []llm.ToolCall{{ID: id, Name: name, Args: json.RawMessage(args)}}}
}

// passes runs the turns and returns the verification messages the run got
// and its last answer.
func passes(t *testing.T, cfg verify.Config, tools []tool.Tool, turns ...replay.Turn) ([]string, string) {
	t.Helper()
	plan, err := todos.New(todos.Config{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Model: replay.New(turns...), Tools: tools, Middleware: []agent.Middleware{plan, verify.New(cfg)}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(context.Background(), agent.Prompt("do the task"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range res.State.Messages {
		if m.Role == llm.RoleUser && strings.HasPrefix(m.Text(), "Before you finish") {
			got = append(got, m.Text())
		}
	}
	return got, res.LastMessage().Text()
}

const openPlan = `{"todos":[{"content":"write the code","status":"completed"},{"content":"run the tests","status":"pending"}]}`

// A premature answer with open todos gets one verification turn, then the
// answer stands.
func TestOpenTodos(t *testing.T) {
	got, last := passes(t, verify.Config{}, nil,
		call("p", "write_todos", openPlan),
		replay.Turn{Content: "done"},
		replay.Turn{Content: "The tests are left: there is no way to run them here."})
	if len(got) != 1 || !strings.Contains(got[0], `Your plan still has open items: "run the tests" (pending)`) || strings.Contains(got[0], "write the code") {
		t.Fatalf("passes %q", got)
	}
	if last != "The tests are left: there is no way to run them here." {
		t.Errorf("last answer %q", last)
	}
}

func TestEditsWithoutACheck(t *testing.T) {
	tools := []tool.Tool{edit, run}
	for _, tt := range []struct {
		name  string
		tools []tool.Tool
		turns []replay.Turn
		want  int
	}{
		{"an edit, then the answer", tools, []replay.Turn{call("e", "edit", `{}`), {Content: "done"}, {Content: "checked"}}, 1},
		{"an edit, a command, the answer", tools, []replay.Turn{call("e", "edit", `{}`), call("r", "run", `{}`), {Content: "done"}}, 0},
		{"a command, an edit, the answer", tools, []replay.Turn{call("r", "run", `{}`), call("e", "edit", `{}`), {Content: "done"}, {Content: "checked"}}, 1},
		{"no tool to check with", []tool.Tool{edit}, []replay.Turn{call("e", "edit", `{}`), {Content: "done"}}, 0},
		{"nothing done", tools, []replay.Turn{{Content: "done"}}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := passes(t, verify.Config{}, tt.tools, tt.turns...)
			if len(got) != tt.want {
				t.Fatalf("%d passes, want %d: %q", len(got), tt.want, got)
			}
			if tt.want > 0 && !strings.Contains(got[0], "You changed files and have run no command since") {
				t.Errorf("pass %q", got[0])
			}
		})
	}
}

// A plan left open by an earlier run of the thread is not this answer's.
func TestOldPlan(t *testing.T) {
	plan, err := todos.New(todos.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m := replay.New(call("p", "write_todos", openPlan), replay.Turn{Content: "first"}, replay.Turn{Content: "checked"},
		replay.Turn{Content: "an answer to another question"})
	a, err := agent.New(agent.Config{Model: m, Checkpointer: checkpoint.NewMemorySaver(), Middleware: []agent.Middleware{plan, verify.New(verify.Config{})}})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"checked", "an answer to another question"} {
		res, err := a.Invoke(context.Background(), agent.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText(fmt.Sprint("prompt ", i))}})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.LastMessage().Text(); got != want {
			t.Errorf("run %d answered %q, want %q", i, got, want)
		}
	}
}

// Passes bounds the turns; a negative one turns the pass off.
func TestPasses(t *testing.T) {
	turns := []replay.Turn{call("p", "write_todos", openPlan), {Content: "done"}, {Content: "still done"}, {Content: "really done"}}
	if got, last := passes(t, verify.Config{Passes: 2}, nil, turns...); len(got) != 2 || last != "really done" {
		t.Errorf("two passes: %d, %q", len(got), last)
	}
	if got, last := passes(t, verify.Config{Passes: -1}, nil, turns[:2]...); len(got) != 0 || last != "done" {
		t.Errorf("off: %d, %q", len(got), last)
	}
}

// With a rubric, the grader grades the answer: a FAIL sends the agent back
// with its reasons, the next answer is graded again, and each grade is a
// notice event.
func TestRubric(t *testing.T) {
	m := replay.New(
		replay.Turn{Content: "Here is the summary."},
		replay.Turn{Agent: verify.GraderAgent, Content: "FAIL\nIt does not name the files changed.",
			Expect: &replay.Expect{SystemContains: []string{"You grade the final answer"},
				LastMessageContains: []string{"<request>\ndo the task\n</request>", "<rubric>\nName every file changed.\n</rubric>", "<answer>\nHere is the summary.\n</answer>"}}},
		replay.Turn{Content: "Changed a.go and b.go.", Expect: &replay.Expect{LastMessageContains: []string{"It does not name the files changed."}}},
		replay.Turn{Agent: verify.GraderAgent, Content: "PASS"},
	)
	a, err := agent.New(agent.Config{Model: m, Middleware: []agent.Middleware{verify.New(verify.Config{Passes: 2, Rubric: "Name every file changed."})}})
	if err != nil {
		t.Fatal(err)
	}
	var grades []string
	var last string
	for e, err := range a.Stream(context.Background(), agent.Prompt("do the task")) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Type == agent.EventNotice && e.Name == verify.GradeNotice {
			grades = append(grades, strings.SplitN(e.Content, "\n", 2)[0])
		}
		if e.Type == agent.EventMessage && e.Message != nil && e.Message.Role == llm.RoleAssistant {
			last = e.Message.Text()
		}
	}
	if strings.Join(grades, ",") != "FAIL,PASS" || last != "Changed a.go and b.go." {
		t.Errorf("grades %q, last answer %q", grades, last)
	}
}

// A grader that cannot be asked passes the answer, and says so.
func TestRubricGraderFails(t *testing.T) {
	m := replay.New(replay.Turn{Content: "done"}, replay.Turn{Agent: verify.GraderAgent, Error: "overloaded"})
	a, err := agent.New(agent.Config{Model: m, Middleware: []agent.Middleware{verify.New(verify.Config{Rubric: "r"})}})
	if err != nil {
		t.Fatal(err)
	}
	var notice string
	for e, err := range a.Stream(context.Background(), agent.Prompt("go")) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Type == agent.EventNotice && e.Name == verify.GradeNotice {
			notice = e.Content
		}
	}
	if !strings.Contains(notice, "the answer was not graded") {
		t.Errorf("notice %q", notice)
	}
}

// A thread's goal is graded as a rubric is, in every run of the thread
// until it is removed; with GoalOnly, nothing else is checked, and without
// a goal the grader is never asked.
func TestGoal(t *testing.T) {
	graded := func(rubric string) *replay.Expect {
		return &replay.Expect{LastMessageContains: []string{"<rubric>\n" + rubric + "\n</rubric>"}}
	}
	m := replay.New(
		// The first run: a plan left open is not GoalOnly's business; the
		// goal fails, then passes.
		call("p", "write_todos", openPlan),
		replay.Turn{Content: "done"},
		replay.Turn{Agent: verify.GraderAgent, Content: "FAIL\nThe README is not updated.", Expect: graded("The README says how to run it.")},
		replay.Turn{Content: "Updated the README.", Expect: &replay.Expect{LastMessageContains: []string{"The README is not updated."}}},
		replay.Turn{Agent: verify.GraderAgent, Content: "PASS", Expect: graded("The README says how to run it.")},
		// The second run keeps the thread's goal.
		replay.Turn{Content: "again", Expect: &replay.Expect{LastMessageContains: []string{"once more"}}},
		replay.Turn{Agent: verify.GraderAgent, Content: "PASS", Expect: graded("The README says how to run it.")},
		// The third removes it: no grader.
		replay.Turn{Content: "no goal"},
	)
	plan, _ := todos.New(todos.Config{})
	a, err := agent.New(agent.Config{Model: m, Checkpointer: checkpoint.NewMemorySaver(),
		Middleware: []agent.Middleware{plan, verify.New(verify.Config{GoalOnly: true, Passes: 2, Rubric: "ignored"})}})
	if err != nil {
		t.Fatal(err)
	}
	in := agent.Prompt("do the task")
	in.ThreadID, in.Values = "t", verify.GoalValues("  The README says how to run it.\n")
	for i, in := range []agent.Input{in, {ThreadID: "t", Messages: []llm.Message{llm.UserText("once more")}},
		{ThreadID: "t", Messages: []llm.Message{llm.UserText("and")}, Values: verify.GoalValues("")}} {
		// (A grader asked more often than scripted passes the answer, with
		// a notice: the grades are counted.)
		grades := 0
		in.Events = func(e agent.Event) {
			if e.Type == agent.EventNotice && e.Name == verify.GradeNotice {
				grades++
			}
		}
		res, err := a.Invoke(context.Background(), in)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		want := []string{"Updated the README.", "again", "no goal"}[i]
		if got := res.LastMessage().Text(); got != want {
			t.Errorf("run %d answered %q, want %q", i, got, want)
		}
		if want := []int{2, 1, 0}[i]; grades != want {
			t.Errorf("run %d: %d grades, want %d", i, grades, want)
		}
		if i == 0 && verify.GoalOf(res.State.Values) != "The README says how to run it." {
			t.Errorf("the state's goal: %q", verify.GoalOf(res.State.Values))
		}
	}
	if n := m.Remaining(); n != 0 {
		t.Errorf("%d scripted turns never asked for", n)
	}
}

// With the pass on and a rubric, the goal is added to the rubric.
func TestGoalAndRubric(t *testing.T) {
	m := replay.New(replay.Turn{Content: "done"},
		replay.Turn{Agent: verify.GraderAgent, Content: "PASS", Expect: &replay.Expect{LastMessageContains: []string{"<rubric>\nName the files.\n\nTests pass.\n</rubric>"}}})
	a, err := agent.New(agent.Config{Model: m, Middleware: []agent.Middleware{verify.New(verify.Config{Rubric: "Name the files."})}})
	if err != nil {
		t.Fatal(err)
	}
	in := agent.Prompt("go")
	in.Values = verify.GoalValues("Tests pass.")
	if _, err := a.Invoke(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if n := m.Remaining(); n != 0 {
		t.Errorf("%d scripted turns never asked for", n)
	}
}

// A goal that is not a string, or is too long, fails the run before the
// model is asked; CheckGoal says so to those who take goals from clients.
func TestGoalNotAString(t *testing.T) {
	a, err := agent.New(agent.Config{Model: replay.New(), Middleware: []agent.Middleware{verify.New(verify.Config{GoalOnly: true})}})
	if err != nil {
		t.Fatal(err)
	}
	long, _ := json.Marshal(strings.Repeat("é", verify.MaxGoalBytes/2+1))
	for _, tc := range []struct{ raw, want string }{
		{`{"x":1}`, "it is an object"},
		{`5`, "it is a number"},
		{`["a"]`, "it is a list"},
		{string(long), "it has 16386 bytes"},
	} {
		in := agent.Prompt("go")
		in.Values = map[string]json.RawMessage{verify.GoalValue: json.RawMessage(tc.raw)}
		if _, err := a.Invoke(context.Background(), in); !errors.Is(err, verify.ErrGoal) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.20s: err = %v, want ErrGoal saying %q", tc.raw, err, tc.want)
		}
		if err := verify.CheckGoal(json.RawMessage(tc.raw)); !errors.Is(err, verify.ErrGoal) {
			t.Errorf("CheckGoal(%.20s) = %v", tc.raw, err)
		}
	}
	for _, ok := range []string{`"a goal"`, `null`, ``, `""`} {
		if err := verify.CheckGoal(json.RawMessage(ok)); err != nil {
			t.Errorf("CheckGoal(%s) = %v", ok, err)
		}
	}
}
