package llm

import "context"

type agentKey struct{}

// WithAgent returns a context naming the agent on whose behalf a model is
// called: "main" for the top-level agent, a subagent's name, or
// "summarizer". Models normally ignore it; the scripted model in llmtest
// uses it to pick the turn that answers.
func WithAgent(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, agentKey{}, name)
}

// AgentFromContext returns the agent name set by [WithAgent], or "" if none.
func AgentFromContext(ctx context.Context) string {
	s, _ := ctx.Value(agentKey{}).(string)
	return s
}
