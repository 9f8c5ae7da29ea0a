package providers_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/anthropic/anthropictest"
	"github.com/deepagents-go/deepagents/llm/openai/openaitest"
	"github.com/deepagents-go/deepagents/llm/providers"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestDefaultSpec(t *testing.T) {
	tests := []struct {
		env  []string
		want string
	}{
		{[]string{"ANTHROPIC_API_KEY", "a", "OPENAI_API_KEY", "o"}, "anthropic:claude-sonnet-4-5"},
		{[]string{"ANTHROPIC_AUTH_TOKEN", "t"}, "anthropic:claude-sonnet-4-5"},
		{[]string{"OPENAI_API_KEY", "o"}, "openai:gpt-4.1"},
		{[]string{"OPENAI_BASE_URL", "http://x/v1"}, ""},
		{nil, ""},
	}
	for _, tt := range tests {
		got, err := providers.DefaultSpec(env(tt.env...))
		if got != tt.want {
			t.Errorf("env %v: %q, want %q", tt.env, got, tt.want)
		}
		if tt.want == "" {
			if !errors.Is(err, providers.ErrNoModel) {
				t.Errorf("env %v: error %v", tt.env, err)
			}
			for _, s := range []string{"--model", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %s", err, s)
				}
			}
		} else if err != nil {
			t.Errorf("env %v: %v", tt.env, err)
		}
	}
}

func TestRegister(t *testing.T) {
	var r llm.Registry
	providers.Register(&r)
	got := strings.Join(r.Providers(), ",")
	if got != "anthropic,lmstudio,ollama,openai,vllm" {
		t.Errorf("providers %s", got)
	}
}

// TestEndToEnd builds both default models from specs and the environment
// alone, against fake servers, as the CLI does.
func TestEndToEnd(t *testing.T) {
	as := anthropictest.NewServer(anthropictest.Turn{Status: 429, RetryAfter: "0"}, anthropictest.Turn{Text: "from claude",
		Usage: anthropictest.Usage{InputTokens: 5, CacheReadInputTokens: 100, OutputTokens: 2}})
	defer as.Close()
	oa := openaitest.NewServer(openaitest.Turn{Status: 429, RetryAfter: "0"}, openaitest.Turn{Text: "from gpt",
		Usage: openaitest.Usage{PromptTokens: 105, CachedTokens: 100, CompletionTokens: 2}})
	defer oa.Close()
	getenv := env("ANTHROPIC_API_KEY", "a", "ANTHROPIC_BASE_URL", as.URL, "OPENAI_API_KEY", "o", "OPENAI_BASE_URL", oa.URL)

	var r llm.Registry
	providers.RegisterEnv(&r, getenv)
	want := llm.Usage{InputTokens: 105, CacheReadTokens: 100, OutputTokens: 2}
	for spec, text := range map[string]string{"anthropic:claude-sonnet-4-5": "from claude", "openai:gpt-4.1": "from gpt"} {
		m, err := r.New(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		res, err := llm.Generate(context.Background(), m, &llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if res.Message.Text() != text || res.Usage != want {
			t.Errorf("%s: %q %+v", spec, res.Message.Text(), res.Usage)
		}
	}
	if len(as.Requests()) != 2 || len(oa.Requests()) != 2 {
		t.Errorf("requests: %d anthropic, %d openai", len(as.Requests()), len(oa.Requests()))
	}
}

func TestMissingKeys(t *testing.T) {
	var r llm.Registry
	providers.RegisterEnv(&r, env())
	for spec, v := range map[string]string{"anthropic:claude-sonnet-4-5": "ANTHROPIC_API_KEY", "openai:gpt-4.1": "OPENAI_API_KEY"} {
		_, err := r.New(context.Background(), spec)
		if !errors.Is(err, llm.ErrMissingKey) || !strings.Contains(err.Error(), v) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", spec, err)
		}
	}
}

func ExampleDefaultSpec() {
	getenv := env("OPENAI_API_KEY", "sk-...")
	spec, err := providers.DefaultSpec(getenv)
	fmt.Println(spec, err)
	_, err = providers.DefaultSpec(env())
	fmt.Println(err)
	// Output:
	// openai:gpt-4.1 <nil>
	// no model chosen: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or choose one with --model (for example --model anthropic:claude-sonnet-4-5, --model openai:gpt-4.1 or --model ollama:qwen3)
}
