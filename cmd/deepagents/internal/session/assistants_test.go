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

// An assistant sets the harness's guards as the user's file does: the
// loop guard, the verification pass, budgets, the local context.
func TestAssistantsHarness(t *testing.T) {
	file := filepath.Join(t.TempDir(), "assistants.yaml")
	os.WriteFile(file, []byte("assistants:\n  - graph_id: a\n    loops: {nudge: 4, stop: 9}\n    verify: {passes: 2}\n    budget: {dollars: 1, time: 10m}\n    local_context: true\n  - graph_id: b\n    max_cost: 0\n"), 0o644)
	specs, err := LoadAssistants(file)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Resolve(Inputs{Flags: Flags{Dir: t.TempDir(), Sandbox: "bwrap"}, Served: true, Assistant: &specs[0]})
	if err != nil {
		t.Fatal(err)
	}
	if c.Loops.Nudge != 4 || c.Loops.Stop != 9 || c.Verify == nil || c.Verify.Passes != 2 || !c.LocalContext ||
		c.Budget.Dollars != 1 || c.Budget.Time.Minutes() != 10 {
		t.Errorf("spec: loops %+v verify %+v local %v budget %+v", c.Loops, c.Verify, c.LocalContext, c.Budget)
	}
	c, err = Resolve(Inputs{Flags: Flags{Dir: t.TempDir(), Sandbox: "bwrap"}, Served: true, Assistant: &specs[1]})
	if err != nil {
		t.Fatal(err)
	}
	if c.Budget.Dollars != 0 || c.Verify != nil || c.LocalContext {
		t.Errorf("an assistant without them: budget %+v verify %+v", c.Budget, c.Verify)
	}
	// Without either, the CLI's default budget.
	c, err = Resolve(Inputs{Flags: Flags{Dir: t.TempDir(), Sandbox: "bwrap"}, Served: true, Assistant: &Assistant{GraphID: "c"}})
	if err != nil || c.Budget.Dollars != DefaultMaxCost {
		t.Errorf("default budget %+v %v", c.Budget, err)
	}
}

// verify.rubric_file reads the rubric from a file beside the configuration;
// a missing one is a usage error that names it.
func TestVerifyRubricFile(t *testing.T) {
	places := home(t, "verify: {rubric_file: rubric.md}\n")
	mustWrite(t, filepath.Join(filepath.Dir(places.Config), "rubric.md"), "Name every file changed.\n")
	c, err := Resolve(Inputs{Flags: Flags{Dir: t.TempDir(), Sandbox: "bwrap"}, Places: places})
	if err != nil {
		t.Fatal(err)
	}
	if c.Verify == nil || c.Verify.Rubric != "Name every file changed.\n" {
		t.Errorf("verify %+v", c.Verify)
	}
	places = home(t, "verify: {rubric_file: missing.md}\n")
	if _, err := Resolve(Inputs{Flags: Flags{Dir: t.TempDir(), Sandbox: "bwrap"}, Places: places}); err == nil || !strings.Contains(err.Error(), "verify.rubric_file") {
		t.Errorf("a missing rubric file: %v", err)
	}
}
