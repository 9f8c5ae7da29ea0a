package deepagents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/openai"
	"github.com/deepagents-go/deepagents/llm/openai/openaitest"
	"github.com/deepagents-go/deepagents/profile"
)

// Profiles: an OpenAI model gets the gpt profile, which sends a cache key
// per thread; here it is changed to ask for OpenAI's 24-hour cache
// retention too. The stand-in of OpenAI's API shows what was sent.
func ExampleNew_profile() {
	srv := openaitest.NewServer(openaitest.Turn{Text: "Hello."})
	defer srv.Close()
	model, err := openai.New("gpt-4.1", openai.Options{APIKey: "test", BaseURL: srv.URL})
	if err != nil {
		log.Fatal(err)
	}

	p := profile.For(llm.Describe(model))
	p.Cache.TTL = "24h"
	a, err := deepagents.New(deepagents.Config{Model: model, Profile: &p})
	if err != nil {
		log.Fatal(err)
	}
	in := agent.Input{ThreadID: "greetings", Messages: []llm.Message{llm.UserText("Say hello.")}}
	if _, err := a.Invoke(context.Background(), in); err != nil {
		log.Fatal(err)
	}

	var sent struct {
		Key       string `json:"prompt_cache_key"`
		Retention string `json:"prompt_cache_retention"`
	}
	if err := json.Unmarshal(srv.Bodies()[0], &sent); err != nil {
		log.Fatal(err)
	}
	fmt.Println("profile:", p.Name)
	fmt.Println("prompt_cache_key:", sent.Key)
	fmt.Println("prompt_cache_retention:", sent.Retention)
	// Output:
	// profile: gpt
	// prompt_cache_key: deepagents-7dd4f2f077e449b47215359e8020c0b6
	// prompt_cache_retention: 24h
}
