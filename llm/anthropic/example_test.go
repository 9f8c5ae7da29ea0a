package anthropic_test

import (
	"context"
	"fmt"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/anthropic"
	"github.com/deepagents-go/deepagents/llm/anthropic/anthropictest"
)

// Example streams an answer from a Claude model. A fake server stands in
// for the API here; with a real key, leave BaseURL empty (or set
// ANTHROPIC_BASE_URL) and let Register read ANTHROPIC_API_KEY.
func Example() {
	srv := anthropictest.NewServer(anthropictest.Turn{
		Text:  "Hello from Claude.",
		Usage: anthropictest.Usage{InputTokens: 12, CacheReadInputTokens: 2000, OutputTokens: 5},
	})
	defer srv.Close()

	var r llm.Registry
	anthropic.Register(&r, anthropic.FactoryOptions{Options: anthropic.Options{APIKey: "test", BaseURL: srv.URL}})
	ctx := context.Background()
	m, err := r.New(ctx, "anthropic:claude-sonnet-4-5")
	if err != nil {
		fmt.Println(err)
		return
	}
	req := &llm.Request{
		System:   "You are terse.",
		Messages: []llm.Message{llm.UserText("Say hello.")},
		Cache:    llm.CacheHints{Prefix: true, Tail: true},
	}
	for c, err := range m.Stream(ctx, req) {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch c.Type {
		case llm.ChunkText:
			fmt.Print(c.Text)
		case llm.ChunkDone:
			u := c.Response.Usage
			fmt.Printf("\ninput %d (cached %d), output %d\n", u.InputTokens, u.CacheReadTokens, u.OutputTokens)
		}
	}
	// Output:
	// Hello from Claude.
	// input 2012 (cached 2000), output 5
}
