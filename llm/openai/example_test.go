package openai_test

import (
	"context"
	"fmt"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/openai"
	"github.com/deepagents-go/deepagents/llm/openai/openaitest"
)

// Example reaches an OpenAI-compatible server named in the spec, the way
// "ollama:qwen3" or "openai:MODEL@http://host:8000/v1" do. A fake server
// stands in for it here.
func Example() {
	srv := openaitest.NewServer(openaitest.Turn{
		Text:  "Hello from a local model.",
		Usage: openaitest.Usage{PromptTokens: 40, CachedTokens: 32, CompletionTokens: 6},
	})
	defer srv.Close()

	var r llm.Registry
	openai.Register(&r, openai.FactoryOptions{})
	ctx := context.Background()
	m, err := r.New(ctx, "openai:qwen3@"+srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := llm.Generate(ctx, m, &llm.Request{Messages: []llm.Message{llm.UserText("Say hello.")}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Message.Text())
	fmt.Printf("input %d (cached %d), output %d\n", res.Usage.InputTokens, res.Usage.CacheReadTokens, res.Usage.OutputTokens)
	// Output:
	// Hello from a local model.
	// input 40 (cached 32), output 6
}
