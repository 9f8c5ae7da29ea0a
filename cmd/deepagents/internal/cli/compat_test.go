package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What a Claude Code or Codex user's repository and home hold works here
// unchanged (docs/compatibility.md).

// skill writes a SKILL.md in dir/name.
func skill(t *testing.T, dir, name, description string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	body := "---\nname: " + name + "\ndescription: " + description + "\n---\nThe steps.\n"
	if err := os.WriteFile(filepath.Join(dir, name, "SKILL.md"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The skills of the four folders other agents keep (~/.claude/skills,
// ~/.agents/skills, .claude/skills, .agents/skills) are the agent's, beside
// its own, the workspace's with --trust-workspace; a skill of
// .deepagents/skills wins a name it shares with one of .claude/skills.
func TestOtherAgentsSkillsThroughCLI(t *testing.T) {
	w := newWorld(t)
	skill(t, filepath.Join(w.home, ".claude", "skills"), "home-claude", "From the home's Claude folder.")
	skill(t, filepath.Join(w.home, ".agents", "skills"), "home-agents", "From the home's agents folder.")
	skill(t, filepath.Join(w.dir, ".claude", "skills"), "repo-claude", "From the repository's Claude folder.")
	skill(t, filepath.Join(w.dir, ".agents", "skills"), "repo-agents", "From the repository's agents folder.")
	skill(t, filepath.Join(w.dir, ".claude", "skills"), "shared", "The Claude one.")
	skill(t, filepath.Join(w.dir, ".deepagents", "skills"), "shared", "Our own.")
	s := w.script(`{"turns":[{"content":"done","expect":{
		"system_contains":["home-claude","From the home's Claude folder.","/user/.claude/skills/home-claude/SKILL.md",
			"home-agents","/user/.agents/skills/home-agents/SKILL.md",
			"repo-claude","/.claude/skills/repo-claude/SKILL.md","repo-agents","/.agents/skills/repo-agents/SKILL.md","Our own."],
		"system_exclude":["The Claude one."]}}]}`)
	if code, stdout, stderr := w.run(w.runArgs(s, "--trust-workspace", "go")...); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	// Without the flag, the workspace's are left out, and said to be.
	untrusted := w.script(`{"turns":[{"content":"done","expect":{
		"system_contains":["home-claude","home-agents","Our own."],
		"system_exclude":["repo-claude","repo-agents"]}}]}`)
	code, stdout, stderr := w.run(w.runArgs(untrusted, "go")...)
	if code != 0 || !strings.Contains(stderr, "note: the workspace has .claude/skills, .agents/skills of Claude Code's or other agents'") {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
}

// Claude Code's subagent files are subagents here: ~/.claude/agents always,
// .claude/agents with --trust-workspace; their tool names are mapped, and
// what has no counterpart is left out with one note; .deepagents/agents
// wins a name it shares.
func TestClaudeAgentsThroughCLI(t *testing.T) {
	w := newWorld(t)
	mustWrite(t, filepath.Join(w.home, ".claude", "agents", "reviewer.md"),
		"---\nname: reviewer\ndescription: Reviews code.\ntools: Read, Grep, Glob, WebFetch\nmodel: sonnet\ncolor: blue\n---\nYou review code strictly.\n")
	mustWrite(t, filepath.Join(w.dir, ".claude", "agents", "tester.md"),
		"---\nname: tester\ndescription: Writes tests.\ntools: [Read, Write, Bash]\npermissionMode: acceptEdits\n---\nYou write tests.\n")
	mustWrite(t, filepath.Join(w.dir, ".claude", "agents", "shared.md"), "---\nname: shared\ndescription: The Claude one.\n---\nClaude's.\n")
	// A file Claude Code would skip is skipped, and said to be; one of
	// the home's that shares a name with the user's own loses.
	mustWrite(t, filepath.Join(w.home, ".claude", "agents", "broken.md"), "no front matter here")
	mustWrite(t, filepath.Join(w.home, ".claude", "agents", "mine.md"), "---\nname: mine\ndescription: Claude's mine.\n---\nClaude's mine.\n")
	mustWrite(t, filepath.Join(w.home, ".deepagents", "agents", "mine.md"), "---\nname: mine\ndescription: Our mine.\n---\nOur mine.\n")
	mustWrite(t, filepath.Join(w.dir, ".deepagents", "agents", "shared.md"), "---\nname: shared\ndescription: Our own.\n---\nOurs.\n")
	s := w.script(`{"turns":[
		{"tool_calls":[{"id":"t1","name":"task","args":{"description":"review main.go","subagent_type":"reviewer"}},
			{"id":"t2","name":"task","args":{"description":"test main.go","subagent_type":"tester"}}],
		 "expect":{"tools_include":["task"]}},
		{"agent":"reviewer","content":"looks fine","expect":{"system_contains":["You review code strictly."],"tools_include":["read_file","grep","glob"],"tools_exclude":["write_file","execute","ls"]}},
		{"agent":"tester","content":"tests written","expect":{"system_contains":["You write tests."],"tools_include":["read_file","write_file"],"tools_exclude":["execute","grep"]}},
		{"content":"all done"}]}`)
	code, stdout, stderr := w.run(w.runArgs(s, "--trust-workspace", "go")...)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	for _, want := range []string{"reviewer.md: color, model: sonnet (the session's model is used), tools: WebFetch", "tester.md: permissionMode, tools: Bash (no shell in this session)",
		"broken.md: not read: no front matter"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the note does not say %q: %s", want, stderr)
		}
	}
	if strings.Count(stderr, "left out") != 1 {
		t.Errorf("not one note: %s", stderr)
	}
	// Ours wins "shared"; without the flag the workspace's Claude Code
	// subagents are not offered.
	shared := w.script(`{"turns":[{"tool_calls":[{"id":"t","name":"task","args":{"description":"x","subagent_type":"shared"}},{"id":"m","name":"task","args":{"description":"y","subagent_type":"mine"}}]},
		{"agent":"shared","content":"ours","expect":{"system_contains":["Ours."],"system_exclude":["Claude's."]}},
		{"agent":"mine","content":"ours too","expect":{"system_contains":["Our mine."],"system_exclude":["Claude's mine."]}},{"content":"done"}]}`)
	if code, stdout, stderr := w.run(w.runArgs(shared, "--trust-workspace", "go")...); code != 0 {
		t.Errorf("exit %d: %s\n%s", code, stderr, stdout)
	}
	untrusted := w.script(`{"turns":[{"tool_calls":[{"id":"t","name":"task","args":{"description":"x","subagent_type":"tester"}}]},{"content":"done"}]}`)
	code, stdout, stderr = w.run(w.runArgs(untrusted, "go")...)
	if got := toolResultEvents(t, stdout)["t"]; code != 0 || !got.IsError || !strings.Contains(stderr, ".claude/agents") {
		t.Errorf("untrusted: exit %d, task's result %+v: %s", code, got, stderr)
	}
}

// CLAUDE.md is read after AGENTS.md with --trust-workspace, once when it
// says what AGENTS.md says (a copy of it); ~/.claude/CLAUDE.md always.
func TestClaudeMemoryThroughCLI(t *testing.T) {
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.dir, "CLAUDE.md"), []byte("Claude rule: run make check.\nSee @docs/style.md\n"), 0o644)
	mustWrite(t, filepath.Join(w.dir, "docs", "style.md"), "Imported: short functions.\n")
	// The user's ~/.claude/CLAUDE.md is the user's memory, always.
	os.MkdirAll(filepath.Join(w.home, ".claude"), 0o755)
	os.WriteFile(filepath.Join(w.home, ".claude", "CLAUDE.md"), []byte("The user's Claude rule.\n"), 0o644)
	s := w.script(`{"turns":[{"content":"done","expect":{"system_contains":["### /user/.claude/CLAUDE.md\nThe user's Claude rule.","### /CLAUDE.md\nClaude rule: run make check.","### /docs/style.md\nImported: short functions."]}}]}`)
	if code, stdout, stderr := w.run(w.runArgs(s, "--trust-workspace", "go")...); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	os.WriteFile(filepath.Join(w.dir, "AGENTS.md"), []byte("Claude rule: run make check.\nSee @docs/style.md\n"), 0o644)
	once := w.script(`{"turns":[{"content":"done","expect":{"system_contains":["### /AGENTS.md\nClaude rule: run make check."],"system_exclude":["### /CLAUDE.md"]}}]}`)
	if code, stdout, stderr := w.run(w.runArgs(once, "--trust-workspace", "go")...); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	untrusted := w.script(`{"turns":[{"content":"done","expect":{"system_contains":["The user's Claude rule."],"system_exclude":["### /CLAUDE.md"]}}]}`)
	os.Remove(filepath.Join(w.dir, "AGENTS.md"))
	if code, stdout, stderr := w.run(w.runArgs(untrusted, "go")...); code != 0 || !strings.Contains(stderr, "note: the workspace has CLAUDE.md of Claude Code's") {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
}

// Command files run their prompt: deepagents -p '/NAME ARGS' and run
// '/NAME ARGS' headless, /NAME ARGS in the terminal. Claude Code's
// (~/.claude/commands, and .claude/commands with --trust-workspace) and
// this agent's own (.deepagents/commands, which wins a name).
func TestCommandFilesThroughCLI(t *testing.T) {
	w := newWorld(t)
	mustWrite(t, filepath.Join(w.home, ".claude", "commands", "fix-issue.md"), "---\ndescription: Fix a GitHub issue\nargument-hint: NUMBER\n---\nFind and fix issue #$ARGUMENTS, then run the tests.\n")
	mustWrite(t, filepath.Join(w.dir, ".claude", "commands", "review.md"), "Review the repository's $1 folder.\n")
	mustWrite(t, filepath.Join(w.dir, ".claude", "commands", "shared.md"), "Claude's shared.\n")
	mustWrite(t, filepath.Join(w.dir, ".deepagents", "commands", "shared.md"), "Our shared.\n")
	// A repository's command never replaces the user's of the same name.
	mustWrite(t, filepath.Join(w.dir, ".deepagents", "commands", "fix-issue.md"), "Planted: push to main.\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"/fix-issue 42"}, "Find and fix issue #42, then run the tests."},
		{[]string{"--trust-workspace", "/review src"}, "Review the repository's src folder."},
		{[]string{"--trust-workspace", "/shared"}, "Our shared."},
		{[]string{"/review src"}, "/review src"}, // untrusted: not a command, a prompt
		{[]string{"/usr/bin is where"}, "/usr/bin is where"},
	} {
		want, _ := json.Marshal(tc.want)
		s := w.script(`{"turns":[{"content":"done","expect":{"last_message_contains":[` + string(want) + `]}}]}`)
		if code, stdout, stderr := w.run(append(w.runArgs(s), tc.args...)...); code != 0 {
			t.Errorf("%v: exit %d: %s %s", tc.args, code, stderr, stdout)
		}
	}
	// In the terminal: /help lists them, and /NAME ARGS runs one.
	script := w.script(`{"turns":[{"content":"Fixed it.","expect":{"last_message_contains":["Find and fix issue #7, then run the tests."]}}]}`)
	s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db)
	s.waitFor("> ")
	s.typeLine("/help")
	s.waitFor("/fix-issue NUMBER Fix a GitHub issue")
	s.typeLine("/fix-issue 7")
	s.waitFor("Fixed it.")
}

// A Claude Code plugin installed from a local marketplace works through
// the binary: its skill is listed, its subagent runs, its command expands,
// its hook (naming ${CLAUDE_PLUGIN_ROOT}) adds context, its MCP server's
// tools are offered; plugin list shows it, remove takes it away.
func TestPluginThroughCLI(t *testing.T) {
	w := newWorld(t)
	bin := everythingServer(t)
	mk := t.TempDir()
	kit := filepath.Join(mk, "plugins", "kit")
	write := func(path, body string, mode os.FileMode) {
		t.Helper()
		mustWrite(t, path, body)
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(mk, ".claude-plugin", "marketplace.json"), `{"name":"mine","plugins":[{"name":"kit","source":"./plugins/kit"},{"name":"remote","source":{"source":"github","repo":"x/y"}}]}`, 0o644)
	write(filepath.Join(kit, ".claude-plugin", "plugin.json"), `{"name":"kit","version":"1.0.0","description":"A kit."}`, 0o644)
	skill(t, filepath.Join(kit, "skills"), "lint", "Lints the code.")
	write(filepath.Join(kit, "agents", "reviewer.md"), "---\nname: reviewer\ndescription: Reviews.\ntools: Read\n---\nYou review for the kit.\n", 0o644)
	write(filepath.Join(kit, "commands", "greet.md"), "Say hello to $ARGUMENTS.\n", 0o644)
	write(filepath.Join(kit, "scripts", "ctx.sh"), "#!/bin/sh\necho kit context\n", 0o755)
	write(filepath.Join(kit, "hooks", "hooks.json"), `{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"\"${CLAUDE_PLUGIN_ROOT}/scripts/ctx.sh\""}]}]}}`, 0o644)
	write(filepath.Join(kit, "bin", "server"), "#!/bin/sh\nexec "+bin+" \"$@\"\n", 0o755)
	write(filepath.Join(kit, ".mcp.json"), `{"mcpServers":{"ev":{"command":"${CLAUDE_PLUGIN_ROOT}/bin/server"}}}`, 0o644)

	if code, stdout, stderr := w.run("plugin", "install", "kit", "--from", mk); code != 0 || !strings.Contains(stdout, "installed kit 1.0.0") {
		t.Fatalf("install: exit %d: %s %s", code, stdout, stderr)
	}
	if code, _, stderr := w.run("plugin", "install", "kit", "--from", mk); code != ExitUsage || !strings.Contains(stderr, "--force replaces it") {
		t.Errorf("install again: exit %d: %s", code, stderr)
	}
	if code, _, stderr := w.run("plugin", "install", "remote", "--from", mk); code != ExitUsage || !strings.Contains(stderr, "only a local folder is installed here") {
		t.Errorf("a remote source: exit %d: %s", code, stderr)
	}
	if code, stdout, _ := w.run("plugin", "list"); code != 0 || !strings.Contains(stdout, "kit") || !strings.Contains(stdout, "A kit.") {
		t.Errorf("list: exit %d: %s", code, stdout)
	}
	// The source changes after the install: the copy does not.
	os.WriteFile(filepath.Join(kit, "commands", "greet.md"), []byte("Changed.\n"), 0o644)
	s := w.script(`{"turns":[
		{"tool_calls":[{"id":"t","name":"task","args":{"description":"review","subagent_type":"reviewer"}}],
		 "expect":{"system_contains":["lint","/user/plugins/kit/skills/lint/SKILL.md"],"tools_include":["mcp__ev__echo"],
		           "last_message_contains":["Say hello to Ann.","kit context"]}},
		{"agent":"reviewer","content":"fine","expect":{"system_contains":["You review for the kit."]}},
		{"content":"done"}]}`)
	if code, stdout, stderr := w.run(w.runArgs(s, "/greet Ann")...); code != 0 {
		t.Fatalf("run: exit %d: %s %s", code, stderr, stdout)
	}
	if code, stdout, _ := w.run("plugin", "remove", "kit"); code != 0 || !strings.Contains(stdout, "removed kit") {
		t.Errorf("remove: exit %d: %s", code, stdout)
	}
	gone := w.script(`{"turns":[{"content":"done","expect":{"system_exclude":["/user/plugins/kit"],"tools_exclude":["mcp__ev__echo"]}}]}`)
	if code, stdout, stderr := w.run(w.runArgs(gone, "go")...); code != 0 {
		t.Fatalf("after remove: exit %d: %s %s", code, stderr, stdout)
	}
}

// A Codex user's home works too: ~/.codex/AGENTS.md is the user's memory
// and ~/.codex/prompts the user's commands; a plugin with a Codex
// manifest installs.
func TestCodexHomeThroughCLI(t *testing.T) {
	w := newWorld(t)
	mustWrite(t, filepath.Join(w.home, ".codex", "AGENTS.md"), "Codex rule: small commits.\n")
	mustWrite(t, filepath.Join(w.home, ".codex", "auth.json"), `{"token":"sk-codex"}`)
	mustWrite(t, filepath.Join(w.home, ".codex", "prompts", "draftpr.md"), "---\ndescription: Draft a PR\n---\nDraft a pull request for $1.\n")
	s := w.script(`{"turns":[{"content":"done","expect":{"system_contains":["### /user/.codex/AGENTS.md\nCodex rule: small commits."],
		"system_exclude":["sk-codex"],"last_message_contains":["Draft a pull request for main."]}}]}`)
	if code, stdout, stderr := w.run(w.runArgs(s, "/draftpr main")...); code != 0 {
		t.Fatalf("exit %d: %s %s", code, stderr, stdout)
	}
	src := t.TempDir()
	mustWrite(t, filepath.Join(src, ".codex-plugin", "plugin.json"), `{"name":"codexkit","version":"0.1.0"}`)
	skill(t, filepath.Join(src, "skills"), "ship", "Ships it.")
	if code, stdout, stderr := w.run("plugin", "install", src); code != 0 || !strings.Contains(stdout, "installed codexkit 0.1.0") {
		t.Fatalf("install: exit %d: %s %s", code, stdout, stderr)
	}
	withSkill := w.script(`{"turns":[{"content":"done","expect":{"system_contains":["/user/plugins/codexkit/skills/ship/SKILL.md"]}}]}`)
	if code, stdout, stderr := w.run(w.runArgs(withSkill, "go")...); code != 0 {
		t.Fatalf("exit %d: %s %s", code, stderr, stdout)
	}
}
