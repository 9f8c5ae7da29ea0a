package anthropic

import (
	"context"
	"os"

	"github.com/deepagents-go/deepagents/llm"
)

// FactoryOptions are the [Options] a factory starts from, plus how it
// reads the environment.
type FactoryOptions struct {
	Options
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
}

// Factory returns an [llm.Factory] that builds Claude models; the spec's
// model part names the model ("claude-sonnet-4-5" in
// "anthropic:claude-sonnet-4-5"). Empty fields of fo.Options are read from
// the environment when a model is built: the key from ANTHROPIC_API_KEY
// (or a bearer token from ANTHROPIC_AUTH_TOKEN) and the base URL from
// ANTHROPIC_BASE_URL. A missing key is an [*llm.MissingKeyError] naming
// ANTHROPIC_API_KEY.
func Factory(fo FactoryOptions) llm.Factory {
	getenv := fo.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return func(_ context.Context, name string) (llm.Model, error) {
		return newModel(name, withEnvironment(fo.Options, getenv))
	}
}

// Register makes the provider available in r as "anthropic".
func Register(r *llm.Registry, fo FactoryOptions) {
	r.Register(Provider, Factory(fo))
}
