package workspace_test

import (
	"path/filepath"
	"testing"

	"github.com/deepagents-go/deepagents/workspace"
)

func TestHostPath(t *testing.T) {
	dir, user := t.TempDir(), t.TempDir()
	w, err := workspace.Open(workspace.Config{Dir: dir, UserDir: user})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, tc := range []struct {
		agent, host string
		ok          bool
	}{
		{"/src/a.go", filepath.Join(dir, "src/a.go"), true},
		{"/", dir, true},
		{"/a/../../etc/passwd", filepath.Join(dir, "etc/passwd"), true},
		{"/user/AGENTS.md", filepath.Join(user, "AGENTS.md"), true},
		{"/memories/x", "", false},
		{"/conversation_history/t.md", "", false},
		{"/large_tool_results/r", "", false},
		{"relative", "", false},
	} {
		got, ok := w.HostPath(tc.agent)
		if got != tc.host || ok != tc.ok {
			t.Errorf("HostPath(%q) = %q, %v; want %q, %v", tc.agent, got, ok, tc.host, tc.ok)
		}
		if !ok {
			continue
		}
		back, ok := w.AgentPath(got)
		if want := filepath.Clean(tc.agent); !ok || back != want && tc.agent != "/a/../../etc/passwd" {
			t.Errorf("AgentPath(%q) = %q, %v; want %q", got, back, ok, want)
		}
	}
	for _, host := range []string{"/etc/passwd", filepath.Dir(dir), "rel/path"} {
		if got, ok := w.AgentPath(host); ok {
			t.Errorf("AgentPath(%q) = %q, want none", host, got)
		}
	}
	state, err := workspace.Open(workspace.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := state.HostPath("/a.go"); ok {
		t.Errorf("a workspace in the state has host path %q", got)
	}
}
