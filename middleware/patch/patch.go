// Package patch repairs a thread's conversation before a run: tool calls
// left without a result get one, so the provider accepts the conversation.
package patch

import (
	"context"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
)

// CancelledToolCall is the result given to a tool call that never got one.
const CancelledToolCall = "Tool call was cancelled or did not complete."

// Config configures the middleware; it has nothing to set yet.
type Config struct{}

// Middleware repairs the conversation before a run: an assistant tool call
// without a result (left by a crash, a cancelled run, or a new message sent
// to a thread waiting for approval) gets the result CancelledToolCall,
// placed right after the results of its message. Providers reject a
// conversation with unanswered calls, so without this a thread could not
// continue.
type Middleware struct{}

// New returns the middleware. It never fails; the error keeps the
// built-in middleware's constructors alike.
func New(Config) (*Middleware, error) { return &Middleware{}, nil }

// Name implements agent.Middleware.
func (*Middleware) Name() string { return "patch_tool_calls" }

// BeforeAgent implements agent.BeforeAgentHook.
func (*Middleware) BeforeAgent(_ context.Context, rt *agent.Runtime) error {
	msgs := rt.Messages()
	have := make(map[string]bool)
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			have[m.ToolCallID] = true
		}
	}
	// On resume, the calls of the last assistant message are about to run.
	skip := -1
	if rt.Resuming() {
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == llm.RoleAssistant {
				skip = i
				break
			}
		}
	}
	// keep is the number of leading messages left alone; tail is the
	// rewritten rest, built only once a patch is needed.
	keep := -1
	var tail []llm.Message
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if keep >= 0 {
			tail = append(tail, m)
		}
		if m.Role != llm.RoleAssistant || i == skip {
			continue
		}
		var missing []llm.ToolCall
		for _, c := range m.ToolCalls {
			if !have[c.ID] {
				missing = append(missing, c)
			}
		}
		if len(missing) == 0 {
			continue
		}
		end := i + 1 // just past this message's results
		for end < len(msgs) && msgs[end].Role == llm.RoleTool {
			end++
		}
		if keep < 0 {
			keep = end
		} else {
			tail = append(tail, msgs[i+1:end]...)
		}
		for _, c := range missing {
			tail = append(tail, llm.ToolResult(c.ID, c.Name, CancelledToolCall, true))
			have[c.ID] = true
		}
		i = end - 1
	}
	if keep >= 0 {
		rt.RewriteMessages(keep, tail)
	}
	return nil
}
