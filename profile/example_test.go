package profile_test

import (
	"fmt"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/profile"
)

// The profile a model gets, and one changed before it is given to
// deepagents.Config.Profile: GPT's, with OpenAI's 24-hour cache retention.
func ExampleFor() {
	p := profile.For(llm.Info{Provider: "openai", Name: "gpt-4.1"})
	fmt.Println(p.Name, p.Cache.Key)

	p.Cache.TTL = "24h"
	fmt.Println(p.Cache.TTL)

	local := profile.For(llm.Info{Provider: "ollama", Name: "qwen3"})
	fmt.Println(local.Name, local.Cache.Key, local.Cache.Breakpoints)
	// Output:
	// gpt true
	// 24h
	// open false false
}
