package profile_test

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/deepagents-go/deepagents/internal/golden"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/filesystem"
	"github.com/deepagents-go/deepagents/profile"
)

func TestFor(t *testing.T) {
	tests := []struct {
		provider, name, want string
	}{
		{"anthropic", "claude-sonnet-4-5", profile.Claude},
		{"anthropic", "claude-opus-4-7", profile.Claude},
		{"anthropic", "some-future-model", profile.Claude},
		{"openrouter", "anthropic/claude-sonnet-4.5", profile.Claude},
		{"openai", "gpt-4.1", profile.GPT},
		{"openai", "GPT-5", profile.GPT},
		{"openai", "o3", profile.GPT},
		{"openai", "o4-mini", profile.GPT},
		{"openai", "chatgpt-4o-latest", profile.GPT},
		{"openai", "ft:gpt-4o-mini:acme::abc123", profile.GPT},
		{"openrouter", "openai/gpt-5", profile.GPT},
		{"openai", "gpt-5.1-codex", profile.Codex},
		{"openai", "codex-mini-latest", profile.Codex},
		{"openai", "gpt-oss-120b", profile.Open},
		{"openai", "llama3.3", profile.Open},
		{"openai", "Qwen/Qwen3-Coder-30B", profile.Open},
		{"openai", "omni-moderation", profile.Open},
		{"ollama", "qwen3", profile.Open},
		{"ollama", "gpt-oss:20b", profile.Open},
		{"vllm", "meta-llama/Llama-3.1-8B-Instruct", profile.Open},
		{"lmstudio", "gpt-4o", profile.Open}, // a local server, whatever it calls its model
		{"ollama", "qwen2.5-codex", profile.Open},
		{"vllm", "claude-distill", profile.Open},
		{"replay", "script.jsonl", profile.Default},
		{"", "", profile.Default},
	}
	for _, tt := range tests {
		got := profile.For(llm.Info{Provider: tt.provider, Name: tt.name})
		if got.Name != tt.want {
			t.Errorf("For(%s:%s) = %s, want %s", tt.provider, tt.name, got.Name, tt.want)
		}
	}
}

// TestBuiltinIsACopy: changing the profile one got does not change the
// built-in, which every agent of the process starts from.
func TestBuiltinIsACopy(t *testing.T) {
	p, ok := profile.Builtin(profile.Open)
	if !ok {
		t.Fatal("no open profile")
	}
	p.ToolDescriptions["glob"] = "changed"
	p.Prompt = "changed"
	again := profile.For(llm.Info{Provider: "ollama", Name: "qwen3"})
	if again.ToolDescriptions["glob"] == "changed" || again.Prompt == "changed" {
		t.Error("a change to a profile one got reached the built-in")
	}
	if _, ok := profile.Builtin("nosuch"); ok {
		t.Error(`Builtin("nosuch") found a profile`)
	}
}

func TestNames(t *testing.T) {
	want := []string{profile.Claude, profile.Codex, profile.Default, profile.GPT, profile.Open}
	if got := profile.Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
}

// TestModelSurface pins what each built-in profile adds to what the model
// reads, and how it caches. Review a diff here as a prompt change; run
// go test ./profile -run TestModelSurface -update to accept it.
func TestModelSurface(t *testing.T) {
	var b bytes.Buffer
	for _, name := range profile.Names() {
		p, _ := profile.Builtin(name)
		fmt.Fprintf(&b, "# %s\n\ncache: breakpoints=%v ttl=%q key=%v\n", p.Name, p.Cache.Breakpoints, p.Cache.TTL, p.Cache.Key)
		if p.Prompt != "" {
			fmt.Fprintf(&b, "\n## prompt\n\n%s\n", p.Prompt)
		}
		for _, tool := range slices.Sorted(maps.Keys(p.ToolDescriptions)) {
			fmt.Fprintf(&b, "\n## %s\n\n%s\n", tool, p.ToolDescriptions[tool])
		}
		b.WriteString("\n")
	}
	golden.Check(t, "testdata/builtins.golden", b.Bytes())
}

// The built-in profiles describe tools the filesystem middleware builds:
// a renamed tool would otherwise lose its description silently.
func TestBuiltinsDescribeRealTools(t *testing.T) {
	for _, name := range profile.Names() {
		p, _ := profile.Builtin(name)
		for tool := range p.ToolDescriptions {
			if _, ok := filesystem.ToolTraits(tool); !ok {
				t.Errorf("profile %s describes %q, which is no tool of the filesystem middleware", name, tool)
			}
		}
	}
}
