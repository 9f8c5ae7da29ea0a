package middleware

import (
	"context"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
)

// PromptCaching asks the model to cache the stable prefix of every request
// (tools and system prompt) and the conversation so far, so the next step
// reads them from the provider's cache instead of paying for them again.
// Models without prompt caching ignore the hints.
type PromptCaching struct {
	// TTL is the provider-specific cache lifetime ("5m", "1h"); empty means
	// the provider's default.
	TTL string
}

// NewPromptCaching returns the middleware.
func NewPromptCaching() *PromptCaching { return &PromptCaching{} }

// Name implements agent.Middleware.
func (*PromptCaching) Name() string { return "prompt_caching" }

// WrapModel implements agent.ModelWrapper.
func (p *PromptCaching) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	req.Cache = llm.CacheHints{Prefix: true, Tail: true, TTL: p.TTL}
	return next(ctx, req)
}
