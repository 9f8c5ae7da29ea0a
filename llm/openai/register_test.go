package openai_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/openai"
	"github.com/deepagents-go/deepagents/llm/openai/openaitest"
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
	openai.Register(&r, openai.FactoryOptions{Getenv: env()})
	_, err := r.New(context.Background(), "openai:gpt-4.1")
	var mk *llm.MissingKeyError
	if !errors.Is(err, llm.ErrMissingKey) || !errors.As(err, &mk) || mk.EnvVar != "OPENAI_API_KEY" {
		t.Fatalf("error %v", err)
	}
	if !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("error %q", err)
	}
	oneLine(t, err)
}

// registered builds a model from a spec with the given environment and
// runs one request; it returns the model and the request the server got.
func registered(t *testing.T, spec string, getenv func(string) string, srv *openaitest.Server) (llm.Model, openaitest.Request) {
	t.Helper()
	var r llm.Registry
	openai.Register(&r, openai.FactoryOptions{Getenv: getenv})
	m, err := r.New(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llm.Generate(context.Background(), m, userReq("hi")); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	return m, reqs[len(reqs)-1]
}

func TestSpecs(t *testing.T) {
	srv := openaitest.NewServer()
	defer srv.Close()
	host := strings.TrimPrefix(strings.TrimSuffix(srv.URL, "/v1"), "http://")
	tests := []struct {
		name      string
		spec      string
		env       []string
		provider  string
		model     string
		wantKey   string
		wantModel string
	}{
		{"OPENAI_BASE_URL", "openai:gpt-4.1", []string{"OPENAI_API_KEY", "sk-a", "OPENAI_BASE_URL", srv.URL}, "openai", "gpt-4.1", "Bearer sk-a", "gpt-4.1"},
		{"compatible server without a key", "openai:llama3", []string{"OPENAI_BASE_URL", srv.URL}, "openai", "llama3", "", "llama3"},
		{"server in the spec", "openai:qwen2.5-coder@" + srv.URL, []string{"OPENAI_API_KEY", "sk-secret", "OPENAI_COMPATIBLE_API_KEY", "local-key"}, "openai", "qwen2.5-coder", "Bearer local-key", "qwen2.5-coder"},
		{"server in the spec, no key", "openai:m@" + srv.URL, []string{"OPENAI_API_KEY", "sk-secret"}, "openai", "m", "", "m"},
		{"ollama via OLLAMA_HOST", "ollama:qwen3:8b", []string{"OLLAMA_HOST", host, "OPENAI_API_KEY", "sk-secret"}, "ollama", "qwen3:8b", "", "qwen3:8b"},
		{"ollama with a URL", "ollama:qwen3@" + srv.URL, nil, "ollama", "qwen3", "", "qwen3"},
		{"vllm with a URL and key", "vllm:meta-llama/Llama-3.1-8B-Instruct@" + srv.URL, []string{"OPENAI_COMPATIBLE_API_KEY", "vk"}, "vllm", "meta-llama/Llama-3.1-8B-Instruct", "Bearer vk", "meta-llama/Llama-3.1-8B-Instruct"},
		{"lmstudio with a URL", "lmstudio:local-model@" + srv.URL, nil, "lmstudio", "local-model", "", "local-model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.Add(openaitest.Turn{Text: "ok"})
			m, req := registered(t, tt.spec, env(tt.env...), srv)
			info := llm.Describe(m)
			if info.Provider != tt.provider || info.Name != tt.model {
				t.Errorf("info %+v", info)
			}
			if got := req.Header.Get("Authorization"); got != tt.wantKey {
				t.Errorf("authorization %q, want %q", got, tt.wantKey)
			}
			if req.Path != "/v1/chat/completions" {
				t.Errorf("path %s", req.Path)
			}
			if got := str(t, field(t, req.Body, "model")); got != tt.wantModel {
				t.Errorf("model %q", got)
			}
		})
	}
}

func TestSplitName(t *testing.T) {
	tests := []struct{ in, model, url string }{
		{"gpt-4.1", "gpt-4.1", ""},
		{"qwen3:8b", "qwen3:8b", ""},
		{"llama@http://h:8000/v1", "llama", "http://h:8000/v1"},
		{"a@b@https://h/v1", "a@b", "https://h/v1"},
		{"name@notaurl", "name@notaurl", ""},
	}
	for _, tt := range tests {
		m, u := openai.SplitName(tt.in)
		if m != tt.model || u != tt.url {
			t.Errorf("SplitName(%q) = %q, %q", tt.in, m, u)
		}
	}
}

func TestOllamaDefaults(t *testing.T) {
	// Without OLLAMA_HOST the model points at localhost:11434/v1; nothing
	// listens there in tests, so only the model's identity is checked.
	var r llm.Registry
	openai.Register(&r, openai.FactoryOptions{Getenv: env()})
	for _, spec := range []string{"ollama:qwen3", "vllm:m", "lmstudio:m"} {
		m, err := r.New(context.Background(), spec)
		if err != nil {
			t.Fatalf("%s: %v (no key is needed)", spec, err)
		}
		if info := llm.Describe(m); info.Provider != strings.Split(spec, ":")[0] || info.ContextWindow != 0 {
			t.Errorf("%s: %+v", spec, info)
		}
	}
	m, err := r.New(context.Background(), "ollama:gpt-oss:20b")
	if err != nil || llm.Describe(m).ContextWindow != 131_072 {
		t.Errorf("gpt-oss on ollama: %v %+v", err, llm.Describe(m))
	}
	var withCtx llm.Registry
	openai.Register(&withCtx, openai.FactoryOptions{Getenv: env("OLLAMA_CONTEXT_LENGTH", "32768")})
	if m, err := withCtx.New(context.Background(), "ollama:qwen3"); err != nil || llm.Describe(m).ContextWindow != 32768 {
		t.Errorf("OLLAMA_CONTEXT_LENGTH: %v", err)
	}
	var badCtx llm.Registry
	openai.Register(&badCtx, openai.FactoryOptions{Getenv: env("OLLAMA_CONTEXT_LENGTH", "lots")})
	if _, err := badCtx.New(context.Background(), "ollama:qwen3"); err == nil || !strings.Contains(err.Error(), "OLLAMA_CONTEXT_LENGTH") {
		t.Errorf("bad OLLAMA_CONTEXT_LENGTH: %v", err)
	}
	var bad llm.Registry
	openai.Register(&bad, openai.FactoryOptions{Getenv: env("OLLAMA_HOST", "ftp://x")})
	if _, err := bad.New(context.Background(), "ollama:x"); err == nil || !strings.Contains(err.Error(), "OLLAMA_HOST") {
		t.Errorf("bad OLLAMA_HOST: %v", err)
	}
}

func TestInfo(t *testing.T) {
	for model, want := range map[string]int{
		"gpt-4.1":            1_047_576,
		"gpt-4.1-mini":       1_047_576,
		"gpt-4o":             128_000,
		"gpt-4o-mini":        128_000,
		"o3":                 200_000,
		"o4-mini":            200_000,
		"o1-mini":            128_000,
		"gpt-5":              272_000,
		"gpt-5-mini":         272_000,
		"gpt-5.5":            1_050_000,
		"gpt-3.5-turbo":      16_385,
		"gpt-4":              8_192,
		"some-local-model":   0,
		"gpt-5-chat-latest":  128_000,
		"gpt-4-turbo-2024-x": 128_000,
	} {
		m, err := openai.New(model, openai.Options{APIKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		if info := m.Info(); info.ContextWindow != want || info.Provider != "openai" || info.PromptCaching {
			t.Errorf("%s: %+v, want window %d", model, info, want)
		}
	}
	m, _ := openai.New("x", openai.Options{BaseURL: "http://localhost:1/v1", ContextWindow: 32_768})
	if m.Info().ContextWindow != 32_768 {
		t.Errorf("override %+v", m.Info())
	}
}

func TestNewValidates(t *testing.T) {
	for name, opts := range map[string]openai.Options{
		"relative base URL": {APIKey: "k", BaseURL: "localhost:11434/v1"},
		"ftp base URL":      {APIKey: "k", BaseURL: "ftp://host/v1"},
		"negative max":      {APIKey: "k", MaxTokens: -1},
	} {
		if _, err := openai.New("m", opts); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := openai.New("", openai.Options{APIKey: "k"}); err == nil {
		t.Error("empty model name accepted")
	}
}

// New reads OPENAI_API_KEY and OPENAI_BASE_URL for the OpenAI API, as the
// official SDK does, and never for another provider.
func TestNewReadsEnvironment(t *testing.T) {
	srv := openaitest.NewServer(openaitest.Turn{Text: "from the environment"}, openaitest.Turn{Text: "ollama"})
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-env")
	t.Setenv("OPENAI_BASE_URL", srv.URL)
	m, err := openai.New("gpt-4.1", openai.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := llm.Generate(context.Background(), m, &llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
	if err != nil || res.Message.Text() != "from the environment" {
		t.Fatalf("%v %+v", err, res)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer sk-env" {
		t.Errorf("authorization %q", got)
	}
	m, err = openai.New("qwen3", openai.Options{Provider: "ollama", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := llm.Generate(context.Background(), m, &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[1].Header.Get("Authorization"); got != "" {
		t.Errorf("the OpenAI key went to another provider: %q", got)
	}
}
