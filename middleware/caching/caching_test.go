package caching_test

import (
	"context"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/caching"
	"github.com/deepagents-go/deepagents/profile"
)

// marks runs one model call of a run on thread through the middleware,
// inside ctx, and returns the cache hints the model was given.
func marks(t *testing.T, m *caching.Middleware, ctx context.Context, thread string) (llm.CacheHints, context.Context) {
	t.Helper()
	var got llm.CacheHints
	var inner context.Context
	_, err := m.WrapRun(ctx, &agent.RunRequest{ThreadID: thread}, func(ctx context.Context, _ *agent.RunRequest) (*agent.Result, error) {
		inner = ctx
		_, err := m.WrapModel(ctx, &agent.ModelRequest{}, func(_ context.Context, req *agent.ModelRequest) (*llm.Response, error) {
			got = req.Cache
			return &llm.Response{}, nil
		})
		return nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, inner
}

func TestMarks(t *testing.T) {
	tests := []struct {
		name  string
		cache profile.Cache
		want  llm.CacheHints
	}{
		{"nothing", profile.Cache{}, llm.CacheHints{}},
		{"breakpoints", profile.Cache{Breakpoints: true, TTL: "1h"}, llm.CacheHints{Prefix: true, Tail: true, TTL: "1h"}},
		{"key", profile.Cache{Key: true, TTL: "24h"}, llm.CacheHints{TTL: "24h", Key: caching.Key("t1")}},
	}
	for _, tt := range tests {
		m, err := caching.New(caching.Config{Cache: tt.cache})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := marks(t, m, context.Background(), "t1"); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestKeyOfTheOutermostRun: a run nested in another (a subagent's, on a
// thread of its own) sends the outer run's key; a run without a thread
// sends none; keys are short and differ between threads.
func TestKeyOfTheOutermostRun(t *testing.T) {
	m, _ := caching.New(caching.Config{Cache: profile.Cache{Key: true}})
	outer, ctx := marks(t, m, context.Background(), "parent")
	nested, _ := marks(t, m, ctx, "parent/call_1")
	if outer.Key == "" || nested.Key != outer.Key {
		t.Errorf("outer key %q, nested %q: want the same", outer.Key, nested.Key)
	}
	if other, _ := marks(t, m, context.Background(), "other"); other.Key == outer.Key {
		t.Error("two threads share a key")
	}
	if k := caching.Key(strings.Repeat("x", 10000)); len(k) > 64 {
		t.Errorf("key of %d characters; OpenAI takes 64", len(k))
	}
	if caching.Key("") != "" {
		t.Error("a run without a thread has a key")
	}
}

func TestTTLThatBreakpointsDoNotTake(t *testing.T) {
	if _, err := caching.New(caching.Config{Cache: profile.Cache{Breakpoints: true, TTL: "24h"}}); err == nil {
		t.Error("breakpoints with a 24h TTL accepted: every Anthropic request would fail")
	}
	if _, err := caching.New(caching.Config{Cache: profile.Cache{Key: true, TTL: "24h"}}); err != nil {
		t.Errorf("a key with OpenAI's 24h: %v", err)
	}
}
