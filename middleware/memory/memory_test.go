package memory_test

import (
	"context"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/memory"
	"github.com/deepagents-go/deepagents/thread"
)

func stateWith(files map[string]string) (*thread.Files, backend.Backend) {
	f := thread.NewFiles(nil)
	for p, c := range files {
		f.Put(p, thread.FileData{Content: c})
	}
	return f, backend.NewStateBackend(f)
}

func TestMemoryInSystemPrompt(t *testing.T) {
	_, b := stateWith(map[string]string{
		"/user/AGENTS.md":    "Prefer short answers.\n",
		"/project/AGENTS.md": "Run tests with make test.",
	})
	mem, err := memory.New(memory.Config{Backend: b, Sources: []string{"/user/AGENTS.md", "/missing/AGENTS.md", "/project/AGENTS.md"}})
	if err != nil {
		t.Fatal(err)
	}
	m := replay.New(replay.Turn{Content: "ok", Expect: &replay.Expect{SystemContains: []string{
		"<agent_memory>\n### /user/AGENTS.md\nPrefer short answers.\n\n### /project/AGENTS.md\nRun tests with make test.\n\n</agent_memory>",
		"<memory_guidelines>", "/user/AGENTS.md, /missing/AGENTS.md, /project/AGENTS.md", "edit_file",
	}, SystemExclude: []string{"### /missing"}}}).Record()
	a, err := agent.New(agent.Config{Model: m, Middleware: []agent.Middleware{mem}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(context.Background(), agent.Prompt("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := res.State.Values[memory.Value]; !ok || !strings.Contains(string(v), "Prefer short answers") {
		t.Errorf("memory value = %s", v)
	}
}

func TestMemoryWithNothingSaved(t *testing.T) {
	_, b := stateWith(nil)
	m := replay.New(replay.Turn{Content: "ok", Expect: &replay.Expect{SystemContains: []string{"(nothing saved yet)", "/AGENTS.md"}}})
	mem, err := memory.New(memory.Config{Backend: b, Sources: []string{"/AGENTS.md"}})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := agent.New(agent.Config{Model: m, Middleware: []agent.Middleware{mem}})
	if _, err := a.Invoke(context.Background(), agent.Prompt("hi")); err != nil {
		t.Fatal(err)
	}
}

// A file that says what an earlier one says (a CLAUDE.md linked to
// AGENTS.md) is shown once.
func TestMemoryShowsTheSameTextOnce(t *testing.T) {
	_, b := stateWith(map[string]string{"/AGENTS.md": "Use tabs.\n", "/CLAUDE.md": "Use tabs.\n", "/other.md": "Be brief.\n"})
	mem, err := memory.New(memory.Config{Backend: b, Sources: []string{"/AGENTS.md", "/CLAUDE.md", "/other.md"}})
	if err != nil {
		t.Fatal(err)
	}
	m := replay.New(replay.Turn{Content: "ok", Expect: &replay.Expect{
		SystemContains: []string{"### /AGENTS.md\nUse tabs.\n\n### /other.md\nBe brief."}, SystemExclude: []string{"### /CLAUDE.md"}}})
	a, _ := agent.New(agent.Config{Model: m, Middleware: []agent.Middleware{mem}})
	if _, err := a.Invoke(context.Background(), agent.Prompt("hi")); err != nil {
		t.Fatal(err)
	}
}

// Imports (Claude Code's "@path" words) are shown after the file that
// names them, relative to it, depth first; a cycle ends, code is not read
// for imports, a name that is no file is left as text, and CLAUDE.md that
// only imports AGENTS.md shows AGENTS.md once.
func TestMemoryImports(t *testing.T) {
	_, b := stateWith(map[string]string{
		"/AGENTS.md":      "Use tabs.\n",
		"/CLAUDE.md":      "@AGENTS.md\nSee @docs/style.md, and mail me@example.com about @types/node.\n```\n@docs/secret.md\n```\nNot `@docs/secret.md` either.\n",
		"/docs/style.md":  "Short lines. @more.md\n",
		"/docs/more.md":   "Even shorter. @../CLAUDE.md\n",
		"/docs/secret.md": "SECRET\n",
	})
	mem, err := memory.New(memory.Config{Backend: b, Sources: []string{"/AGENTS.md", "/CLAUDE.md"}})
	if err != nil {
		t.Fatal(err)
	}
	m := replay.New(replay.Turn{Content: "ok", Expect: &replay.Expect{
		SystemContains: []string{"### /AGENTS.md\nUse tabs.\n\n### /CLAUDE.md\n@AGENTS.md", "### /docs/style.md\nShort lines. @more.md\n\n### /docs/more.md\nEven shorter."},
		SystemExclude:  []string{"SECRET", "### /types", "### /AGENTS.md\nUse tabs.\n\n### /CLAUDE.md\n@AGENTS.md\nSee @docs/style.md, and mail me@example.com about @types/node.\n```\n@docs/secret.md\n```\nNot `@docs/secret.md` either.\n\n### /AGENTS.md"}}})
	a, _ := agent.New(agent.Config{Model: m, Middleware: []agent.Middleware{mem}})
	if _, err := a.Invoke(context.Background(), agent.Prompt("hi")); err != nil {
		t.Fatal(err)
	}
}
