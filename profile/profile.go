package profile

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/deepagents-go/deepagents/llm"
)

// Profile is how the harness addresses one family of models.
type Profile struct {
	// Name names the profile: a built-in's name, or one of your own.
	Name string `json:"name" yaml:"name"`
	// Prompt is a section added to the system prompt of the agent and of
	// its subagents, after the base prompt; empty adds nothing.
	Prompt string `json:"prompt,omitempty" yaml:"prompt"`
	// ToolDescriptions replace the descriptions of the tools they name.
	// A name the agent has no tool for is ignored, so one profile serves
	// agents with and without execute, say.
	ToolDescriptions map[string]string `json:"tool_descriptions,omitempty" yaml:"tool_descriptions"`
	// Cache says how requests are marked for the provider's prompt cache.
	Cache Cache `json:"cache" yaml:"cache"`
}

// Cache says how requests are marked for the provider's prompt cache
// (see package middleware/caching).
type Cache struct {
	// Breakpoints marks the end of the stable prefix (tools and system
	// prompt) and of the conversation, for providers that cache at
	// explicit marks (Anthropic's cache_control).
	Breakpoints bool `json:"breakpoints,omitempty" yaml:"breakpoints"`
	// TTL is the lifetime of what is cached: "5m" or "1h" on Anthropic,
	// "24h" on OpenAI; empty means the provider's default.
	TTL string `json:"ttl,omitempty" yaml:"ttl"`
	// Key sends a key derived from the thread with every request, for
	// providers that route requests by one (OpenAI's prompt_cache_key), so
	// that a thread's requests reach the machine holding its prefix.
	Key bool `json:"key,omitempty" yaml:"key"`
}

// Check reports a cache lifetime (TTL, quoted first in the error) no
// provider takes, or one the marks do not: with breakpoints (Anthropic) "5m" or "1h", with a key (OpenAI) also
// "24h". Every request would fail with it.
func (c Cache) Check() error {
	switch c.TTL {
	case "", "5m", "1h":
	case "24h":
		if c.Breakpoints {
			return fmt.Errorf("%q is OpenAI's; with breakpoints (Anthropic's cache_control) want 5m or 1h", c.TTL)
		}
	default:
		return fmt.Errorf("%q is no cache lifetime: want 5m or 1h (Anthropic) or 24h (OpenAI)", c.TTL)
	}
	return nil
}

// Names of the built-in profiles.
const (
	Claude  = "claude"
	GPT     = "gpt"
	Codex   = "codex"
	Open    = "open"
	Default = "default"
)

// Names returns the names of the built-in profiles, sorted.
func Names() []string { return slices.Sorted(maps.Keys(builtins)) }

// Builtin returns a copy of the built-in profile of that name.
func Builtin(name string) (Profile, bool) {
	p, ok := builtins[name]
	return p.clone(), ok
}

// For returns a copy of the built-in profile for a model, as it describes
// itself (llm.Describe):
//
//   - providers ollama, vllm and lmstudio (local servers, whatever they
//     call their model): open;
//   - a name containing "codex": codex;
//   - provider anthropic, or a name containing "claude" (Claude through
//     another provider): claude;
//   - OpenAI's open-weight gpt-oss models: open;
//   - a GPT or o-series name ("gpt-4.1", "o3", "ft:gpt-4o-mini:...",
//     "openai/gpt-5"): gpt;
//   - any other model of provider openai (an OpenAI-compatible server
//     serving an open model): open;
//   - anything else: default.
func For(info llm.Info) Profile {
	p, _ := Builtin(nameFor(info))
	return p
}

func nameFor(info llm.Info) string {
	name := strings.ToLower(info.Name)
	// A router's model names carry the vendor ("openai/gpt-5").
	base := name[strings.LastIndex(name, "/")+1:]
	switch {
	case info.Provider == "ollama" || info.Provider == "vllm" || info.Provider == "lmstudio":
		return Open
	case strings.Contains(name, "codex"):
		return Codex
	case info.Provider == "anthropic" || strings.Contains(name, "claude"):
		return Claude
	case strings.Contains(name, "gpt-oss"):
		return Open
	case isGPT(base):
		return GPT
	case info.Provider == "openai":
		return Open
	}
	return Default
}

// isGPT reports whether a model name is one of OpenAI's: gpt-*, chatgpt-*,
// o1, o3-mini, o4-mini, and fine-tunes of them (ft:gpt-4o-mini:org::id).
func isGPT(name string) bool {
	name = strings.TrimPrefix(name, "ft:")
	if strings.HasPrefix(name, "gpt-") || strings.HasPrefix(name, "chatgpt-") {
		return true
	}
	return len(name) >= 2 && name[0] == 'o' && name[1] >= '1' && name[1] <= '9'
}

func (p Profile) clone() Profile {
	p.ToolDescriptions = maps.Clone(p.ToolDescriptions)
	return p
}
