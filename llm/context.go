package llm

import (
	"context"
	"time"
)

type agentKey struct{}

// WithAgent returns a context naming the agent on whose behalf a model is
// called: "main" for the top-level agent, a subagent's name, or
// "summarizer". Models normally ignore it; the scripted model in replay
// uses it to pick the turn that answers.
func WithAgent(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, agentKey{}, name)
}

// AgentFromContext returns the agent name set by [WithAgent], or "" if none.
func AgentFromContext(ctx context.Context) string {
	s, _ := ctx.Value(agentKey{}).(string)
	return s
}

// Retry describes a failed attempt at a model call that the provider is
// about to make again.
type Retry struct {
	// Provider names the provider ("anthropic", "openai", ...).
	Provider string
	// Attempt is the number of the attempt that failed, from 1; the next
	// is Attempt+1 of at most MaxAttempts.
	Attempt, MaxAttempts int
	// Wait is how long the provider waits before the next attempt, when
	// known (a retry-after header, its own backoff); zero when not.
	Wait time.Duration
	// Err is why the attempt failed.
	Err error
}

type retryKey struct{}

// WithRetryNotify returns a context whose model calls report each retry to
// fn before waiting for it, so that a run can show them (the agent turns
// them into notice events). fn must be safe for concurrent use.
func WithRetryNotify(ctx context.Context, fn func(Retry)) context.Context {
	return context.WithValue(ctx, retryKey{}, fn)
}

// NotifyRetry reports r to the function set by [WithRetryNotify], if any.
// Providers call it for every retry they make.
func NotifyRetry(ctx context.Context, r Retry) {
	if fn, ok := ctx.Value(retryKey{}).(func(Retry)); ok && fn != nil {
		fn(r)
	}
}
