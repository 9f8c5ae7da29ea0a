package subagents

import (
	"context"
	"errors"
	"strings"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend/isolate"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/budget"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/permission"
	"github.com/deepagents-go/deepagents/tool"
)

// Runnable is a compiled subagent: anything that takes a conversation and
// returns the state it ends in. *agent.Agent is one. The task tool passes
// the task as the only message (in fork mode, after a copy of the caller's
// conversation), with the caller's files and custom values; the last
// message of the result is the answer. A Runnable should honour
// Input.Events and Input.Namespace to show its progress, and Input.Decisions
// if it can stop for human approval.
type Runnable interface {
	Invoke(ctx context.Context, in agent.Input) (*agent.Result, error)
}

// Mode says what conversation a subagent starts from.
type Mode string

// Subagent modes.
const (
	// Isolated starts the subagent from a fresh conversation
	// holding only the task description. It is the default.
	Isolated Mode = "isolated"
	// Fork starts the subagent from a copy of its caller's
	// conversation so far (without the caller's turn that calls task,
	// which is still pending), followed by the task description as a new
	// user message. Its system prompt, tools and state stay its own.
	Fork Mode = "fork"
)

// Subagent describes an agent the main agent can delegate to with the task
// tool. Either fill in the declarative fields, or set Runnable to a
// compiled agent (the other fields are then ignored, but Name,
// Description and Mode).
type Subagent struct {
	Name string
	// Description tells the main agent when to use this subagent.
	Description string
	// SystemPrompt is the subagent's own prompt.
	SystemPrompt string
	// Tools are the subagent's tools besides its middleware's; nil means
	// the main agent's tools.
	Tools []tool.Tool
	// Model overrides the main agent's model.
	Model llm.Model
	// Middleware is added after the subagent's default stack; one with the
	// name of a default replaces it in place.
	Middleware []agent.Middleware
	// InterruptOn asks for human approval of these tools; nil means the
	// main agent's InterruptOn.
	InterruptOn map[string]hitl.InterruptOn
	// AllowedTools, when set, limits the subagent to the tools of these
	// names (its middleware's tools included).
	AllowedTools []string
	// Mode is Isolated (the default, also for "") or Fork.
	Mode Mode
	// Isolation says whether the subagent works in a workspace of its
	// own, a copy of its caller's folder merged back when it ends
	// (package backend/isolate): "" (Config.Isolation, whose "" is
	// isolate.Auto: only when task calls run in parallel), isolate.None,
	// isolate.Worktree or isolate.Copy, only where the caller's files
	// are a host folder (Config.Workspace). A local background subagent
	// (package middleware/subagents/background) reads it too: for it
	// Auto is a workspace always, as it runs beside the main agent.
	Isolation isolate.Mode
	// Budget, when set, is the subagent's own limit on each of its runs
	// (package middleware/budget): what it spends still counts to the
	// budget of the task that called it.
	Budget *budget.Config

	Runnable Runnable
}

// Parent is what a declarative subagent inherits from the agent that
// calls it, the task tool's and the background ones alike.
type Parent struct {
	// Agent is the configuration a declarative subagent inherits: the main
	// agent's, as deepagents.New passes it. A subagent overrides its Name,
	// SystemPrompt, Middleware and AllowedTools, and Model and Tools when it
	// sets them; it has no ResponseSchema (its final message is its report),
	// and a Checkpointer only when it can stop for approval. Every other
	// field (MaxSteps, MaxParallelTools, Store, Logger, ...) it inherits as
	// it is. See subagentConfig.
	Agent agent.Config
	// InterruptOn is the default approval rules of declarative subagents.
	InterruptOn map[string]hitl.InterruptOn
	// Permissions are the rules every declarative subagent's calls
	// follow (see hitl.Config.Rules).
	Permissions *permission.Rules
	// PermissionMode is the permission mode of threads that set none (see
	// hitl.Config.Mode). A declarative subagent gets the mode of its
	// caller's thread with the caller's state values, and the
	// human_in_the_loop middleware that honours it whenever the caller
	// has it: a subagent of a thread in plan mode only reads too.
	PermissionMode hitl.Mode
	// PreToolUse is the gate every declarative subagent's calls go
	// through first (see hitl.Config.PreToolUse); it gives each the
	// human_in_the_loop middleware.
	PreToolUse hitl.Gate
	// PermissionRequest answers their approvals first (see
	// hitl.Config.PermissionRequest).
	PermissionRequest hitl.Gate
	// Middleware returns the default stack of a declarative subagent,
	// fresh for each; nil means none.
	Middleware func() []agent.Middleware
}

// ErrMode is returned by New for a Subagent.Mode that is neither
// Isolated nor Fork.
var ErrMode = errors.New("unknown subagent mode")

// quotedNames lists subagent names for the model: `a`, `b`.
func quotedNames(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "`" + n + "`"
	}
	return strings.Join(quoted, ", ")
}
