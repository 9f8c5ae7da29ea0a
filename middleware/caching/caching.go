// Package caching marks every model request for the provider's prompt
// cache (the prompt_caching middleware), as the agent's profile (package
// profile) says: with breakpoints for providers that cache at explicit
// marks (Anthropic), with a routing key for providers that cache prefixes
// automatically and route requests by a key (OpenAI).
package caching

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/profile"
)

// Config says how requests are marked: the agent's profile's caching
// (profile.Cache: breakpoints, their lifetime, a key per thread), which
// deepagents.New fills from the profile. A zero Cache marks nothing.
type Config struct {
	Cache profile.Cache
}

// Middleware marks every request of a run for the provider's prompt
// cache. Models without prompt caching ignore the marks.
type Middleware struct {
	cfg profile.Cache
}

// New returns the middleware. It fails on a TTL that breakpoints do not
// take: every request would fail.
func New(cfg Config) (*Middleware, error) {
	if err := cfg.Cache.Check(); err != nil {
		return nil, fmt.Errorf("caching: cache TTL %w", err)
	}
	return &Middleware{cfg: cfg.Cache}, nil
}

// Name implements agent.Middleware.
func (*Middleware) Name() string { return "prompt_caching" }

// keyInContext is the context key of the cache key of the outermost run:
// a subagent, which runs on a thread of its own inside its parent's run,
// sends its parent's key.
type keyInContext struct{}

// WrapRun implements agent.RunWrapper: with Key, the run's context carries
// the key of its thread, unless an enclosing run's is there already.
func (p *Middleware) WrapRun(ctx context.Context, req *agent.RunRequest, next agent.RunHandler) (*agent.Result, error) {
	if p.cfg.Key && ctx.Value(keyInContext{}) == nil {
		ctx = context.WithValue(ctx, keyInContext{}, Key(req.ThreadID))
	}
	return next(ctx, req)
}

// WrapModel implements agent.ModelWrapper.
func (p *Middleware) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	req.Cache = llm.CacheHints{Prefix: p.cfg.Breakpoints, Tail: p.cfg.Breakpoints, TTL: p.cfg.TTL}
	if p.cfg.Key {
		req.Cache.Key, _ = ctx.Value(keyInContext{}).(string)
	}
	return next(ctx, req)
}

// Key is the cache key of a thread's requests: the same for every
// request of the thread (its subagents' included, whose runs are nested in
// its own), different between threads, and short (OpenAI takes at most 64 characters). It hashes the
// thread id, which may be any string a caller chose. A run without a
// thread gets no key.
func Key(threadID string) string {
	if threadID == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(threadID))
	return "deepagents-" + hex.EncodeToString(sum[:16])
}
