// Package caching marks every model request for the provider's prompt
// cache (the prompt_caching middleware).
package caching

import (
	"context"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
)

// Config configures the middleware. Its zero value is the default.
type Config struct {
	// TTL is the provider-specific cache lifetime ("5m", "1h"); empty means
	// the provider's default.
	TTL string
}

// Middleware asks the model to cache the stable prefix of every request
// (tools and system prompt) and the conversation so far, so the next step
// reads them from the provider's cache instead of paying for them again.
// Models without prompt caching ignore the hints.
type Middleware struct {
	ttl string
}

// New returns the middleware. It never fails; the error keeps the
// built-in middleware's constructors alike.
func New(cfg Config) (*Middleware, error) { return &Middleware{ttl: cfg.TTL}, nil }

// Name implements agent.Middleware.
func (*Middleware) Name() string { return "prompt_caching" }

// WrapModel implements agent.ModelWrapper.
func (p *Middleware) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	req.Cache = llm.CacheHints{Prefix: true, Tail: true, TTL: p.ttl}
	return next(ctx, req)
}
