package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"
)

// TestAssistantsFileSubagentMode: an assistants file's subagents take a
// mode too.
func TestAssistantsFileSubagentMode(t *testing.T) {
	file := filepath.Join(t.TempDir(), "assistants.yaml")
	os.WriteFile(file, []byte("assistants:\n  - graph_id: a\n    subagents:\n      - {name: twin, description: d, mode: fork}\n      - {name: other, description: d}\n"), 0o644)
	specs, err := LoadAssistants(file)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Resolve(Inputs{Flags: Flags{Dir: t.TempDir(), Sandbox: "bwrap"}, Served: true, Assistant: &specs[0]})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Subagents) != 2 || c.Subagents[0].Mode != deepagents.SubagentFork || c.Subagents[1].Mode != "" {
		t.Errorf("subagents %+v", c.Subagents)
	}
	os.WriteFile(file, []byte("assistants:\n  - graph_id: a\n    subagents:\n      - {name: twin, description: d, mode: clone}\n"), 0o644)
	if _, err := LoadAssistants(file); err == nil || !strings.Contains(err.Error(), `subagent "twin": mode must be isolated or fork`) {
		t.Errorf("unknown mode: %v", err)
	}
}
