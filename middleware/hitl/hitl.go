// Package hitl is the human-in-the-loop middleware: it stops a run before
// chosen tools run, for a human to approve, edit or reject each call.
package hitl

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/permission"
)

// InterruptOn configures approval for one tool.
type InterruptOn struct {
	// Allowed lists the decisions a human may take; empty means approve,
	// edit and reject.
	Allowed []agent.DecisionType
	// Description is shown with the request; empty means a default naming
	// the tool and its arguments. Describe, when set, computes it from the
	// call instead.
	Description string
	Describe    func(name string, args json.RawMessage) string
}

// Config configures the middleware.
type Config struct {
	// On names the tools whose calls wait for approval, each with its
	// settings.
	On map[string]InterruptOn
	// Rules, when set, decide first: a call they deny is refused (its
	// result says which rule), one they ask about waits for approval,
	// one they allow runs without asking even if On names its tool;
	// calls they do not decide follow On.
	Rules *permission.Rules

	// PreToolUse, when set, is asked about each call first (the
	// PreToolUse hooks of package hooks): its Deny refuses the call
	// whatever the rules and the mode say; its Ask asks for approval even
	// where they would let the call run; its Allow runs the call without
	// asking, unless a rule denies or asks. It may change call.Args: the
	// rules then judge, and the tool runs with, the arguments it leaves.
	PreToolUse Gate
	// PermissionRequest, when set, is asked about each call that is
	// about to wait for approval (the PermissionRequest hooks of package
	// hooks): its Deny refuses the call; its Allow runs it, unless an ask
	// rule (or a PreToolUse gate's ask) asked; anything else asks.
	PermissionRequest Gate
	// Classifier decides, in ModeAuto, each call InterruptOn names that
	// no rule decided (see ModeAuto; NewClassifier). Nil: those calls
	// ask.
	Classifier Gate

	// Mode is the permission mode of a thread whose state holds none
	// (ModeValue); "" is ModeAsk. The mode decides how On applies; it
	// never overrides Rules.
	Mode Mode
	// AfterPlan is the mode an approved plan leaves plan mode for when
	// the run that resumes with the approval does not set one; "" (and
	// plan) is ModeAsk.
	AfterPlan Mode
	// PlanTools are the tools plan mode offers; nil means those whose
	// traits say they only read or that they delegate (tool.Traits:
	// ReadOnly, Delegates). EditTools are those accept-edits runs without
	// asking; nil means those that edit files (EditsFiles).
	PlanTools, EditTools []string
}

// Gate decides about a tool call before the rules do (see
// Config.PreToolUse); a Decision with Effect None leaves it to them.
type Gate func(ctx context.Context, rt *agent.Runtime, call *llm.ToolCall) permission.Decision

// Middleware stops a run before chosen tools run, to wait for a human's
// approve, edit or reject decision on each call. The run ends interrupted
// (a Checkpointer keeps it) and Agent.Resume continues it with the
// decisions. Calls of other tools in the same turn wait with them.
//
// It honours the thread's permission mode (see Mode): for each call, a
// PreToolUse gate's deny refuses it, then a deny rule; in plan mode, a tool plan mode does not offer is
// refused; an allow rule runs it and an ask rule asks, whatever the mode;
// a gate's ask asks, then an ask rule; a gate's allow or an allow rule runs
// it; a call nothing decides asks when On names its tool, unless the mode
// is bypass, or accept-edits and the tool edits files, or auto and the
// classifier allows (or refuses) it.
type Middleware struct {
	on    map[string]InterruptOn
	rules *permission.Rules
	cfg   Config
}

// New returns the middleware. It fails on a mode that is not one.
func New(cfg Config) (*Middleware, error) {
	var err error
	if cfg.Mode, err = ParseMode(string(cfg.Mode)); err != nil {
		return nil, err
	}
	if cfg.AfterPlan, err = ParseMode(string(cfg.AfterPlan)); err != nil {
		return nil, err
	}
	if cfg.AfterPlan == ModePlan {
		cfg.AfterPlan = ModeAsk
	}
	return &Middleware{on: cfg.On, rules: cfg.Rules, cfg: cfg}, nil
}

// Name implements agent.Middleware.
func (*Middleware) Name() string { return "human_in_the_loop" }

// AllDecisions are the decisions allowed when InterruptOn.Allowed is empty.
var AllDecisions = []agent.DecisionType{agent.DecisionApprove, agent.DecisionEdit, agent.DecisionReject}

// RejectedToolCall begins the result of a rejected call.
const RejectedToolCall = agent.RejectedToolCall

// AfterModel implements agent.AfterModelHook.
func (h *Middleware) AfterModel(ctx context.Context, turn *agent.Turn) error {
	// The default descriptions say who asks: "The agent", or the
	// subagent by name, since a subagent's request reaches the human
	// through its caller's interrupt.
	who := "The agent"
	if len(turn.Runtime.Namespace()) > 0 {
		who = "The subagent " + turn.Runtime.AgentName()
	}
	mode := h.mode(turn.Runtime)
	var requests []agent.ActionRequest
	for i := range turn.Message.ToolCalls {
		call := &turn.Message.ToolCalls[i]
		if dec, ok := turn.Runtime.Decision(call.ID); ok {
			if call.Name == ExitPlanTool && dec.Type != agent.DecisionReject {
				h.planApproved(turn, call, dec)
			}
			continue // decided: the agent applies the decision itself
		}
		if turn.Answered(call.ID) {
			continue // answered before any rule looks at it (a path the contract refuses)
		}
		if call.Name == ExitPlanTool {
			if req := h.exitPlan(turn, call, mode); req != nil {
				requests = append(requests, *req)
			}
			continue
		}
		cfg, ok := h.on[call.Name]
		var gate permission.Decision
		if h.cfg.PreToolUse != nil {
			gate = h.cfg.PreToolUse(ctx, turn.Runtime, call)
		}
		if gate.Effect == permission.Deny {
			turn.Answer(call.ID, agent.ToolResult{Content: "Error: " + gate.Reason, IsError: true})
			continue
		}
		traits := turn.Runtime.Agent().ToolTraits(call.Name)
		d := h.rules.Decide(call.Name, traits, call.Args)
		if d.Effect == permission.Deny {
			turn.Answer(call.ID, agent.ToolResult{Content: fmt.Sprintf("Error: permission denied: %s forbids this call.", d.Reason), IsError: true})
			continue
		}
		if mode == ModePlan && !h.planTool(call.Name, traits) {
			// The model is not offered the tool in plan mode; it may
			// call it all the same.
			turn.Answer(call.ID, agent.ToolResult{Content: fmt.Sprintf("Error: %s is not available in plan mode, which only reads. Present your plan with %s; once the user approves it, you can make changes.", call.Name, ExitPlanTool), IsError: true})
			continue
		}
		if gate.Effect == permission.Ask && d.Effect != permission.Ask {
			d = gate // a hook's ask stands for a rule's
		}
		if gate.Effect == permission.Allow && d.Effect != permission.Ask {
			continue // a hook's allow skips the prompt, never an ask rule
		}
		switch d.Effect {
		case permission.Allow:
			continue
		case permission.None:
			if mode == ModeBypass || mode == ModeAcceptEdits && h.editTool(call.Name, traits) {
				continue
			}
		case permission.Ask:
			ok = true
			if cfg.Description == "" && cfg.Describe == nil {
				cfg.Description = fmt.Sprintf("%s wants to run %s with these arguments: %s (approval asked by %s)", who, call.Name, call.Args, d.Reason)
			}
		}
		if !ok {
			continue
		}
		if mode == ModeAuto && d.Effect == permission.None && h.cfg.Classifier != nil && len(turn.Runtime.Namespace()) == 0 {
			switch c := h.cfg.Classifier(ctx, turn.Runtime, call); c.Effect {
			case permission.Allow:
				continue
			case permission.Deny:
				turn.Answer(call.ID, agent.ToolResult{Content: "Error: " + c.Reason, IsError: true})
				continue
			}
		}
		if h.cfg.PermissionRequest != nil {
			switch pr := h.cfg.PermissionRequest(ctx, turn.Runtime, call); {
			case pr.Effect == permission.Deny:
				turn.Answer(call.ID, agent.ToolResult{Content: "Error: " + pr.Reason, IsError: true})
				continue
			case pr.Effect == permission.Allow && d.Effect != permission.Ask:
				continue // in the user's place, never in a rule's
			}
		}
		allowed := cfg.Allowed
		if len(allowed) == 0 {
			allowed = AllDecisions
		}
		desc := cfg.Description
		if cfg.Describe != nil {
			desc = cfg.Describe(call.Name, call.Args)
		}
		if desc == "" {
			desc = fmt.Sprintf("%s wants to run %s with these arguments: %s", who, call.Name, call.Args)
		}
		requests = append(requests, agent.ActionRequest{
			ToolCallID:  call.ID,
			Tool:        call.Name,
			Args:        call.Args,
			Description: desc,
			Allowed:     allowed,
			Namespace:   turn.Runtime.Namespace(),
		})
	}
	if len(requests) > 0 {
		return &agent.InterruptError{Requests: requests}
	}
	return nil
}
