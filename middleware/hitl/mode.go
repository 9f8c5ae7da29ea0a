package hitl

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/tool"
)

// Mode is a thread's permission mode: how the approvals of InterruptOn
// apply to its calls. Whatever the mode, the rules (Config.Rules) decide
// first: a denied call is refused and an asked one (the CLI's protected
// paths, say) waits for approval, in every mode, auto included.
//
// A thread keeps its mode in its state, as the value ModeValue, so that it
// is checkpointed with the thread and follows it into its subagents. Only
// the program sets it, with agent.Input.Values (ModeValues), when its user
// changes it; the model cannot: no tool writes it, but for the approval of
// a plan (ExitPlanTool), which is the user's decision.
type Mode string

// The permission modes.
const (
	// ModeAsk asks before every call of a tool InterruptOn names.
	ModeAsk Mode = "ask"
	// ModeAcceptEdits runs the tools that edit files (Config.EditTools:
	// write_file, edit_file) without asking; the other tools of
	// InterruptOn, execute among them, still ask.
	ModeAcceptEdits Mode = "accept-edits"
	// ModePlan is read-only: the model is offered only the tools that
	// read (Config.PlanTools) and ExitPlanTool, by which it presents its
	// plan for approval; a call of any other tool is refused, even one the
	// model makes anyway. Approving the plan switches the thread to
	// another mode (see ExitPlanTool); rejecting it keeps it planning.
	ModePlan Mode = "plan"
	// ModeAuto has a classifier (Config.Classifier: a model) decide each
	// call InterruptOn names, in the user's place: its allow runs the call,
	// its deny refuses it with the reason, anything else (no classifier,
	// a timeout, an answer it cannot read) asks. The rules' ask rules and
	// the protected paths still ask; deny rules still refuse. It is Claude
	// Code's auto mode.
	ModeAuto Mode = "auto"
	// ModeBypass asks about nothing InterruptOn names; the rules' ask
	// rules still ask. It is Claude Code's bypassPermissions (and what
	// "auto" meant here before auto mode had a classifier).
	ModeBypass Mode = "bypass"
)

// Modes are the permission modes, in the order a user cycles through
// them; ModeBypass is not among them: it is only ever given (a flag, a
// configuration).
var Modes = []Mode{ModeAsk, ModeAcceptEdits, ModePlan, ModeAuto}

// ParseMode returns the mode named s; "" is ModeAsk, and Claude Code's
// bypassPermissions is ModeBypass.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); {
	case s == "":
		return ModeAsk, nil
	case slices.Contains(Modes, m) || m == ModeBypass:
		return m, nil
	case s == "bypassPermissions":
		return ModeBypass, nil
	}
	return "", fmt.Errorf("hitl: unknown permission mode %q (ask, accept-edits, plan, auto or bypass)", s)
}

// Next returns the mode after m in Modes, the first after the last.
func (m Mode) Next() Mode {
	i := slices.Index(Modes, m)
	return Modes[(i+1)%len(Modes)]
}

// ModeValue is the state value holding a thread's permission mode, as a
// JSON string ("plan").
const ModeValue = "permission_mode"

// ModeValues returns the input values that set a thread's mode to m.
func ModeValues(m Mode) map[string]json.RawMessage {
	raw, _ := json.Marshal(string(m))
	return map[string]json.RawMessage{ModeValue: raw}
}

// ModeOf returns the mode the state values hold; ok is false when they
// hold none, or a value that is not a mode.
func ModeOf(values map[string]json.RawMessage) (m Mode, ok bool) {
	return modeOf(values[ModeValue])
}

func modeOf(raw json.RawMessage) (Mode, bool) {
	switch string(raw) { // no allocation: compared in place
	case `"ask"`:
		return ModeAsk, true
	case `"accept-edits"`:
		return ModeAcceptEdits, true
	case `"plan"`:
		return ModePlan, true
	case `"auto"`:
		return ModeAuto, true
	case `"bypass"`:
		return ModeBypass, true
	}
	return "", false
}

// ExitPlanTool is the tool by which the model, in plan mode, presents its
// plan (its "plan" argument, Markdown) for the user's approval. It is
// offered in plan mode only, to the main agent only, and never runs as a
// tool: the call waits for a decision. Approving it (or editing the plan)
// leaves plan mode for the mode the resuming run sets in its Input.Values
// (ModeValues), or, when it sets none, Config.AfterPlan; rejecting it
// keeps the thread in plan mode, the model reading the user's reason.
const ExitPlanTool = "exit_plan_mode"

// planTool reports whether plan mode offers the tool: one Config.PlanTools
// names, or when it is nil, one that only reads (ls, read_file, glob,
// grep, write_todos, an MCP tool whose server says it only reads) or that
// delegates to subagents, which inherit the mode and so only read too
// (task).
func (h *Middleware) planTool(name string, tr tool.Traits) bool {
	if h.cfg.PlanTools != nil {
		return slices.Contains(h.cfg.PlanTools, name)
	}
	return tr.ReadOnly || tr.Delegates
}

// editTool reports whether accept-edits runs the tool without asking: one
// Config.EditTools names, or when it is nil, one that edits files
// (write_file, edit_file).
func (h *Middleware) editTool(name string, tr tool.Traits) bool {
	if h.cfg.EditTools != nil {
		return slices.Contains(h.cfg.EditTools, name)
	}
	return tr.EditsFiles
}

// exitPlanSpec is ExitPlanTool as the model sees it.
var exitPlanSpec = llm.ToolSpec{
	Name: ExitPlanTool,
	Description: "Present your plan to the user for approval and leave plan mode. Call it once you have " +
		"read what you need and know what you will change: the user sees the plan and approves it " +
		"(you then carry it out, with the tools that change files) or rejects it with feedback " +
		"(you stay in plan mode and revise it).",
	Parameters: json.RawMessage(`{"type":"object","properties":{"plan":{"type":"string","description":"The plan, in Markdown: what you will change, where, and how you will check it."}},"required":["plan"]}`),
}

// planPrompt tells the model what plan mode allows.
const planPrompt = `## Plan mode

The user has turned plan mode on: you may read, search and list files, keep your todo list and ` +
	`delegate read-only research to subagents, but you must not change anything (no file writes or ` +
	`edits, no commands). Work out a plan, then call ` + "`" + ExitPlanTool + "`" + ` with it, in ` +
	`Markdown, for the user to approve. Do not carry out any part of it before it is approved.`

// mode is the mode of rt's thread: its state value, else the default.
func (h *Middleware) mode(rt *agent.Runtime) Mode {
	raw, _ := rt.Value(ModeValue)
	if m, ok := modeOf(raw); ok {
		return m
	}
	return h.cfg.Mode
}

type runModeKey struct{}

// RunMode returns the permission mode a run's model calls were last made
// in (the thread's value, else the middleware's default), for the layers
// that act differently in plan mode; ok is false before the first call or
// without this middleware.
func RunMode(rt *agent.Runtime) (m Mode, ok bool) {
	v, ok := rt.Local(runModeKey{})
	if !ok {
		return "", false
	}
	return v.(Mode), true
}

// WrapModel implements agent.ModelWrapper: in plan mode the model is
// offered only the plan tools, and (the main agent) ExitPlanTool.
func (h *Middleware) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	mode := h.mode(req.Runtime)
	if prev, ok := RunMode(req.Runtime); !ok || prev != mode {
		req.Runtime.SetLocal(runModeKey{}, mode) // for RunMode: stored when it changes
	}
	if mode != ModePlan {
		return next(ctx, req)
	}
	tools := make([]llm.ToolSpec, 0, len(req.Tools)+1)
	for _, t := range req.Tools {
		if h.planTool(t.Name, req.Runtime.Agent().ToolTraits(t.Name)) {
			tools = append(tools, t)
		}
	}
	if len(req.Runtime.Namespace()) == 0 {
		tools = append(tools, exitPlanSpec)
	}
	r := *req
	r.Tools = tools
	r.AppendSystem(planPrompt)
	return next(ctx, &r)
}

// exitPlan decides a call of ExitPlanTool in mode m: the plan waits for
// approval, or the call is refused.
func (h *Middleware) exitPlan(turn *agent.Turn, call *llm.ToolCall, m Mode) *agent.ActionRequest {
	refuse := func(why string) *agent.ActionRequest {
		turn.Answer(call.ID, agent.ToolResult{Content: "Error: " + why, IsError: true})
		return nil
	}
	switch {
	case len(turn.Runtime.Namespace()) > 0:
		return refuse(ExitPlanTool + " is the main agent's: a subagent reports its findings as its answer.")
	case m != ModePlan:
		return refuse("plan mode is off (the permission mode is " + string(m) + "): there is no plan to present; go on with the task.")
	}
	plan, ok := planOf(call.Args)
	if !ok {
		return refuse(ExitPlanTool + ` needs a "plan" argument: the plan, in Markdown.`)
	}
	return &agent.ActionRequest{
		ToolCallID:  call.ID,
		Tool:        call.Name,
		Args:        call.Args,
		Description: plan,
		Allowed:     AllDecisions,
	}
}

// planOf returns the plan argument of an ExitPlanTool call.
func planOf(args json.RawMessage) (string, bool) {
	var in struct {
		Plan string `json:"plan"`
	}
	if json.Unmarshal(args, &in) != nil || strings.TrimSpace(in.Plan) == "" {
		return "", false
	}
	return in.Plan, true
}

// planApproved answers an approved (or edited) ExitPlanTool call: the
// thread leaves plan mode for the mode the resuming run set, or
// Config.AfterPlan.
func (h *Middleware) planApproved(turn *agent.Turn, call *llm.ToolCall, d agent.Decision) {
	rt := turn.Runtime
	m := h.mode(rt)
	if m == ModePlan {
		m = h.cfg.AfterPlan
		raw, _ := json.Marshal(string(m))
		rt.SetValue(ModeValue, raw)
	}
	text := "The user approved your plan. The permission mode is now " + string(m) + ": " + modeMeaning[m] + " Carry out the plan."
	if d.Type == agent.DecisionEdit {
		plan, _ := planOf(call.Args)
		text = "The user approved your plan, as they edited it:\n\n" + plan + "\n\nThe permission mode is now " + string(m) + ": " + modeMeaning[m] + " Carry out this plan."
	}
	turn.Answer(call.ID, agent.ToolResult{Content: text})
}

// modeMeaning says what a mode does, for the model.
var modeMeaning = map[Mode]string{
	ModeAsk:         "changes may wait for the user's approval.",
	ModeAcceptEdits: "file edits run without asking; commands may wait for approval.",
	ModeAuto:        "a classifier decides, in the user's place, what would wait for approval; what it cannot decide asks.",
	ModeBypass:      "tools run without asking, but where a rule asks.",
}
