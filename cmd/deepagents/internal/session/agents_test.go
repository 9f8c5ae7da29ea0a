package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseRemoteAgentFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, file, err string
	}{
		{"ok", "---\nname: far\ndescription: Far away.\nurl: https://agents.example.com\ngraph_id: research\nheaders:\n  X-Api-Key: ${FAR_KEY}\n---\n", ""},
		{"no graph", "---\nname: far\ndescription: Far away.\nurl: https://agents.example.com\n---\n", "needs both url and graph_id"},
		{"with a prompt", "---\nname: far\ndescription: Far away.\nurl: https://a\ngraph_id: g\n---\nYou are far.\n", "defined by its server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name+".md")
			os.WriteFile(p, []byte(tc.file), 0o600)
			af, err := parseAgentFile(p, func(k string) string { return map[string]string{"FAR_KEY": "k123"}[k] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !af.remote || af.url != "https://agents.example.com" || af.graphID != "research" || af.headers["X-Api-Key"] != "k123" {
				t.Errorf("parsed %+v", af)
			}
		})
	}
}
