package session

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/deepagents-go/deepagents/persist"
)

func mustWrite(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestProtectHostLists checks what the sandbox is told to keep read-only
// and hidden.
func TestProtectHostLists(t *testing.T) {
	home := t.TempDir()
	getenv := func(k string) string {
		return map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "xdg")}[k]
	}
	mustWrite(t, filepath.Join(home, ".deepagents", "agents", "remote.md"), "---\nname: r\ndescription: remote\nurl: http://127.0.0.1:1\ngraph_id: g\nheaders: {x-api-key: sk-1}\n---\n")
	mustWrite(t, filepath.Join(home, ".deepagents", "agents", "local.md"), "---\nname: l\ndescription: local\n---\nHelp.")
	db := &persist.DB{Kind: persist.KindSQLite, Location: filepath.Join(home, "data", "deepagents.db")}
	r := &resolver{in: Inputs{Getenv: getenv, Places: Locate(getenv), DB: db}, f: Flags{MCPConfigs: []string{filepath.Join(home, "servers.json")}}}
	var h struct{ readOnly, unreadable []string }
	h.readOnly, h.unreadable = r.protectHost()
	for _, want := range []string{".deepagents", "xdg/deepagents", ".bashrc", ".zshrc", ".profile", ".config/fish", "xdg/fish", ".gitconfig", ".local/lib", ".cargo/config.toml", ".docker/config.json", ".claude", ".agents", ".codex"} {
		if !contains(h.readOnly, filepath.Join(home, want)) {
			t.Errorf("read-only lacks %s: %v", want, h.readOnly)
		}
	}
	for _, want := range []string{".deepagents/config.yaml", ".deepagents/mcp.json", "xdg/deepagents/config.yaml", "servers.json", ".deepagents/agents/remote.md", "data/deepagents.db", "data/deepagents.db-wal", "data/deepagents.db.history", ".claude/.credentials.json", ".claude.json", ".codex/auth.json"} {
		if !contains(h.unreadable, filepath.Join(home, want)) {
			t.Errorf("unreadable lacks %s: %v", want, h.unreadable)
		}
	}
	if contains(h.unreadable, filepath.Join(home, ".deepagents", "agents", "local.md")) {
		t.Error("a subagent without keys is hidden")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestModelNamesEndpoint: what a project's subagent file may not name
// (cli's TestWorkspaceCannotChooseModelServer runs it through the CLI).
func TestModelNamesEndpoint(t *testing.T) {
	for spec, want := range map[string]bool{
		"openai:gpt-4.1": false, "anthropic:claude-x@20240620": false, "openai:m@HTTP://h/v1": true,
		"openai:m@host.example:80": true, "ollama:qwen3": false, "x:y@h/v1": true,
	} {
		if got := modelNamesEndpoint(spec); got != want {
			t.Errorf("modelNamesEndpoint(%q) = %v", spec, got)
		}
	}
}
