package hooks

import (
	"encoding/json"
	"strings"
)

// Output is what a hook answers: the JSON a command prints on its standard
// output (exit 0), in Claude Code's fields, or what a Go hook returns.
// Every field is optional; a nil Output goes on.
type Output struct {
	// Continue false ends the run (a prompt is not sent, a Stop is not
	// sent back), whatever else the hooks said; StopReason says why, to
	// the user.
	Continue   *bool  `json:"continue,omitempty"`
	StopReason string `json:"stopReason,omitempty"`
	// SuppressOutput keeps the hook's plain output from being shown.
	SuppressOutput bool `json:"suppressOutput,omitempty"`
	// SystemMessage is shown to the user.
	SystemMessage string `json:"systemMessage,omitempty"`
	// Decision "block" blocks (PostToolUse: the reason goes to the model;
	// UserPromptSubmit: the prompt is dropped; Stop, SubagentStop: the
	// agent goes on, the reason its instruction). For PreToolUse, "block"
	// is a deny and "approve" an allow (Claude Code's older fields).
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Specific holds the fields of one event.
	Specific *Specific `json:"hookSpecificOutput,omitempty"`
}

// Specific is an Output's hookSpecificOutput.
type Specific struct {
	HookEventName Event `json:"hookEventName,omitempty"`
	// PermissionDecision (PreToolUse) is "allow", "deny" or "ask";
	// PermissionDecisionReason goes to the model on a deny, to the user
	// on an ask.
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	// UpdatedInput (PreToolUse) replaces the call's arguments: a JSON
	// object, in the hook's dialect.
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	// AdditionalContext is added for the model (UserPromptSubmit,
	// SessionStart, PostToolUse).
	AdditionalContext string `json:"additionalContext,omitempty"`
	// Decision (PermissionRequest) answers the approval in the user's
	// place.
	Decision *PermissionDecision `json:"decision,omitempty"`
}

// PermissionDecision is a PermissionRequest hook's answer: Behavior
// "allow" or "deny"; Message, on a deny, tells the model why.
type PermissionDecision struct {
	Behavior string `json:"behavior"`
	Message  string `json:"message,omitempty"`
}

// Allow returns the Output of a PreToolUse hook that lets a call run
// without asking (a deny or ask rule still holds).
func Allow(reason string) *Output { return permissionOutput("allow", reason) }

// Deny returns the Output of a PreToolUse hook that refuses a call; the
// reason goes to the model.
func Deny(reason string) *Output { return permissionOutput("deny", reason) }

// Ask returns the Output of a PreToolUse hook that sends a call for the
// user's approval; the reason is shown with it.
func Ask(reason string) *Output { return permissionOutput("ask", reason) }

// Block returns the Output that blocks: a prompt (UserPromptSubmit), a
// final answer (Stop, SubagentStop: the reason tells the agent what to do
// next), or a result (PostToolUse: the reason goes to the model).
func Block(reason string) *Output { return &Output{Decision: "block", Reason: reason} }

// Context returns the Output that adds text for the model
// (UserPromptSubmit, SessionStart, PostToolUse).
func Context(text string) *Output {
	return &Output{Specific: &Specific{AdditionalContext: text}}
}

// Halt returns the Output that ends the run, the reason shown to the user.
func Halt(reason string) *Output {
	f := false
	return &Output{Continue: &f, StopReason: reason}
}

func permissionOutput(decision, reason string) *Output {
	return &Output{Specific: &Specific{HookEventName: PreToolUse, PermissionDecision: decision, PermissionDecisionReason: reason}}
}

// Decision is what the hooks of an event decided together.
type Decision string

// Decisions. For PreToolUse the strongest wins: Deny, then Ask, then
// Allow; for the other events any Block blocks.
const (
	DecisionNone  Decision = ""
	DecisionAllow Decision = "allow"
	DecisionAsk   Decision = "ask"
	DecisionDeny  Decision = "deny"
	DecisionBlock Decision = "block"
)

var strength = map[Decision]int{DecisionNone: 0, DecisionAllow: 1, DecisionAsk: 2, DecisionDeny: 3, DecisionBlock: 3}

// Result is what the hooks of one event decided together.
type Result struct {
	// Ran counts the hooks that ran.
	Ran int
	// Decision and Reason: the strongest decision, and the reasons of the
	// hooks that took it, a line each.
	Decision Decision
	Reason   string
	// UpdatedInput is a PreToolUse hook's new arguments, in the agent's
	// dialect (the first hook's, in configuration order, that gave any).
	UpdatedInput json.RawMessage
	// Context is text for the model: additionalContext, and the plain
	// output of UserPromptSubmit and SessionStart hooks.
	Context []string
	// Halt is set when a hook answered continue false; HaltReason is its
	// stopReason.
	Halt       bool
	HaltReason string
	// Notes are what to show the user: system messages, warnings,
	// failures, plain output.
	Notes []Note
}

// Note is a line for the user from one hook.
type Note struct {
	// Hook names the hook (its command, or Hook.Name).
	Hook string
	Text string
	// Warning marks a hook that failed (a status other than 0 and 2, a
	// timeout, output that is not what its event takes).
	Warning bool
}

// ContextText returns the hooks' context for the model, "" when none.
func (r *Result) ContextText() string { return strings.Join(r.Context, "\n\n") }

// decide records a hook's decision: the strongest stays, with the reasons
// of every hook that took it.
func (r *Result) decide(d Decision, reason string) {
	switch {
	case strength[d] > strength[r.Decision]:
		r.Decision, r.Reason = d, reason
	case d == r.Decision && reason != "":
		r.Reason = strings.TrimSpace(r.Reason + "\n" + reason)
	}
}
