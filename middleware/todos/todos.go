// Package todos is the planning middleware: the write_todos tool, which
// keeps the task's plan in the thread's state (the state value [Value], a
// list of [Todo]), and the system prompt section that explains planning.
// The plan is this package's: other packages read it through [Get], [Of]
// and [FromEvent].
package todos

import (
	"cmp"
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/tool"
)

// WriteTodosTool is the name of the planning tool.
const WriteTodosTool = "write_todos"

// Prompt is the default system prompt section.
const Prompt = `## Planning with write_todos

Keep a plan with write_todos for work of three or more steps or several things asked at once; skip it for a quick question or a one-step change.

- Write the plan as soon as you understand the task.
- Mark an item in_progress before you start it and completed as soon as it is done; do not batch completions.
- Keep exactly one item in_progress while work remains, unless items truly run in parallel.
- When you learn something that changes the plan, add, remove or rewrite items.`

// ToolDescription is the default description of write_todos.
const ToolDescription = `Replace the task plan with a new list of todos.

Each todo has content (what to do, as a short imperative) and status: pending, in_progress or completed. The list you send replaces the previous one entirely, so send every item each time, not only the changed ones. Use it for multi-step work to track progress and show the user where you are; do not use it for trivial one-step tasks. Call it at most once per turn.`

// parallelTodosError answers every write_todos call of a turn that made
// more than one, in the references' words.
const parallelTodosError = "Error: The `write_todos` tool should never be called multiple times in parallel. Please call it only once per model invocation to update the todo list."

// Config configures the todos middleware. Its zero value is the default.
type Config struct {
	// Prompt replaces the default system prompt section (Prompt) when set.
	Prompt string
	// ToolDescription replaces the default description of write_todos
	// (ToolDescription) when set.
	ToolDescription string
}

// Middleware is the planning middleware: it adds write_todos, keeps the
// list in the thread's state and explains planning in the system prompt.
type Middleware struct {
	prompt string
	tool   tool.Tool
}

type todosInput struct {
	Todos []Todo `json:"todos" jsonschema:"the complete new todo list"`
}

// New returns the todos middleware. It fails only if the tool's schema
// cannot be built.
func New(cfg Config) (*Middleware, error) {
	desc := cmp.Or(cfg.ToolDescription, ToolDescription)
	t, err := tool.New(WriteTodosTool, desc, writeTodos, tool.WithTraits(tool.Traits{ReadOnly: true}), tool.WithSchemaFunc(func(s *jsonschema.Schema) {
		list := s.Properties["todos"]
		list.Types, list.Type = nil, "array"
		item := list.Items
		item.Properties["content"].Description = "what to do"
		// Other fields (older Claude Code sends id and priority) are
		// dropped, as the references' validation drops them.
		item.AdditionalProperties = nil
		item.Properties["activeForm"].Description = "optional: the item as it reads while in progress, such as \"Running the tests\""
		item.Properties["status"].Enum = []any{string(Pending), string(InProgress), string(Completed)}
	}))
	if err != nil {
		return nil, fmt.Errorf("todos: %w", err)
	}
	return &Middleware{prompt: cmp.Or(cfg.Prompt, Prompt), tool: t}, nil
}

// Name implements agent.Middleware.
func (t *Middleware) Name() string { return "todos" }

// SystemPrompt implements agent.SystemPrompter.
func (t *Middleware) SystemPrompt() string { return t.prompt }

// SystemPromptFor implements agent.ToolPrompter: nothing when write_todos
// is not offered.
func (t *Middleware) SystemPromptFor(offered func(string) bool) string {
	if !offered(WriteTodosTool) {
		return ""
	}
	return t.SystemPrompt()
}

// Tools implements agent.ToolProvider.
func (t *Middleware) Tools() []tool.Tool { return []tool.Tool{t.tool} }

func writeTodos(ctx context.Context, in todosInput) (string, error) {
	rt := agent.RuntimeFromContext(ctx)
	if rt == nil {
		return "", fmt.Errorf("Error: %s can only run inside an agent run", WriteTodosTool)
	}
	todos := in.Todos
	if todos == nil {
		todos = []Todo{}
	}
	Set(rt, todos)
	return "Updated todo list to " + todosRepr(todos), nil
}

// PrivateValues implements agent.PrivateValuer: each agent keeps its own
// plan; a subagent neither receives its caller's nor returns its own.
func (*Middleware) PrivateValues() []string { return []string{Value} }

// WrapTool implements agent.ToolWrapper: when a turn calls write_todos more
// than once, every one of those calls is refused and the list is left as it
// was, since there is no telling which list the model meant.
func (t *Middleware) WrapTool(ctx context.Context, req *agent.ToolRequest, next agent.ToolHandler) (agent.ToolResult, error) {
	if req.Call.Name != WriteTodosTool {
		return next(ctx, req)
	}
	n := 0
	for _, c := range req.Turn {
		if c.Name == WriteTodosTool {
			n++
		}
	}
	if n > 1 {
		return agent.ToolResult{
			Content: parallelTodosError,
			IsError: true,
		}, nil
	}
	return next(ctx, req)
}
