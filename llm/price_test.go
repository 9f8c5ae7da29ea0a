package llm

import (
	"math"
	"testing"
)

func TestPrice(t *testing.T) {
	for _, c := range []struct {
		spec  string
		extra map[string]Price
		u     Usage
		want  float64
		known bool
	}{
		{"anthropic:claude-sonnet-4-5", nil, Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}, 18, true},
		// Cache reads at their own price: 800k of 1M input read from the cache.
		{"anthropic:claude-sonnet-4-5", nil, Usage{InputTokens: 1_000_000, CacheReadTokens: 800_000}, 0.2*3 + 0.8*0.3, true},
		{"anthropic:claude-sonnet-4-5-20250929", nil, Usage{OutputTokens: 1_000_000}, 15, true},
		{"openai:gpt-4.1-mini", nil, Usage{InputTokens: 1_000_000}, 0.4, true},
		{"openai:gpt-4.1-mini-2025-04-14", nil, Usage{InputTokens: 1_000_000}, 0.4, true},
		{"ollama:qwen3", nil, Usage{InputTokens: 1_000_000}, 0, true},
		{"openai:llama3@http://gpu:8000/v1", nil, Usage{InputTokens: 1_000_000}, 0, true},
		{"openai:llama3@http://127.0.0.1:8000/v1", nil, Usage{InputTokens: 1_000_000}, 0, true},
		{"openai:llama3@http://192.168.1.20:8000/v1", nil, Usage{InputTokens: 1_000_000}, 0, true},
		{"openai:llama3@http://box.lan:8000/v1", nil, Usage{InputTokens: 1_000_000}, 0, true},
		// A hosted OpenAI-compatible API is not free: unknown unless given.
		{"openai:llama-3.3-70b@https://api.example.com/v1", nil, Usage{InputTokens: 1}, 0, false},
		{"openai:llama-3.3-70b@https://8.8.8.8/v1", nil, Usage{InputTokens: 1}, 0, false},
		{"openai:llama-3.3-70b@https://api.example.com/v1", map[string]Price{"openai:llama-3.3-70b@https://api.example.com/v1": {Input: 1}}, Usage{InputTokens: 1_000_000}, 1, true},
		{"openai:some-new-model", nil, Usage{InputTokens: 1}, 0, false},
		{"openai:some-new-model", map[string]Price{"openai:some-new-model": {Input: 1, Output: 2}}, Usage{InputTokens: 1_000_000, OutputTokens: 500_000}, 2, true},
		// A price the user gives wins over the list.
		{"openai:gpt-4.1", map[string]Price{"openai:gpt-4.1": {Input: 10}}, Usage{InputTokens: 1_000_000}, 10, true},
	} {
		p, ok := PriceOf(c.spec, c.extra)
		if ok != c.known {
			t.Errorf("%s: known %v", c.spec, ok)
			continue
		}
		if got := p.Cost(c.u); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s %+v: $%v, want $%v", c.spec, c.u, got, c.want)
		}
	}
}
