package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"

	"github.com/deepagents-go/deepagents/llm/anthropic/anthropictest"
	"github.com/deepagents-go/deepagents/llm/openai/openaitest"
	"github.com/deepagents-go/deepagents/profile"
)

// field returns the raw JSON of a top-level field of a request body.
func field(t *testing.T, body []byte, name string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("request body is not JSON: %s", body)
	}
	return string(m[name])
}

func TestAnthropicThroughCLI(t *testing.T) {
	srv := anthropictest.NewServer(
		anthropictest.Turn{Status: 429, RetryAfter: "0"},
		anthropictest.Turn{Text: "Planning.", ToolCalls: []anthropictest.ToolCall{{Name: "write_todos", Input: `{"todos":[{"content":"say hi","status":"completed"}]}`}},
			Usage: anthropictest.Usage{InputTokens: 50, OutputTokens: 20, CacheCreationInputTokens: 3000}},
		anthropictest.Turn{Text: "Hi!", Usage: anthropictest.Usage{InputTokens: 80, OutputTokens: 5, CacheReadInputTokens: 3000}},
	)
	defer srv.Close()
	env := map[string]string{"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": srv.URL}
	code, stdout, stderr := runCLI(t, env, "run", "--model", "anthropic:claude-sonnet-4-5", "--db", "memory:", "--dir", t.TempDir(), "--output", "jsonl", "say hi")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	end := runEnd(t, stdout)
	if end.Status != deepagents.StatusCompleted || end.Usage == nil {
		t.Fatalf("run_end = %+v", end)
	}
	// Input tokens count cache reads and writes too.
	if u := *end.Usage; u.CacheReadTokens != 3000 || u.CacheWriteTokens != 3000 || u.InputTokens != 6130 || u.OutputTokens != 25 {
		t.Errorf("usage = %+v", u)
	}
	reqs := srv.MessageRequests()
	if len(reqs) != 3 || srv.Remaining() != 0 {
		t.Fatalf("%d requests (the 429 retried?), %d turns left", len(reqs), srv.Remaining())
	}
	// Steps 1 and 2: identical system prompt and tools, with cache breakpoints.
	a, b := reqs[1], reqs[2]
	if field(t, a, "system") != field(t, b, "system") || field(t, a, "tools") != field(t, b, "tools") {
		t.Error("system prompt or tools differ between steps")
	}
	for i, body := range [][]byte{a, b} {
		if n := bytes.Count(body, []byte(`"cache_control"`)); n < 3 {
			t.Errorf("request %d has %d cache breakpoints, want system, tools and the conversation tail", i+1, n)
		}
	}
}

func TestOpenAIThroughCLI(t *testing.T) {
	srv := openaitest.NewServer(
		openaitest.Turn{Status: 429, RetryAfter: "0"},
		openaitest.Turn{ToolCalls: []openaitest.ToolCall{
			{Name: "write_todos", Arguments: `{"todos":[{"content":"a","status":"in_progress"}]}`},
			{Name: "ls", Arguments: `{"path":"/"}`},
		}, Usage: openaitest.Usage{PromptTokens: 900, CompletionTokens: 30, CachedTokens: 0}},
		openaitest.Turn{Text: "Done.", Usage: openaitest.Usage{PromptTokens: 1000, CompletionTokens: 4, CachedTokens: 896}},
	)
	defer srv.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hi"), 0o644)
	// No --model: with only OPENAI_API_KEY set, OpenAI's default model is used.
	env := map[string]string{"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": srv.URL}
	code, stdout, stderr := runCLI(t, env, "run", "--db", "memory:", "--dir", dir, "--output", "jsonl", "list the files")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var results []string
	for _, e := range events(t, stdout) {
		if e.Type == deepagents.EventToolResult {
			results = append(results, e.Content)
		}
	}
	if len(results) != 2 || !strings.Contains(strings.Join(results, "\n"), "/hello.txt") {
		t.Errorf("tool results = %q", results)
	}
	if u := *runEnd(t, stdout).Usage; u.InputTokens != 1900 || u.CacheReadTokens != 896 || u.OutputTokens != 34 {
		t.Errorf("usage = %+v", u)
	}
	if !strings.Contains(string(srv.Requests()[1].Body), `"model":"gpt-4.1"`) {
		t.Errorf("default model not used: %s", srv.Requests()[1].Body)
	}
}

func TestMissingKeyIsOneClearLine(t *testing.T) {
	for _, c := range []struct{ spec, env string }{
		{"anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"},
		{"openai:gpt-4.1", "OPENAI_API_KEY"},
	} {
		code, stdout, stderr := runCLI(t, nil, "run", "--model", c.spec, "--db", "memory:", "--dir", t.TempDir(), "hi")
		if code == ExitOK || stdout != "" || !strings.Contains(stderr, c.env) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%s without a key: exit %d, stderr %q", c.spec, code, stderr)
		}
	}
}

func TestRecordThenReplayOffline(t *testing.T) {
	srv := anthropictest.NewServer(
		anthropictest.Turn{ToolCalls: []anthropictest.ToolCall{{Name: "ls", Input: `{"path":"/"}`}}, Usage: anthropictest.Usage{InputTokens: 10, OutputTokens: 2}},
		anthropictest.Turn{Text: "Nothing here.", Usage: anthropictest.Usage{InputTokens: 12, OutputTokens: 3}},
	)
	dir := t.TempDir()
	rec := filepath.Join(t.TempDir(), "run.json")
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL}
	code, _, stderr := runCLI(t, env, "run", "--model", "anthropic:claude-sonnet-4-5", "--record", rec, "--db", "memory:", "--dir", dir, "look around")
	srv.Close()
	if code != ExitOK {
		t.Fatalf("recording run: exit %d: %s", code, stderr)
	}
	// Offline: the server is gone; the recording answers.
	code, stdout, stderr := runCLI(t, nil, "run", "--model", "replay:"+rec, "--db", "memory:", "--dir", dir, "--output", "jsonl", "look around")
	if code != ExitOK {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
	if end := runEnd(t, stdout); end.Usage.InputTokens != 22 {
		t.Errorf("replayed usage = %+v", end.Usage)
	}
	// A different prompt is reported as a request that differs.
	code, stdout, _ = runCLI(t, nil, "run", "--model", "replay:"+rec, "--db", "memory:", "--dir", dir, "--output", "jsonl", "look elsewhere")
	if end := runEnd(t, stdout); code != ExitFailed || !strings.Contains(end.Error, "request differs from the recording") {
		t.Errorf("changed prompt: exit %d, %q", code, end.Error)
	}
}

// TestProfileThroughCLI: the harness profile is the model's unless
// --profile names another, and the user's configuration file changes it;
// an unknown name is a usage error. Read off the requests OpenAI's
// stand-in receives.
func TestProfileThroughCLI(t *testing.T) {
	gpt, _ := profile.Builtin(profile.GPT)
	open, _ := profile.Builtin(profile.Open)
	tests := []struct {
		name   string
		config string // the user's config.yaml
		args   []string
		key    bool   // prompt_cache_key sent
		prompt string // in the system prompt
		absent string // not in the system prompt
	}{
		{name: "the model's", key: true, prompt: gpt.Prompt},
		{name: "--profile", args: []string{"--profile", "open"}, prompt: open.Prompt, absent: gpt.Prompt},
		{name: "config file", config: "profile:\n  prompt: \"## Mine\\nBe terse.\"\n  cache: {key: false}\n", prompt: "## Mine\nBe terse.", absent: gpt.Prompt},
		{name: "config file named, flag wins", config: "profile:\n  name: open\n", args: []string{"--profile", "gpt"}, key: true, prompt: gpt.Prompt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.NewServer(openaitest.Turn{Text: "Hi."})
			defer srv.Close()
			home := t.TempDir()
			if tt.config != "" {
				os.MkdirAll(filepath.Join(home, ".deepagents"), 0o700)
				os.WriteFile(filepath.Join(home, ".deepagents", "config.yaml"), []byte(tt.config), 0o600)
			}
			env := map[string]string{"HOME": home, "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.URL}
			args := append([]string{"run", "--model", "openai:gpt-4.1", "--db", "memory:", "--dir", t.TempDir()}, tt.args...)
			code, _, stderr := runCLI(t, env, append(args, "hi")...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			body := srv.Bodies()[0]
			if got := field(t, body, "prompt_cache_key") != ""; got != tt.key {
				t.Errorf("prompt_cache_key sent: %v, want %v", got, tt.key)
			}
			var system string
			json.Unmarshal([]byte(firstMessage(t, body)), &system)
			if !strings.Contains(system, tt.prompt) {
				t.Errorf("system prompt lacks %q:\n%s", tt.prompt, system)
			}
			if tt.absent != "" && strings.Contains(system, tt.absent) {
				t.Errorf("system prompt has %q:\n%s", tt.absent, system)
			}
		})
	}
	t.Run("bad ttl", func(t *testing.T) {
		home := t.TempDir()
		os.MkdirAll(filepath.Join(home, ".deepagents"), 0o700)
		os.WriteFile(filepath.Join(home, ".deepagents", "config.yaml"), []byte("profile:\n  cache: {ttl: 2h}\n"), 0o600)
		code, _, stderr := runCLI(t, map[string]string{"HOME": home}, "run", "--model", "replay:none", "--db", "memory:", "--dir", t.TempDir(), "hi")
		if code != ExitUsage || !strings.Contains(stderr, `cache.ttl "2h"`) {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		code, _, stderr := runCLI(t, nil, "run", "--model", "replay:none", "--profile", "nosuch", "--db", "memory:", "--dir", t.TempDir(), "hi")
		if code != ExitUsage || !strings.Contains(stderr, `unknown profile "nosuch"`) || !strings.Contains(stderr, "claude, codex, default, gpt, open") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}

// firstMessage returns the raw content of a chat request's first
// message (the system prompt).
func firstMessage(t *testing.T, body []byte) string {
	t.Helper()
	var b struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &b); err != nil || len(b.Messages) == 0 {
		t.Fatalf("no messages in %s", body)
	}
	return string(b.Messages[0].Content)
}

// TestProfileStaysWithTheThreadAndTheRecording: a thread continued without
// --profile keeps the profile it ran with, and a recording made with a
// profile changed by the user's configuration replays without it.
func TestProfileStaysWithTheThreadAndTheRecording(t *testing.T) {
	srv := openaitest.NewServer(openaitest.Turn{Text: "One."}, openaitest.Turn{Text: "Two."})
	defer srv.Close()
	home, dir, db := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "t.db")
	os.MkdirAll(filepath.Join(home, ".deepagents"), 0o700)
	os.WriteFile(filepath.Join(home, ".deepagents", "config.yaml"), []byte("profile:\n  prompt: \"## Mine\\nBe terse.\"\n"), 0o600)
	env := map[string]string{"HOME": home, "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.URL}
	rec := filepath.Join(t.TempDir(), "rec.json")
	args := []string{"run", "--model", "openai:gpt-4.1", "--db", db, "--dir", dir, "--thread", "t1"}
	if code, _, stderr := runCLI(t, env, append(args, "--profile", "open", "--record", rec, "first")...); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, env, append(args, "second")...); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for i, body := range srv.Bodies() {
		system := firstMessage(t, body)
		if !strings.Contains(system, "Be terse.") || !strings.Contains(system, "absolute and start with /") || field(t, body, "prompt_cache_key") != "" {
			t.Errorf("request %d: not the open profile changed by the configuration: key %s, system %s", i+1, field(t, body, "prompt_cache_key"), system)
		}
	}
	// Offline, without the configuration: the recording's profile, changes included.
	code, _, stderr := runCLI(t, nil, "run", "--model", "replay:"+rec, "--db", "memory:", "--dir", dir, "first")
	if code != ExitOK {
		t.Fatalf("replay: exit %d: %s", code, stderr)
	}
}
