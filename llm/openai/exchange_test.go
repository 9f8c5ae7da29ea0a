package openai_test

import (
	"testing"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/internal/providertest"
	"github.com/deepagents-go/deepagents/llm/openai"
)

// TestExchanges replays the exchanges in testdata/exchanges: the whole
// request body the provider sends is pinned, and the response body on disk
// must become the response pinned beside it.
func TestExchanges(t *testing.T) {
	providertest.RunExchanges(t, "testdata/exchanges", func(t *testing.T, baseURL string) llm.Model {
		return newModel(t, baseURL, openai.Options{})
	}, []providertest.Exchange{
		{Name: "text", Request: &llm.Request{System: "You are helpful.", Messages: []llm.Message{llm.UserText("Say hello.")}}},
		{Name: "tools", Request: &llm.Request{
			System:    "You are a coding agent.",
			Messages:  conversation(),
			Tools:     testTools,
			Cache:     llm.CacheHints{Prefix: true, Tail: true},
			MaxTokens: 1024,
		}},
	})
}
