package agent

import (
	"context"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/tool"
)

// Middleware extends an agent. Only Name is required; every hook below is an
// optional interface the agent finds by type assertion, as io.WriterTo is
// found on an io.Writer:
//
//   - [ToolProvider]: tools the middleware adds.
//   - [BeforeAgentHook]: runs once at the start of a run.
//   - [ModelWrapper]: wraps every model call.
//   - [AfterModelHook]: inspects a model turn before its tool calls run.
//   - [ToolWrapper]: wraps every tool call.
//   - [StopHook]: consulted when the model gives a final answer; may keep
//     the run going.
//   - [AfterAgentHook]: runs once at the end of a completed run.
//   - [RunWrapper]: wraps a whole run, however it ends.
//
// Order: the middleware listed first is the outermost. BeforeAgent and
// AfterModel hooks run in list order; a WrapRun, WrapModel or WrapTool
// listed first sees the request first and the result last; AfterAgent
// hooks run in reverse list order. Custom state is kept with [Runtime.SetValue].
type Middleware interface {
	// Name identifies the middleware; names must be unique in a stack.
	Name() string
}

// ToolProvider is a Middleware that adds tools.
type ToolProvider interface {
	Tools() []tool.Tool
}

// BeforeAgentHook is a Middleware that prepares a run: loading memory,
// repairing the conversation, seeding state. An error fails the run.
type BeforeAgentHook interface {
	BeforeAgent(ctx context.Context, rt *Runtime) error
}

// AfterAgentHook is a Middleware that runs when a run completes (not when it
// fails or is interrupted). An error fails the run.
type AfterAgentHook interface {
	AfterAgent(ctx context.Context, rt *Runtime) error
}

// Stop is a final answer about to end a run, as a [StopHook] sees it.
type Stop struct {
	Runtime *Runtime
	// Answer is the final answer, already part of the state.
	Answer *llm.Message
	// Continued counts the times StopHooks kept this run going already.
	Continued int
}

// StopHook is a Middleware consulted when the model gives a final answer
// (after a ResponseSchema accepted it). Returning a non-empty text keeps
// the run going: the text is added as a user message and the model is
// called again. StopHooks run in list order; the first text wins. An error
// fails the run. A hook should look at Stop.Continued to end a loop: the
// agent only bounds it by its MaxSteps.
type StopHook interface {
	BeforeStop(ctx context.Context, s *Stop) (string, error)
}

// RunRequest is one run (an Invoke, Stream or Resume) as a [RunWrapper]
// sees it, before the thread is loaded.
type RunRequest struct {
	// Agent is the agent running.
	Agent *Agent
	// ThreadID is the run's thread: Input.ThreadID, or the fresh id of a
	// new thread.
	ThreadID string
	// Input is what the run was given; Input.Decisions is not nil when the
	// run resumes an interrupted one.
	Input Input

	emit func(Event)
}

// RunHandler performs a run. Its Result may come with an error, as
// Agent.Invoke's does; a run that stops for human decisions is not an
// error (its Result's Status is StatusInterrupted).
type RunHandler func(ctx context.Context, req *RunRequest) (*Result, error)

// RunWrapper is a Middleware that wraps a whole run: from before the thread
// is loaded to after the run ended, completed, interrupted or failed. It
// may pass next a context of its own (a tracing span, say), which every
// hook, model call and tool call of the run then receives. Like a
// WrapModel, it may change the request: the run uses the ThreadID and
// Input that reach the innermost handler.
type RunWrapper interface {
	WrapRun(ctx context.Context, req *RunRequest, next RunHandler) (*Result, error)
}

// ModelRequest is one model call as middleware sees it. Middleware may
// change the request before passing it on; Messages and Tools share memory
// with the agent's state, so replace those slices rather than writing into
// them.
type ModelRequest struct {
	llm.Request
	Model   llm.Model
	Runtime *Runtime
}

// ModelHandler performs a model call.
type ModelHandler func(ctx context.Context, req *ModelRequest) (*llm.Response, error)

// ModelWrapper is a Middleware that wraps model calls: it may change the
// request, call next (or not), and change the response.
type ModelWrapper interface {
	WrapModel(ctx context.Context, req *ModelRequest, next ModelHandler) (*llm.Response, error)
}

// Turn is a model turn whose tool calls are about to run.
type Turn struct {
	Runtime *Runtime
	// Message is the assistant message, already part of the state. A hook
	// may edit the arguments of its tool calls in place.
	Message *llm.Message
	// answered holds results for calls that must not run.
	answered map[string]ToolResult
}

// Answer gives a tool call its result without running it (a rejected call,
// for one).
func (t *Turn) Answer(callID string, r ToolResult) {
	if t.answered == nil {
		t.answered = make(map[string]ToolResult)
	}
	t.answered[callID] = r
}

// Answered reports whether a hook gave the call its result already: a
// later hook has nothing left to decide about it.
func (t *Turn) Answered(callID string) bool {
	_, ok := t.answered[callID]
	return ok
}

// AfterModelHook is a Middleware that inspects a model turn before its tool
// calls run. Returning an *InterruptError stops the run to wait for human
// decisions; on [Agent.Resume] the hook runs again with the decisions
// available from [Runtime.Decisions]. Any other error fails the run.
type AfterModelHook interface {
	AfterModel(ctx context.Context, turn *Turn) error
}

// ToolRequest is one tool call as middleware sees it.
type ToolRequest struct {
	Call llm.ToolCall
	// Tool is the tool the call names, nil when no such tool exists.
	Tool tool.Tool
	// Turn holds every tool call of the same model turn, this one included.
	Turn    []llm.ToolCall
	Runtime *Runtime
}

// ToolResult is what the model sees of a tool call.
type ToolResult struct {
	Content string
	IsError bool
	// Parts are what follows Content in the result, such as the images an
	// MCP tool returned (see tool.ResultCaller).
	Parts []llm.Part
}

// ToolHandler performs a tool call. Failures of the tool itself come back as
// a ToolResult with IsError set; an error return is reserved for what stops
// the run: a cancelled context or an *InterruptError.
type ToolHandler func(ctx context.Context, req *ToolRequest) (ToolResult, error)

// ToolWrapper is a Middleware that wraps tool calls.
type ToolWrapper interface {
	WrapTool(ctx context.Context, req *ToolRequest, next ToolHandler) (ToolResult, error)
}

// SystemPrompter is a Middleware that contributes a fixed section to the
// system prompt. The section is computed once when the agent is built and
// appended in stack order after the agent's own prompt, which keeps the
// prompt byte-identical from step to step. Use WrapModel for sections that
// depend on the run.
type SystemPrompter interface {
	SystemPrompt() string
}

// ToolPrompter is a SystemPrompter whose section depends on which of its
// tools the agent offers (Config.AllowedTools may leave some out): the
// agent calls SystemPromptFor, with a test of whether a tool is offered,
// instead of SystemPrompt, so that the prompt describes only tools the
// model can call.
type ToolPrompter interface {
	SystemPrompter
	SystemPromptFor(offered func(tool string) bool) string
}

// PrivateValuer is implemented by middleware that keep state values of
// their own agent (the AGENTS.md it loaded, say): a subagent neither
// receives these values from the agent that calls it nor returns its own.
// See Runtime.IsPrivate and Agent.PrivateValues.
type PrivateValuer interface {
	PrivateValues() []string
}
