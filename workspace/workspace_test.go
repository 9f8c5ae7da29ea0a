package workspace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/permission"
	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/thread"
	"github.com/deepagents-go/deepagents/workspace"
)

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func denyRead(t *testing.T, glob string) *permission.Rules {
	t.Helper()
	r, err := permission.ParseRule(permission.Deny, "read_file("+glob+")")
	if err != nil {
		t.Fatal(err)
	}
	return permission.New(r)
}

// The routes and their rules: /user/ reads but does not write, the host
// paths of ReadOnly and Unreadable hold through the workspace, the paths
// the rules deny read_file leave listings and greps, and /memories/ is the
// store's.
func TestOpenRoutesAndProtections(t *testing.T) {
	ctx := context.Background()
	dir, user := t.TempDir(), t.TempDir()
	write(t, filepath.Join(user, "AGENTS.md"), "be brief\n")
	write(t, filepath.Join(dir, ".env"), "KEY=sk-secret\n")
	write(t, filepath.Join(dir, "keys.txt"), "sk-hidden\n")
	write(t, filepath.Join(dir, "main.go"), "package main // KEY\n")
	rules := denyRead(t, "**/.env")
	st := store.NewMemoryStore()
	ws, err := workspace.Open(workspace.Config{
		Dir: dir, UserDir: user, Store: st, Rules: rules,
		ReadOnly:   []string{filepath.Join(dir, "main.go")},
		Unreadable: []string{filepath.Join(dir, "keys.txt")},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	b := ws.Backend
	if r, err := b.Read(ctx, "/user/AGENTS.md", 0, 0); err != nil || len(r.Lines) != 1 {
		t.Errorf("reading /user/AGENTS.md: %v %v", r, err)
	}
	if err := b.Write(ctx, "/user/skills/evil/SKILL.md", "obey"); err == nil {
		t.Error("/user/ is writable")
	}
	if err := b.Write(ctx, "/main.go", "package evil"); err == nil {
		t.Error("a read-only host path was written")
	}
	if _, err := b.Read(ctx, "/keys.txt", 0, 0); err == nil {
		t.Error("an unreadable host path was read")
	}
	ms, _ := b.Grep(ctx, backend.GrepQuery{Pattern: "KEY"})
	for _, m := range ms {
		if strings.Contains(m.Path, ".env") {
			t.Errorf("grep shows %s", m.Path)
		}
	}
	if err := b.Write(ctx, "/memories/notes.md", "kept"); err != nil {
		t.Fatal(err)
	}
	if items, _ := st.Search(ctx, nil, store.SearchOptions{}); len(items) != 1 {
		t.Errorf("the store holds %d items, want the memory", len(items))
	}
	// Without HistoryDir, the history is in the run's state.
	run := thread.WithFiles(ctx, thread.NewFiles(nil))
	if _, err := b.Read(run, "/conversation_history/x.md", 0, 0); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("the history in the thread's state: %v", err)
	}
	if want := []string{"/user/AGENTS.md", "/AGENTS.md"}; !slices.Equal(ws.Memory, want) {
		t.Errorf("Memory = %v, want %v", ws.Memory, want)
	}
	if want := []string{"/user/skills/", "/.deepagents/skills/"}; !slices.Equal(ws.Skills, want) {
		t.Errorf("Skills = %v, want %v", ws.Skills, want)
	}
	if _, ok := b.(backend.Sandbox); ok {
		t.Error("a workspace without Shell executes")
	}
}

// Without a folder the workspace is each thread's state, and without a
// user folder nothing is read from /user/.
func TestOpenWithoutFolders(t *testing.T) {
	ws, err := workspace.Open(workspace.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if want := []string{"/AGENTS.md"}; !slices.Equal(ws.Memory, want) {
		t.Errorf("Memory = %v, want %v", ws.Memory, want)
	}
	if want := []string{"/.deepagents/skills/"}; !slices.Equal(ws.Skills, want) {
		t.Errorf("Skills = %v, want %v", ws.Skills, want)
	}
	files := thread.NewFiles(nil)
	if err := ws.Backend.Write(thread.WithFiles(context.Background(), files), "/memories/x.md", "x"); err != nil {
		t.Errorf("without a store /memories/ is the thread's state, like any path: %v", err)
	}
	if _, ok := files.Get("/memories/x.md"); !ok {
		t.Error("/memories/x.md is not in the thread's files")
	}
}

// With Shell the backend runs commands, through the read rules' policy.
func TestOpenShell(t *testing.T) {
	rules := denyRead(t, "**/.env")
	ws, err := workspace.Open(workspace.Config{Dir: t.TempDir(), Shell: true, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	sb, ok := ws.Backend.(backend.Sandbox)
	if !ok {
		t.Fatal("a workspace with Shell does not execute")
	}
	if res, err := sb.Execute(context.Background(), "echo hi", 0); err != nil || !strings.Contains(res.Output, "hi") {
		t.Errorf("execute: %+v %v", res, err)
	}
}

// RemoveHistory leaves subagents' threads and an empty folder alone.
func TestRemoveHistoryNothing(t *testing.T) {
	if err := workspace.RemoveHistory("", "a"); err != nil {
		t.Error(err)
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a", "a.md"), "x")
	if err := workspace.RemoveHistory(dir, "a/call"); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "a.md")); err != nil {
		t.Errorf("a subagent's thread removed its parent's history: %v", err)
	}
}

// The skill folders other agents keep in the home (Claude Code's
// ~/.claude/skills, ~/.agents/skills) are shown read-only under /user/ with
// their names there, those that exist only, before the user's own; the
// hooks' paths map to them and back.
func TestOtherAgentsSkills(t *testing.T) {
	ctx := context.Background()
	dir, home := t.TempDir(), t.TempDir()
	user := filepath.Join(home, ".deepagents")
	write(t, filepath.Join(home, ".claude", "skills", "review", "SKILL.md"), "---\nname: review\n---\n")
	write(t, filepath.Join(dir, "CLAUDE.md"), "Use tabs.\n")
	write(t, filepath.Join(home, ".claude", "CLAUDE.md"), "I like short answers.\n")
	write(t, filepath.Join(home, ".claude", ".credentials.json"), `{"token":"sk-ant-secret"}`)
	write(t, filepath.Join(home, ".claude", "settings.json"), `{"hooks":{}}`)
	ws, err := workspace.Open(workspace.Config{Dir: dir, UserDir: user, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	// The workspace's are read only with OtherAgents.
	if want := []string{"/user/.claude/skills/", "/user/skills/", "/.deepagents/skills/"}; !slices.Equal(ws.Skills, want) {
		t.Errorf("Skills = %v, want %v", ws.Skills, want)
	}
	if want := []string{"/user/AGENTS.md", "/user/.claude/CLAUDE.md", "/AGENTS.md"}; !slices.Equal(ws.Memory, want) {
		t.Errorf("Memory = %v, want %v", ws.Memory, want)
	}
	// Of ~/.claude, only CLAUDE.md and the skills are read.
	if r, err := ws.Backend.Read(ctx, "/user/.claude/CLAUDE.md", 0, 0); err != nil || len(r.Lines) == 0 {
		t.Errorf("reading ~/.claude/CLAUDE.md: %v %v", r, err)
	}
	for _, p := range []string{"/user/.claude/.credentials.json", "/user/.claude/settings.json"} {
		if _, err := ws.Backend.Read(ctx, p, 0, 0); err == nil {
			t.Errorf("%s was read", p)
		}
	}
	ms, _ := ws.Backend.Grep(ctx, backend.GrepQuery{Pattern: "sk-ant"})
	if len(ms) > 0 {
		t.Errorf("grep finds the sign-in: %v", ms)
	}
	trusted, err := workspace.Open(workspace.Config{Dir: dir, UserDir: user, Home: home, OtherAgents: true})
	if err != nil {
		t.Fatal(err)
	}
	defer trusted.Close()
	if want := []string{"/user/.claude/skills/", "/user/skills/", "/.agents/skills/", "/.claude/skills/", "/.deepagents/skills/"}; !slices.Equal(trusted.Skills, want) {
		t.Errorf("Skills = %v, want %v", trusted.Skills, want)
	}
	if want := []string{"/user/AGENTS.md", "/user/.claude/CLAUDE.md", "/AGENTS.md", "/CLAUDE.md"}; !slices.Equal(trusted.Memory, want) {
		t.Errorf("Memory = %v, want %v", trusted.Memory, want)
	}
	// A CLAUDE.md that links to AGENTS.md is not listed: the file tools
	// read no link, and AGENTS.md is read anyway.
	os.Remove(filepath.Join(dir, "CLAUDE.md"))
	if err := os.Symlink("AGENTS.md", filepath.Join(dir, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	linked, err := workspace.Open(workspace.Config{Dir: dir, UserDir: user, Home: home, OtherAgents: true})
	if err != nil {
		t.Fatal(err)
	}
	defer linked.Close()
	if want := []string{"/user/AGENTS.md", "/user/.claude/CLAUDE.md", "/AGENTS.md"}; !slices.Equal(linked.Memory, want) {
		t.Errorf("Memory with a linked CLAUDE.md = %v, want %v", linked.Memory, want)
	}
	b := ws.Backend
	if r, err := b.Read(ctx, "/user/.claude/skills/review/SKILL.md", 0, 0); err != nil || len(r.Lines) != 3 {
		t.Errorf("reading the skill: %v %v", r, err)
	}
	if err := b.Write(ctx, "/user/.claude/skills/planted/SKILL.md", "obey"); err == nil {
		t.Error("the home's skills are writable")
	}
	if _, err := os.Stat(filepath.Join(home, ".claude", "skills", "planted")); err == nil {
		t.Error("a skill was planted in the home")
	}
	host := filepath.Join(home, ".claude", "skills", "review", "SKILL.md")
	if got, ok := ws.HostPath("/user/.claude/skills/review/SKILL.md"); !ok || got != host {
		t.Errorf("HostPath = %q, %v; want %q", got, ok, host)
	}
	if got, ok := ws.AgentPath(host); !ok || got != "/user/.claude/skills/review/SKILL.md" {
		t.Errorf("AgentPath = %q, %v", got, ok)
	}
	if got, ok := ws.HostPath("/user/AGENTS.md"); !ok || got != filepath.Join(user, "AGENTS.md") {
		t.Errorf("HostPath of the user's own folder = %q, %v", got, ok)
	}
}
