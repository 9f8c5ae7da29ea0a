package deepagents

import (
	"context"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/middleware/subagents"
	"github.com/deepagents-go/deepagents/middleware/summarization"
	"github.com/deepagents-go/deepagents/middleware/todos"
	"github.com/deepagents-go/deepagents/thread"
)

// One vocabulary: the types, constants and errors a user of a deep agent
// needs are here, under the names of the packages that define them (agent,
// thread, middleware), so that the common case imports this package alone.
// Package agent is for writing middleware and assembling agents by hand;
// package thread holds a thread's data.

// The agent, thread and middleware packages' types.
type (
	Agent         = agent.Agent
	Input         = agent.Input
	Result        = agent.Result
	State         = thread.State
	Todo          = todos.Todo
	TodoStatus    = todos.Status
	Event         = agent.Event
	EventType     = agent.EventType
	RunStatus     = agent.RunStatus
	Middleware    = agent.Middleware
	Decision      = agent.Decision
	DecisionType  = agent.DecisionType
	ActionRequest = agent.ActionRequest
	UsageTree     = agent.UsageTree
	Durability    = agent.Durability
	ModelUsage    = agent.ModelUsage
	// ContextWindow is what filled a model call's context window.
	ContextWindow = agent.ContextWindow
	Subagent      = subagents.Subagent
	SubagentMode  = subagents.Mode
	InterruptOn   = hitl.InterruptOn
	// PermissionMode is a thread's permission mode (see hitl.Mode).
	PermissionMode = hitl.Mode
)

// Permission modes (see hitl.Mode).
const (
	ModeAsk         = hitl.ModeAsk
	ModeAcceptEdits = hitl.ModeAcceptEdits
	ModePlan        = hitl.ModePlan
	ModeAuto        = hitl.ModeAuto
	ModeBypass      = hitl.ModeBypass
)

// Event types (see docs/EVENTS.md).
const (
	EventRunStart       = agent.EventRunStart
	EventTextDelta      = agent.EventTextDelta
	EventReasoningDelta = agent.EventReasoningDelta
	EventMessage        = agent.EventMessage
	EventToolCall       = agent.EventToolCall
	EventToolResult     = agent.EventToolResult
	EventState          = agent.EventState
	EventUsage          = agent.EventUsage
	EventCheckpoint     = agent.EventCheckpoint
	EventInterrupt      = agent.EventInterrupt
	EventNotice         = agent.EventNotice
	EventError          = agent.EventError
	EventRunEnd         = agent.EventRunEnd
)

// How a run ended.
const (
	StatusCompleted   = agent.StatusCompleted
	StatusInterrupted = agent.StatusInterrupted
	StatusFailed      = agent.StatusFailed
)

// Durability modes: when a run's steps are checkpointed.
const (
	DurabilityAsync = agent.DurabilityAsync
	DurabilitySync  = agent.DurabilitySync
	DurabilityExit  = agent.DurabilityExit
)

// Subagent modes: what conversation a subagent starts from.
const (
	SubagentIsolated = subagents.Isolated
	SubagentFork     = subagents.Fork
)

// Decisions on interrupted tool calls.
const (
	DecisionApprove = agent.DecisionApprove
	DecisionEdit    = agent.DecisionEdit
	DecisionReject  = agent.DecisionReject
)

// Todo statuses.
const (
	TodoPending    = todos.Pending
	TodoInProgress = todos.InProgress
	TodoCompleted  = todos.Completed
)

// Errors a run or a resume returns; each is agent's sentinel, so errors.Is
// matches either name.
var (
	ErrMaxSteps         = agent.ErrMaxSteps
	ErrPanic            = agent.ErrPanic
	ErrResponseSchema   = agent.ErrResponseSchema
	ErrNotInterrupted   = agent.ErrNotInterrupted
	ErrDecisionCount    = agent.ErrDecisionCount
	ErrDecisionNotAllow = agent.ErrDecisionNotAllow
	ErrDecisionArgs     = agent.ErrDecisionArgs
	ErrDurability       = agent.ErrDurability
)

// Prompt returns an Input holding one user message.
func Prompt(text string) Input { return agent.Prompt(text) }

// CompactFirst returns a context whose run begins by summarizing the
// thread's conversation so far, however short, keeping only the run's
// prompt (see summarization.CompactFirst): what a user asks for with
// /compact.
func CompactFirst(ctx context.Context) context.Context { return summarization.CompactFirst(ctx) }

// CompactNow returns a context whose run begins by summarizing the
// thread's whole conversation, the summary following focus ("" for
// none); run with Input{ThreadID: id, Prepare: true} it compacts the
// thread at once, without a model turn (see summarization.CompactNow):
// what a user asks for with /compact FOCUS.
func CompactNow(ctx context.Context, focus string) context.Context {
	return summarization.WithFocus(summarization.CompactNow(ctx), focus)
}
