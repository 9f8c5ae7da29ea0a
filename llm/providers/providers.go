package providers

import (
	"errors"
	"os"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/anthropic"
	"github.com/deepagents-go/deepagents/llm/openai"
)

// Register registers all providers in r. Keys and base URLs are read from
// the process environment when a model is built.
func Register(r *llm.Registry) {
	RegisterEnv(r, os.Getenv)
}

// RegisterEnv is [Register] with the environment read through getenv
// (nil means os.Getenv), for tests and for callers that keep their
// configuration elsewhere.
func RegisterEnv(r *llm.Registry, getenv func(string) string) {
	if getenv == nil {
		getenv = os.Getenv
	}
	anthropic.Register(r, anthropic.FactoryOptions{Getenv: getenv})
	openai.Register(r, openai.FactoryOptions{Getenv: getenv})
}

// ErrNoModel is returned by [DefaultSpec] when the environment names no
// provider.
var ErrNoModel = errors.New("no model chosen: set ANTHROPIC_API_KEY or OPENAI_API_KEY, " +
	"or choose one with --model (for example --model anthropic:" + anthropic.DefaultModel +
	", --model openai:" + openai.DefaultModel + " or --model ollama:qwen3)")

// DefaultSpec returns the spec of the model to use when none was chosen:
// Anthropic's default model when ANTHROPIC_API_KEY (or
// ANTHROPIC_AUTH_TOKEN) is set, else OpenAI's when OPENAI_API_KEY is set,
// else [ErrNoModel], whose message says how to choose one.
func DefaultSpec(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	switch {
	case getenv(anthropic.EnvAPIKey) != "", getenv(anthropic.EnvAuthToken) != "":
		return anthropic.Provider + ":" + anthropic.DefaultModel, nil
	case getenv(openai.EnvAPIKey) != "":
		return openai.Provider + ":" + openai.DefaultModel, nil
	}
	return "", ErrNoModel
}
