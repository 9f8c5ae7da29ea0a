package middleware

import (
	"context"
	"fmt"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
)

// ToolFilter limits an agent to the named tools: the model is offered only
// those, and a call of any other is refused.
type ToolFilter struct {
	allowed map[string]bool
}

// NewToolFilter returns a filter allowing the given tool names.
func NewToolFilter(names ...string) *ToolFilter {
	f := &ToolFilter{allowed: make(map[string]bool, len(names))}
	for _, n := range names {
		f.allowed[n] = true
	}
	return f
}

// Name implements agent.Middleware.
func (*ToolFilter) Name() string { return "tool_filter" }

// WrapModel implements agent.ModelWrapper.
func (f *ToolFilter) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	kept := make([]llm.ToolSpec, 0, len(req.Tools))
	for _, t := range req.Tools {
		if f.allowed[t.Name] {
			kept = append(kept, t)
		}
	}
	req.Tools = kept
	return next(ctx, req)
}

// WrapTool implements agent.ToolWrapper.
func (f *ToolFilter) WrapTool(ctx context.Context, req *agent.ToolRequest, next agent.ToolHandler) (agent.ToolResult, error) {
	if !f.allowed[req.Call.Name] {
		return agent.ToolResult{Content: fmt.Sprintf("Error: tool %q is not available to this agent", req.Call.Name), IsError: true}, nil
	}
	return next(ctx, req)
}
