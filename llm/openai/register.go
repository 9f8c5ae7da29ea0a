package openai

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/deepagents-go/deepagents/llm"
)

// Environment variables read by the factories.
const (
	// EnvAPIKey holds the OpenAI API key.
	EnvAPIKey = "OPENAI_API_KEY"
	// EnvBaseURL replaces the OpenAI endpoint for "openai:MODEL" specs,
	// to reach a proxy or any OpenAI-compatible server.
	EnvBaseURL = "OPENAI_BASE_URL"
	// EnvCompatibleAPIKey holds the key sent to a server named in a spec
	// ("MODEL@URL") and to the local shortcuts (vllm, lmstudio, ollama).
	// OPENAI_API_KEY is never sent to such a server.
	EnvCompatibleAPIKey = "OPENAI_COMPATIBLE_API_KEY"
	// EnvOllamaHost is Ollama's own variable for its address
	// ("127.0.0.1:11434" or "http://host:11434").
	EnvOllamaHost = "OLLAMA_HOST"
	// EnvOllamaContextLength is Ollama's own variable for the context
	// length it runs models with; when set, it is the context window
	// "ollama:" models report.
	EnvOllamaContextLength = "OLLAMA_CONTEXT_LENGTH"
)

// Base URLs of the local servers the shortcuts reach.
const (
	OllamaBaseURL   = "http://localhost:11434/v1"
	VLLMBaseURL     = "http://localhost:8000/v1"
	LMStudioBaseURL = "http://localhost:1234/v1"
)

// FactoryOptions are the [Options] a factory starts from, plus how it
// reads the environment.
type FactoryOptions struct {
	Options
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
}

func (fo FactoryOptions) getenv(k string) string {
	if fo.Getenv != nil {
		return fo.Getenv(k)
	}
	return os.Getenv(k)
}

// SplitName splits a spec's model part "MODEL@URL" into the model and the
// server's base URL. Without "@http://" or "@https://" the URL is empty.
func SplitName(name string) (model, baseURL string) {
	for _, sep := range [...]string{"@http://", "@https://"} {
		if i := strings.LastIndex(name, sep); i >= 0 {
			return name[:i], name[i+1:]
		}
	}
	return name, ""
}

// Factory returns the factory of the "openai" provider. A spec's model
// part is a model name ("gpt-4.1"), optionally followed by @URL to name an
// OpenAI-compatible server ("llama3@http://gpu-box:8000/v1").
//
// Without @URL the server is fo.BaseURL, else OPENAI_BASE_URL, else the
// OpenAI API, and the key fo.APIKey, else OPENAI_API_KEY (required by the
// OpenAI API only). With @URL the key is fo.APIKey, else
// OPENAI_COMPATIBLE_API_KEY, and may be empty.
func Factory(fo FactoryOptions) llm.Factory {
	return func(_ context.Context, name string) (llm.Model, error) {
		model, base := SplitName(name)
		o := fo.Options
		o.Provider = Provider
		if base != "" {
			o.BaseURL = base
			o.Compatible = true
			if o.APIKey == "" {
				o.APIKey = fo.getenv(EnvCompatibleAPIKey)
				o.KeyEnv = EnvCompatibleAPIKey
			}
		} else {
			if o.BaseURL == "" {
				o.BaseURL = fo.getenv(EnvBaseURL)
			}
			if o.APIKey == "" {
				o.APIKey = fo.getenv(EnvAPIKey)
				o.KeyEnv = EnvAPIKey
			}
		}
		return newModel(model, o)
	}
}

// LocalFactory returns the factory of a shortcut to an OpenAI-compatible
// server at defaultURL, registered as provider: "vllm:MODEL" reaches
// http://localhost:8000/v1. "MODEL@URL" names another server. The key is
// fo.APIKey, else OPENAI_COMPATIBLE_API_KEY, and may be empty.
func LocalFactory(provider, defaultURL string, fo FactoryOptions) llm.Factory {
	return func(_ context.Context, name string) (llm.Model, error) {
		model, base := SplitName(name)
		o := fo.Options
		o.Provider = provider
		o.Compatible = true
		switch {
		case base != "":
			o.BaseURL = base
		case o.BaseURL == "":
			o.BaseURL = defaultURL
		}
		if o.APIKey == "" {
			o.APIKey = fo.getenv(EnvCompatibleAPIKey)
			o.KeyEnv = EnvCompatibleAPIKey
		}
		return newModel(model, o)
	}
}

// OllamaFactory returns the factory of the "ollama" provider: "ollama:qwen3"
// reaches Ollama's OpenAI-compatible endpoint at OLLAMA_HOST, or else
// http://localhost:11434/v1. No key is needed. The context window models
// report is OLLAMA_CONTEXT_LENGTH when set (Ollama truncates prompts to
// the length it runs a model with, whatever the model could take).
func OllamaFactory(fo FactoryOptions) llm.Factory {
	return func(ctx context.Context, name string) (llm.Model, error) {
		fo := fo
		if fo.BaseURL == "" {
			u, err := ollamaURL(fo.getenv(EnvOllamaHost))
			if err != nil {
				return nil, err
			}
			fo.BaseURL = u
		}
		if v := strings.TrimSpace(fo.getenv(EnvOllamaContextLength)); v != "" && fo.ContextWindow == 0 {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("ollama: %s=%q is not a positive number of tokens", EnvOllamaContextLength, v)
			}
			fo.ContextWindow = n
		}
		return LocalFactory("ollama", OllamaBaseURL, fo)(ctx, name)
	}
}

// ollamaURL turns an OLLAMA_HOST value into the base URL of Ollama's
// OpenAI-compatible API, reading it the way Ollama does: a bare host or
// host:port is http with port 11434 by default; an http:// or https:// URL
// defaults to port 80 or 443.
func ollamaURL(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return OllamaBaseURL, nil
	}
	scheme, hostport, explicit := strings.Cut(v, "://")
	port := "11434"
	switch {
	case !explicit:
		scheme, hostport = "http", v
	case scheme == "http":
		port = "80"
	case scheme == "https":
		port = "443"
	default:
		return "", fmt.Errorf("ollama: %s=%q is not a host or an http(s) URL", EnvOllamaHost, v)
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	} else {
		port = p
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		// Ollama listens on every interface; connect to this machine.
		host = "localhost"
	}
	path = strings.Trim(path, "/")
	if path == "" {
		path = "v1"
	} else if !strings.HasSuffix(path, "v1") {
		path += "/v1"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/" + path, nil
}

// Register makes the OpenAI API available in r as "openai", and the
// OpenAI-compatible local servers as "ollama", "vllm" and "lmstudio".
func Register(r *llm.Registry, fo FactoryOptions) {
	r.Register(Provider, Factory(fo))
	r.Register("ollama", OllamaFactory(fo))
	r.Register("vllm", LocalFactory("vllm", VLLMBaseURL, fo))
	r.Register("lmstudio", LocalFactory("lmstudio", LMStudioBaseURL, fo))
}
