// Package verify sends the agent back, once, when it answers before its
// work is checked: its plan (the write_todos list) still has open items,
// or it changed files and has run no command since (no build, no test).
//
// The pass is a user message that says what is open and asks the model to
// check its work against the request, run the project's check if it has
// one, close or justify the open items, and then answer. With a rubric, a
// grader (the agent's model, in a call of its own) grades the answer
// against it once nothing else is open, and a FAIL sends the agent back
// with its reasons; each grade is a notice event. It is bounded
// (Passes, one by default), made for the main agent only (a subagent's
// report goes to its caller, which checks), and skipped in plan mode (the
// plan's items are for after its approval) and when the run was asked to
// end (a budget spent, the loop guard): those runs end as they are.
//
// A thread may have a goal of its own, which its user sets (the terminal's
// /goal, a LangGraph client's input): the state value GoalValue. It is
// graded as a rubric is, before each final answer of the thread's runs,
// added to Config.Rubric when both are set. With GoalOnly the middleware
// does nothing else: it is how the default stack grades goals while the
// pass is off.
package verify

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/middleware/todos"
	"github.com/deepagents-go/deepagents/tool"
)

// DefaultPasses is how many verification turns a run gets by default.
const DefaultPasses = 1

// Config sets the pass.
type Config struct {
	// Passes is how many times a run is sent back; DefaultPasses when 0,
	// none when negative.
	Passes int
	// Rubric, when set, has every final answer of the main agent graded
	// against it by a grader (the agent's model, in a call of its own
	// with no tools and nothing of the conversation but the request and
	// the answer): a grade of FAIL sends the agent back with the grader's
	// reasons, within Passes. Each grade is an event (a notice named
	// GradeNotice).
	Rubric string
	// GoalOnly turns the checks off (open todos, edits with no command
	// since) and the Rubric: only a thread's goal (GoalValue), when it has
	// one, is graded.
	GoalOnly bool
}

// GoalValue is the state value holding a thread's goal, as a JSON string:
// what the user says the task must achieve, graded before each final
// answer of the thread's runs. Only the program sets it, with
// agent.Input.Values (GoalValues), when its user does; no tool writes it.
const GoalValue = "goal"

// GoalValues returns the input values that set a thread's goal to goal;
// "" removes it.
func GoalValues(goal string) map[string]json.RawMessage {
	raw, _ := json.Marshal(strings.TrimSpace(goal))
	return map[string]json.RawMessage{GoalValue: raw}
}

// GoalOf returns the goal the state values hold, "" for none.
func GoalOf(values map[string]json.RawMessage) string {
	g, _ := goalOf(values[GoalValue])
	return g
}

// ErrGoal is the error of a run whose thread's goal is not a string, or
// is longer than MaxGoalBytes.
var ErrGoal = errors.New("the thread's goal must be a string of at most 16 KiB")

// MaxGoalBytes bounds a goal: it goes into every grader's request.
const MaxGoalBytes = 16 << 10

// CheckGoal reports whether raw, a goal's value as a client writes it, is
// one: a JSON string of at most MaxGoalBytes, or null (none).
func CheckGoal(raw json.RawMessage) error {
	_, err := goalOf(raw)
	return err
}

func goalOf(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var g string
	if err := json.Unmarshal(raw, &g); err != nil {
		return "", fmt.Errorf("%w: it is %s", ErrGoal, jsonKind(raw))
	}
	if len(g) > MaxGoalBytes {
		return "", fmt.Errorf("%w: it has %d bytes", ErrGoal, len(g))
	}
	return strings.TrimSpace(g), nil
}

// jsonKind names the kind of JSON value raw holds.
func jsonKind(raw json.RawMessage) string {
	switch t := strings.TrimSpace(string(raw)); {
	case t == "":
		return "empty"
	case t[0] == '{':
		return "an object"
	case t[0] == '[':
		return "a list"
	case t == "true" || t == "false":
		return "a boolean"
	case t[0] == '"':
		return "a string that does not decode"
	}
	return "a number"
}

// GradeNotice names the notice event that carries a grade.
const GradeNotice = "grade"

// GraderAgent names the grader's calls (their usage events, a scripted
// model's turns).
const GraderAgent = "grader"

// GraderPrompt is the grader's system prompt.
const GraderPrompt = `You grade the final answer of an agent against a rubric. You see the user's request, the rubric and the answer, nothing else. Answer with PASS or FAIL on the first line, then at most five short lines: for FAIL, what the answer misses of the rubric, as instructions the agent can act on; for PASS, nothing more is needed.`

// Middleware is the verification pass.
type Middleware struct {
	passes   int
	rubric   string
	goalOnly bool
}

// New returns the middleware.
func New(cfg Config) *Middleware {
	p := cfg.Passes
	if p == 0 {
		p = DefaultPasses
	}
	m := &Middleware{passes: max(p, 0), rubric: strings.TrimSpace(cfg.Rubric), goalOnly: cfg.GoalOnly}
	if m.goalOnly {
		m.rubric = ""
	}
	return m
}

// Name implements agent.Middleware.
func (*Middleware) Name() string { return "verify" }

// work is what a run did that a check must cover, guarded by mu: the
// tools of a turn may run in parallel.
type work struct {
	mu      sync.Mutex
	edited  []string // the tools that changed files since the last command
	planned bool     // write_todos ran in this run: its open items are this run's
	passes  int      // the passes made
}

type workKey struct{}

func workOf(rt *agent.Runtime) *work { return rt.LocalOrSet(workKey{}, &work{}).(*work) }

// WrapTool implements agent.ToolWrapper: it notes edits, and the commands
// that may check them.
func (m *Middleware) WrapTool(ctx context.Context, req *agent.ToolRequest, next agent.ToolHandler) (agent.ToolResult, error) {
	if m.goalOnly {
		return next(ctx, req) // nothing noted: no plan, no edits to check
	}
	res, err := next(ctx, req)
	if err != nil || res.IsError || req.Runtime == nil || m.passes == 0 {
		return res, err
	}
	tr := tool.TraitsOf(req.Tool)
	plan := req.Call.Name == todos.WriteTodosTool
	if !tr.EditsFiles && !tr.RunsCommands && !plan {
		return res, nil
	}
	w := workOf(req.Runtime)
	w.mu.Lock()
	defer w.mu.Unlock()
	if plan {
		w.planned = true
		return res, nil
	}
	if tr.RunsCommands {
		w.edited = nil
	} else {
		w.edited = append(w.edited, req.Call.Name)
	}
	return res, nil
}

// BeforeAgent implements agent.BeforeAgentHook: a goal that is not a
// string fails the run at its start, before any model call.
func (m *Middleware) BeforeAgent(_ context.Context, rt *agent.Runtime) error {
	if len(rt.Namespace()) > 0 {
		return nil
	}
	raw, _ := rt.Value(GoalValue)
	_, err := goalOf(raw)
	return err
}

// rubricOf is what the thread's answers are graded against: the
// configured rubric and the thread's goal, "" for nothing.
func (m *Middleware) rubricOf(rt *agent.Runtime) string {
	raw, _ := rt.Value(GoalValue)
	goal, _ := goalOf(raw) // checked by BeforeAgent
	switch {
	case goal == "":
		return m.rubric
	case m.rubric == "":
		return goal
	}
	return m.rubric + "\n\n" + goal
}

// BeforeStop implements agent.StopHook.
func (m *Middleware) BeforeStop(ctx context.Context, s *agent.Stop) (string, error) {
	rt := s.Runtime
	if m.passes == 0 || len(rt.Namespace()) > 0 || rt.EndReason() != "" {
		return "", nil
	}
	rubric := m.rubricOf(rt)
	if m.goalOnly && rubric == "" {
		return "", nil
	}
	if mode, _ := hitl.RunMode(rt); mode == hitl.ModePlan {
		return "", nil // the plan's items are for after its approval
	}
	w := workOf(rt)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.passes >= m.passes {
		return "", nil
	}
	var open []string
	// Only a plan this run wrote: the open items a thread's earlier task
	// left are the user's to bring back, not this answer's to finish.
	if raw, ok := rt.Value(todos.Value); ok && w.planned {
		list, _ := todos.Parse(raw) // a plan that does not parse: nothing to say about it
		for _, t := range list {
			if t.Status != todos.Completed {
				open = append(open, fmt.Sprintf("%q (%s)", t.Content, t.Status))
			}
		}
	}
	unchecked := len(w.edited) > 0 && runsCommands(rt)
	var failed string
	if rubric != "" && len(open) == 0 && !unchecked {
		// Graded only once nothing else is open: the agent's own checks
		// first, the rubric's verdict on the answer that follows them.
		var err error
		if failed, err = grade(ctx, rt, rubric, s.Answer); err != nil {
			return "", err
		}
	}
	if len(open) == 0 && !unchecked && failed == "" {
		return "", nil
	}
	w.passes++
	if failed != "" {
		return "A grader checked your answer against the rubric of this task and found it short:\n" + failed +
			"\nDo what it asks (with your tools where it needs them), then give your final answer again.", nil
	}
	var b strings.Builder
	b.WriteString("Before you finish, check your work against the request: read it again and make sure every part of it is done.")
	if len(open) > 0 {
		fmt.Fprintf(&b, "\n- Your plan still has open items: %s. Finish them, or mark each completed or say why it is left.", strings.Join(open, ", "))
	}
	if unchecked {
		b.WriteString("\n- You changed files and have run no command since. If the project has a build, tests or a linter, run them on what you changed; otherwise re-read the changed parts.")
	}
	b.WriteString("\nThen give your final answer. If everything is already done and checked, say so in your answer.")
	return b.String(), nil
}

// grade asks the grader about the answer; it returns the grader's reasons
// when the grade is FAIL, "" when it passes. A grader that cannot be asked
// (its call fails) passes the answer, with a notice saying so: the run
// keeps its answer rather than failing on its check.
func grade(ctx context.Context, rt *agent.Runtime, rubric string, answer *llm.Message) (string, error) {
	request := ""
	if p, ok := rt.Prompt(); ok {
		request = p.Text()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<request>\n%s\n</request>\n\n<rubric>\n%s\n</rubric>\n\n<answer>\n%s\n</answer>", request, rubric, answer.Text())
	model := rt.Model()
	resp, err := llm.Generate(llm.WithAgent(ctx, GraderAgent), model, &llm.Request{System: GraderPrompt, Messages: []llm.Message{llm.UserText(b.String())}})
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		rt.Emit(agent.Event{Type: agent.EventNotice, Name: GradeNotice, Content: "the answer was not graded: " + err.Error(), Error: err.Error()})
		return "", nil
	}
	rt.AddCallUsage(model, GraderAgent, resp.Usage)
	text := strings.TrimSpace(resp.Message.Text())
	verdict, reasons, _ := strings.Cut(text, "\n")
	verdict = strings.ToUpper(strings.Trim(strings.TrimSpace(verdict), "*#:. "))
	rt.Emit(agent.Event{Type: agent.EventNotice, Name: GradeNotice, Content: text})
	if strings.HasPrefix(verdict, "FAIL") {
		return cmp.Or(strings.TrimSpace(reasons), "(no reasons given)"), nil
	}
	return "", nil
}

// runsCommands reports whether the agent has a tool that runs commands,
// with which it could check its work.
func runsCommands(rt *agent.Runtime) bool {
	for _, s := range rt.Agent().ToolSpecs() {
		if rt.Agent().ToolTraits(s.Name).RunsCommands {
			return true
		}
	}
	return false
}
