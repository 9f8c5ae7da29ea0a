package hooks

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/permission"
)

// NoticeHook names the notices (agent.EventNotice) of hooks: what a hook
// said for the user, or how it failed (Error set).
const NoticeHook = "hook"

// ErrPromptBlocked is the error of a run whose prompt a UserPromptSubmit
// hook blocked; the prompt is not kept.
var ErrPromptBlocked = errors.New("hooks: a UserPromptSubmit hook blocked the prompt")

// MaxStopContinuations bounds how many times Stop hooks send one run back
// for more work; past it, the run ends and a notice says so.
const MaxStopContinuations = 8

// Middleware runs the hooks of the agent's events: UserPromptSubmit and
// SubagentStart (in BeforeAgent), PostToolUse and PostToolUseFailure
// (WrapTool), Stop and SubagentStop (BeforeStop) and the permission
// Notification (WrapRun). PreToolUse
// runs in the human_in_the_loop middleware, where its decision meets the
// rules and the mode (see Runner.Gate); PreCompact in summarization (see
// Runner.BeforeSummary). It keeps no per-run state: one serves an agent
// and its subagents.
type Middleware struct{ r *Runner }

// Middleware returns the Runner's middleware.
func (r *Runner) Middleware() *Middleware { return &Middleware{r: r} }

// Name implements agent.Middleware.
func (*Middleware) Name() string { return "hooks" }

// input is an event of rt's thread. Its session is the top-level thread:
// a subagent's calls belong to the conversation that started it, as in
// Claude Code.
func input(rt *agent.Runtime, e Event) Input {
	root, _, _ := strings.Cut(rt.ThreadID(), "/") // see thread.ChildID
	in := Input{SessionID: root, HookEventName: e}
	if raw, ok := rt.Value(hitl.ModeValue); ok {
		var m string
		if json.Unmarshal(raw, &m) == nil {
			in.PermissionMode = m
		}
	}
	return in
}

// show emits res's notes, and its halt, as notices of rt's run.
func show(rt *agent.Runtime, e Event, res *Result) {
	for _, n := range res.Notes {
		ev := agent.Event{Type: agent.EventNotice, Name: NoticeHook, Content: fmt.Sprintf("%s hook %s: %s", e, n.Hook, n.Text)}
		if n.Warning {
			ev.Error = n.Text
		}
		rt.Emit(ev)
	}
	if res.Halt {
		reason := res.HaltReason
		if reason == "" {
			reason = "a " + string(e) + " hook stopped the agent"
		}
		rt.EndRun(reason)
		rt.Emit(agent.Event{Type: agent.EventNotice, Name: NoticeHook, Content: fmt.Sprintf("%s hook stopped the agent: %s", e, reason)})
	}
}

// BeforeAgent implements agent.BeforeAgentHook: a run with the user's
// prompt (agent.Runtime.Prompt) runs the UserPromptSubmit hooks on it. A block
// drops the prompt and fails the run with ErrPromptBlocked; context is
// added to the prompt's message for the model.
func (m *Middleware) BeforeAgent(ctx context.Context, rt *agent.Runtime) error {
	given, ok := rt.Prompt()
	if !ok {
		return nil
	}
	if len(rt.Namespace()) > 0 {
		return m.subagentStart(ctx, rt)
	}
	if !m.r.Has(UserPromptSubmit) {
		return nil
	}
	msgs := rt.Messages() // the prompt is the last of them
	prompt := msgs[len(msgs)-1]
	in := input(rt, UserPromptSubmit)
	in.Prompt = given.Text()
	res := m.r.Run(ctx, in)
	show(rt, UserPromptSubmit, &res)
	if res.Decision == DecisionBlock || res.Halt {
		rt.RewriteMessages(len(msgs)-1, nil)
		reason := res.Reason
		if res.Halt {
			reason = res.HaltReason
		}
		if reason == "" {
			return ErrPromptBlocked
		}
		return fmt.Errorf("%w: %s", ErrPromptBlocked, reason)
	}
	if c := res.ContextText(); c != "" {
		prompt = prompt.Clone()
		prompt.Parts = append(prompt.Parts, llm.Text(contextNote(UserPromptSubmit, c)))
		rt.RewriteMessages(len(msgs)-1, []llm.Message{prompt})
	}
	return nil
}

// subagentStart runs the SubagentStart hooks of a subagent's run: their
// context is added to its task's message.
func (m *Middleware) subagentStart(ctx context.Context, rt *agent.Runtime) error {
	if !m.r.Has(SubagentStart) {
		return nil
	}
	in := input(rt, SubagentStart)
	in.AgentType, in.AgentID = rt.AgentName(), rt.ThreadID()
	res := m.r.Run(ctx, in)
	show(rt, SubagentStart, &res)
	if c := res.ContextText(); c != "" {
		msgs := rt.Messages() // the task is the last of them
		task := msgs[len(msgs)-1].Clone()
		task.Parts = append(task.Parts, llm.Text(contextNote(SubagentStart, c)))
		rt.RewriteMessages(len(msgs)-1, []llm.Message{task})
	}
	return nil
}

// contextNote is hooks' context as the model reads it.
func contextNote(e Event, c string) string {
	return fmt.Sprintf("<%s-hook-context>\n%s\n</%s-hook-context>", e, c, e)
}

// WrapTool implements agent.ToolWrapper: a call that succeeded runs the
// PostToolUse hooks, one that failed the PostToolUseFailure hooks; their
// block reasons and context are added to its result for the model.
func (m *Middleware) WrapTool(ctx context.Context, req *agent.ToolRequest, next agent.ToolHandler) (agent.ToolResult, error) {
	res, err := next(ctx, req)
	e := PostToolUse
	if res.IsError {
		e = PostToolUseFailure
	}
	if err != nil || !m.r.Has(e) {
		return res, err
	}
	in := input(req.Runtime, e)
	in.ToolName, in.ToolInput, in.ToolUseID = req.Call.Name, req.Call.Args, req.Call.ID
	if e == PostToolUseFailure {
		in.Error = res.Content
	} else {
		in.ToolResponse, _ = json.Marshal(map[string]any{"content": res.Content, "is_error": res.IsError})
	}
	out := m.r.Run(ctx, in)
	show(req.Runtime, e, &out)
	var add []string
	if out.Decision == DecisionBlock {
		add = append(add, string(e)+" hook feedback:\n"+strings.TrimSpace(out.Reason))
	}
	if c := out.ContextText(); c != "" {
		add = append(add, contextNote(e, c))
	}
	if len(add) > 0 {
		res.Content = strings.TrimRight(res.Content, "\n") + "\n\n" + strings.Join(add, "\n\n")
	}
	return res, nil
}

// BeforeStop implements agent.StopHook: a final answer runs the Stop hooks
// (SubagentStop for a subagent's); a block sends the agent back to work
// with the reason, up to MaxStopContinuations times a run.
func (m *Middleware) BeforeStop(ctx context.Context, s *agent.Stop) (string, error) {
	rt := s.Runtime
	e := Stop
	if len(rt.Namespace()) > 0 {
		e = SubagentStop
	}
	if !m.r.Has(e) {
		return "", nil
	}
	in := input(rt, e)
	active := s.Continued > 0
	in.StopHookActive = &active
	in.LastAssistantMessage = s.Answer.Text()
	if e == SubagentStop {
		in.AgentType = rt.AgentName()
	}
	res := m.r.Run(ctx, in)
	show(rt, e, &res)
	if res.Halt || res.Decision != DecisionBlock {
		return "", nil
	}
	if s.Continued >= MaxStopContinuations {
		rt.Emit(agent.Event{Type: agent.EventNotice, Name: NoticeHook, Content: fmt.Sprintf("%s hooks sent the agent back %d times in one run; it stops now.", e, s.Continued)})
		return "", nil
	}
	return fmt.Sprintf("%s hook feedback:\n%s", e, res.Reason), nil
}

// WrapRun implements agent.RunWrapper: a top-level run that ends waiting
// for approval runs the Notification hooks (permission_prompt).
func (m *Middleware) WrapRun(ctx context.Context, req *agent.RunRequest, next agent.RunHandler) (*agent.Result, error) {
	res, err := next(ctx, req)
	if res == nil || res.Status != agent.StatusInterrupted || !m.r.Has(Notification) || agent.RuntimeFromContext(ctx) != nil {
		return res, err
	}
	tools := make([]string, 0, len(res.Interrupts))
	for _, r := range res.Interrupts {
		tools = append(tools, r.Tool)
	}
	in := Input{SessionID: res.ThreadID, HookEventName: Notification, NotificationType: NotifyPermission,
		Message: "The agent needs your permission to use " + strings.Join(tools, ", ")}
	out := m.r.Run(ctx, in)
	for _, n := range out.Notes {
		cmp.Or(m.r.cfg.Logger, slog.Default()).Info("hook", "event", Notification, "hook", n.Hook, "text", n.Text, "warning", n.Warning)
	}
	return res, err
}

// Gate is the PreToolUse hooks as hitl.Config.PreToolUse takes them: their
// decision for the call, which they may rewrite (updatedInput).
func (r *Runner) Gate(ctx context.Context, rt *agent.Runtime, call *llm.ToolCall) permission.Decision {
	return r.decide(ctx, rt, PreToolUse, call)
}

// Permission is the PermissionRequest hooks as
// hitl.Config.PermissionRequest takes them: their answer to an approval
// about to be asked (allow, deny, or none: ask the user).
func (r *Runner) Permission(ctx context.Context, rt *agent.Runtime, call *llm.ToolCall) permission.Decision {
	return r.decide(ctx, rt, PermissionRequest, call)
}

// decide runs the hooks of e, an event about a call, and returns their
// decision as the rules' kind of decision.
func (r *Runner) decide(ctx context.Context, rt *agent.Runtime, e Event, call *llm.ToolCall) permission.Decision {
	in := input(rt, e)
	in.ToolName, in.ToolInput, in.ToolUseID = call.Name, call.Args, call.ID
	res := r.Run(ctx, in)
	show(rt, e, &res)
	if res.UpdatedInput != nil {
		call.Args = res.UpdatedInput // PreToolUse's only
	}
	reason := strings.TrimSpace(res.Reason)
	switch {
	case res.Halt:
		return permission.Decision{Effect: permission.Deny, Reason: fmt.Sprintf("a %s hook stopped the agent: %s", e, rt.EndReason())}
	case res.Decision == DecisionDeny:
		return permission.Decision{Effect: permission.Deny, Reason: fmt.Sprintf("a %s hook refused this call: %s", e, cmp.Or(reason, "no reason given"))}
	case res.Decision == DecisionAsk:
		return permission.Decision{Effect: permission.Ask, Reason: fmt.Sprintf("a %s hook%s", e, parenthesized(reason))}
	case res.Decision == DecisionAllow:
		return permission.Decision{Effect: permission.Allow, Reason: fmt.Sprintf("a %s hook%s", e, parenthesized(reason))}
	}
	return permission.Decision{}
}

// BeforeSummary is the PreCompact hooks as
// summarization.Config.BeforeSummary takes them.
func (r *Runner) BeforeSummary(ctx context.Context, rt *agent.Runtime, manual bool, focus string) {
	in := input(rt, PreCompact)
	in.Trigger = "auto"
	if manual {
		in.Trigger = "manual"
	}
	in.CustomInstructions = &focus
	res := r.Run(ctx, in)
	show(rt, PreCompact, &res)
}

func parenthesized(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
