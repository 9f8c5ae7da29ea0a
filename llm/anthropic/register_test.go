package anthropic_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/anthropic"
	"github.com/deepagents-go/deepagents/llm/anthropic/anthropictest"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestMissingKey(t *testing.T) {
	var r llm.Registry
	anthropic.Register(&r, anthropic.FactoryOptions{Getenv: env()})
	_, err := r.New(context.Background(), "anthropic:claude-sonnet-4-5")
	if !errors.Is(err, llm.ErrMissingKey) {
		t.Fatalf("error %v, want ErrMissingKey", err)
	}
	var mk *llm.MissingKeyError
	if !errors.As(err, &mk) || mk.EnvVar != "ANTHROPIC_API_KEY" || mk.Provider != "anthropic" {
		t.Errorf("error %#v", mk)
	}
	if !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("error %q does not name the variable", err)
	}
	oneLine(t, err)
}

func TestFactoryReadsEnvironment(t *testing.T) {
	srv := anthropictest.NewServer(anthropictest.Turn{Text: "a"}, anthropictest.Turn{Text: "b"})
	defer srv.Close()

	var r llm.Registry
	anthropic.Register(&r, anthropic.FactoryOptions{Getenv: env(
		"ANTHROPIC_API_KEY", "sk-env", "ANTHROPIC_BASE_URL", srv.URL)})
	m, err := r.New(context.Background(), "anthropic:claude-opus-4-6")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llm.Generate(context.Background(), m, userReq("hi")); err != nil {
		t.Fatal(err)
	}
	req := srv.Requests()[0]
	if req.Header.Get("X-Api-Key") != "sk-env" || req.Path != "/v1/messages" {
		t.Errorf("request %s with key %q", req.Path, req.Header.Get("X-Api-Key"))
	}
	if !strings.Contains(string(req.Body), `"model":"claude-opus-4-6"`) {
		t.Errorf("body %s", req.Body)
	}

	// ANTHROPIC_AUTH_TOKEN is the fallback, as a bearer token.
	var r2 llm.Registry
	anthropic.Register(&r2, anthropic.FactoryOptions{Getenv: env(
		"ANTHROPIC_AUTH_TOKEN", "tok", "ANTHROPIC_BASE_URL", srv.URL)})
	m, err = r2.New(context.Background(), "anthropic:claude-haiku-4-5")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llm.Generate(context.Background(), m, userReq("hi")); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[1].Header.Get("Authorization"); got != "Bearer tok" {
		t.Errorf("authorization %q", got)
	}
}

func TestNewValidates(t *testing.T) {
	for name, opts := range map[string]anthropic.Options{
		"bad base URL":    {APIKey: "k", BaseURL: "localhost:8080"},
		"negative budget": {APIKey: "k", ThinkingBudget: -1},
		"negative max":    {APIKey: "k", MaxTokens: -1},
	} {
		if _, err := anthropic.New("claude-sonnet-4-5", opts); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	m, err := anthropic.New("", anthropic.Options{APIKey: "k"})
	if err != nil || m.Name() != anthropic.DefaultModel {
		t.Errorf("empty name: %v %v", m, err)
	}
}

func TestInfo(t *testing.T) {
	tests := []struct {
		model  string
		window int
	}{
		{"claude-sonnet-4-5", 200_000},
		{"claude-sonnet-4-5-20250929", 200_000},
		{"claude-haiku-4-5", 200_000},
		{"claude-opus-4-1-20250805", 200_000},
		{"claude-sonnet-4-20250514", 200_000},
		{"claude-opus-4-6", 1_000_000},
		{"claude-sonnet-4-6", 1_000_000},
		{"claude-opus-5-5", 1_000_000},
		{"claude-haiku-5-5", 1_000_000},
		{"claude-3-5-haiku-latest", 200_000},
		{"claude-future-9", 200_000}, // unknown Claude: the floor of every Claude model
		{"my-proxy-alias", 0},        // not Claude at all: unknown
	}
	for _, tt := range tests {
		m, err := anthropic.New(tt.model, anthropic.Options{APIKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		info := llm.Describe(m)
		if info.ContextWindow != tt.window || info.Provider != "anthropic" || info.Name != tt.model || !info.PromptCaching {
			t.Errorf("%s: %+v, want window %d", tt.model, info, tt.window)
		}
	}
	m, _ := anthropic.New("claude-sonnet-4-5", anthropic.Options{APIKey: "k", ContextWindow: 1_000_000})
	if m.Info().ContextWindow != 1_000_000 {
		t.Errorf("override: %+v", m.Info())
	}
}

func TestCountTokens(t *testing.T) {
	srv := anthropictest.NewServer()
	defer srv.Close()
	m := newModel(t, srv.URL, anthropic.Options{})
	n, err := m.CountTokens(context.Background(), &llm.Request{System: "s", Messages: conversation(), Tools: testTools})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/messages/count_tokens" {
		t.Fatalf("requests %+v", reqs)
	}
	if want := len(reqs[0].Body)/4 + 1; n != want {
		t.Errorf("count %d, want %d", n, want)
	}
	body := reqs[0].Body
	for _, f := range []string{"messages", "system", "tools", "model"} {
		if len(field(t, body, f)) == 0 {
			t.Errorf("count_tokens body lacks %s: %s", f, body)
		}
	}
	if len(field(t, body, "max_tokens")) != 0 {
		t.Errorf("count_tokens body has max_tokens")
	}
}

// New reads the standard variables for what its options leave empty, as
// the official SDK does.
func TestNewReadsEnvironment(t *testing.T) {
	srv := anthropictest.NewServer(anthropictest.Turn{Text: "from the environment"})
	defer srv.Close()
	t.Setenv("ANTHROPIC_API_KEY", "sk-env")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	m, err := anthropic.New("claude-sonnet-4-5", anthropic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := llm.Generate(context.Background(), m, &llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
	if err != nil || res.Message.Text() != "from the environment" {
		t.Fatalf("%v %+v", err, res)
	}
	if got := srv.Requests()[0].Header.Get("X-Api-Key"); got != "sk-env" {
		t.Errorf("x-api-key %q", got)
	}
	t.Setenv("ANTHROPIC_API_KEY", "")
	if _, err := anthropic.New("claude-sonnet-4-5", anthropic.Options{}); !errors.Is(err, llm.ErrMissingKey) {
		t.Errorf("without a key: %v", err)
	}
}
