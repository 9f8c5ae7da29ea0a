package deepagents_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/anthropic"
	"github.com/deepagents-go/deepagents/llm/anthropic/anthropictest"
	"github.com/deepagents-go/deepagents/llm/openai"
	"github.com/deepagents-go/deepagents/llm/openai/openaitest"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/caching"
	"github.com/deepagents-go/deepagents/profile"
)

// wireRequest is what the profile changes in a request body, read from
// either provider's wire format.
type wireRequest struct {
	system         string
	promptCacheKey string // OpenAI's prompt_cache_key
	cacheControls  int    // Anthropic's cache_control marks
	descriptions   map[string]string
}

func readOpenAI(t *testing.T, body []byte) wireRequest {
	t.Helper()
	var b struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"function"`
		} `json:"tools"`
		PromptCacheKey string `json:"prompt_cache_key"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	w := wireRequest{promptCacheKey: b.PromptCacheKey, descriptions: map[string]string{}}
	if len(b.Messages) > 0 && b.Messages[0].Role == "system" {
		w.system, _ = b.Messages[0].Content.(string)
	}
	for _, tl := range b.Tools {
		w.descriptions[tl.Function.Name] = tl.Function.Description
	}
	w.cacheControls = strings.Count(string(body), `"cache_control"`)
	return w
}

func readAnthropic(t *testing.T, body []byte) wireRequest {
	t.Helper()
	var b struct {
		System []struct {
			Text string `json:"text"`
		} `json:"system"`
		Tools []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	w := wireRequest{descriptions: map[string]string{}}
	for _, s := range b.System {
		w.system += s.Text
	}
	for _, tl := range b.Tools {
		w.descriptions[tl.Name] = tl.Description
	}
	w.cacheControls = strings.Count(string(body), `"cache_control"`)
	w.promptCacheKey = "" // no such field on this wire
	if strings.Contains(string(body), "prompt_cache_key") {
		w.promptCacheKey = "sent"
	}
	return w
}

// TestProfileOnTheWire runs a deep agent whose main agent delegates to the
// general-purpose subagent, through the real provider clients, and reads
// what its profile put into every request: the prompt section (main agent
// and subagent), the tool descriptions, the cache marks or key.
func TestProfileOnTheWire(t *testing.T) {
	claude, _ := profile.Builtin(profile.Claude)
	gpt, _ := profile.Builtin(profile.GPT)
	open, _ := profile.Builtin(profile.Open)
	mine := profile.Profile{Name: "mine", Prompt: "## Mine\nBe brief.", ToolDescriptions: map[string]string{"ls": "List a folder."}, Cache: profile.Cache{Key: true}}
	tests := []struct {
		name       string
		wire       string // anthropic or openai
		model      string
		override   *profile.Profile
		prompt     string // the section every request's system prompt holds
		key        bool   // every request carries the thread's prompt_cache_key
		breakpoint bool   // every request carries cache_control marks
		globDesc   string // the glob description sent; empty: the default one
		lsDesc     string
	}{
		{name: "claude", wire: "anthropic", model: "claude-sonnet-4-5", prompt: claude.Prompt, breakpoint: true},
		{name: "gpt", wire: "openai", model: "gpt-4.1", prompt: gpt.Prompt, key: true},
		{name: "open model on a compatible server", wire: "openai", model: "qwen3-coder", prompt: open.Prompt, globDesc: open.ToolDescriptions["glob"]},
		{name: "overridden in Go", wire: "openai", model: "claude-sonnet-4-5", override: &mine, prompt: mine.Prompt, key: true, lsDesc: "List a folder."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			delegate := `{"description":"Look around.","subagent_type":"general-purpose"}`
			var bodies func() [][]byte
			var model llm.Model
			var err error
			read := readOpenAI
			switch tt.wire {
			case "openai":
				srv := openaitest.NewServer(
					openaitest.Turn{ToolCalls: []openaitest.ToolCall{{Name: "task", Arguments: delegate}}},
					openaitest.Turn{Text: "Nothing here."},
					openaitest.Turn{Text: "Done."},
				)
				t.Cleanup(srv.Close)
				bodies = srv.Bodies
				model, err = openai.New(tt.model, openai.Options{APIKey: "test", BaseURL: srv.URL, MaxRetries: -1})
			case "anthropic":
				srv := anthropictest.NewServer(
					anthropictest.Turn{ToolCalls: []anthropictest.ToolCall{{Name: "task", Input: delegate}}},
					anthropictest.Turn{Text: "Nothing here."},
					anthropictest.Turn{Text: "Done."},
				)
				t.Cleanup(srv.Close)
				bodies = srv.MessageRequests
				read = readAnthropic
				model, err = anthropic.New(tt.model, anthropic.Options{APIKey: "test", BaseURL: srv.URL, MaxRetries: -1})
			}
			if err != nil {
				t.Fatal(err)
			}
			a, err := deepagents.New(deepagents.Config{Model: model, Profile: tt.override})
			if err != nil {
				t.Fatal(err)
			}
			const thread = "thread-1"
			if _, err := a.Invoke(context.Background(), agent.Input{ThreadID: thread, Messages: []llm.Message{llm.UserText("Look around.")}}); err != nil {
				t.Fatal(err)
			}
			got := bodies()
			if len(got) != 3 {
				t.Fatalf("%d requests, want 3 (main, subagent, main)", len(got))
			}
			for i, body := range got {
				w := read(t, body)
				who := [...]string{"main agent", "subagent", "main agent"}[i]
				if !strings.Contains(w.system, tt.prompt) {
					t.Errorf("%s's system prompt lacks the profile's section %q:\n%s", who, tt.prompt, w.system)
				}
				wantKey := ""
				if tt.key {
					wantKey = caching.Key(thread)
				}
				if w.promptCacheKey != wantKey {
					t.Errorf("%s: prompt_cache_key %q, want %q", who, w.promptCacheKey, wantKey)
				}
				if (w.cacheControls > 0) != tt.breakpoint {
					t.Errorf("%s: %d cache_control marks, want some: %v", who, w.cacheControls, tt.breakpoint)
				}
				if tt.name == "open model on a compatible server" && w.descriptions["read_file"] != open.ToolDescriptions["read_file"] {
					t.Errorf("%s: read_file is described as %q, want the open profile's", who, w.descriptions["read_file"])
				}
				if tt.globDesc != "" && w.descriptions["glob"] != tt.globDesc {
					t.Errorf("%s: glob is described as %q, want the profile's %q", who, w.descriptions["glob"], tt.globDesc)
				}
				if tt.lsDesc != "" && w.descriptions["ls"] != tt.lsDesc {
					t.Errorf("%s: ls is described as %q, want %q", who, w.descriptions["ls"], tt.lsDesc)
				}
			}
		})
	}
}

// TestProfileSectionComesAfterTheBasePrompt: the profile's section is
// fixed, so it sits right after the base prompt, before the sections of
// the middleware (memory may change during a thread, and what follows a
// change is not read from the cache).
func TestProfileSectionComesAfterTheBasePrompt(t *testing.T) {
	p := profile.Profile{Name: "p", Prompt: "## Profile section"}
	a, err := deepagents.New(deepagents.Config{Model: replay.New(), Profile: &p})
	if err != nil {
		t.Fatal(err)
	}
	want := deepagents.BasePrompt + "\n\n" + p.Prompt + "\n\n"
	if sys := a.SystemPrompt(); !strings.HasPrefix(sys, want) {
		t.Errorf("system prompt starts %q, want %q", sys[:min(len(sys), len(want))], want)
	}
}

// TestProfileCacheTTLChecked: a TTL the profile's caching does not take
// fails New, not every request of every run.
func TestProfileCacheTTLChecked(t *testing.T) {
	claude, _ := profile.Builtin(profile.Claude)
	claude.Cache.TTL = "24h"
	if _, err := deepagents.New(deepagents.Config{Model: replay.New(), Profile: &claude}); err == nil || !strings.Contains(err.Error(), `"24h"`) {
		t.Errorf("New with breakpoints and a 24h TTL: %v", err)
	}
}
