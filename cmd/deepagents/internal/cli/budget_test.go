package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"

	"github.com/deepagents-go/deepagents/agent"
)

// A budget of $0.05 on a scripted run that would cost $0.11: the sixth
// call is the last, asked without tools for the final answer, and the run
// ends with exit status 4 and the code budget.
func TestBudgetThroughCLI(t *testing.T) {
	w := newWorld(t)
	os.MkdirAll(filepath.Join(w.home, ".deepagents"), 0o755)
	// The scripted model priced so that each call costs $0.01.
	os.WriteFile(filepath.Join(w.home, ".deepagents", "config.yaml"), []byte("prices:\n  replay:script: {input: 10, output: 10}\n"), 0o644)
	var turns []string
	for i := range 10 {
		turns = append(turns, fmt.Sprintf(`{"tool_calls":[{"id":"c%d","name":"ls","args":{"path":"/"}}],"usage":{"input_tokens":%d}}`, i, 1000+i))
	}
	body := func(last string) string {
		return `{"turns":[` + strings.Join(turns[:5], ",") + `,` + last + `]}`
	}
	summary := `{"content":"Listed the folder five times; nothing is left.","usage":{"input_tokens":1000},
		"expect":{"no_tool_calls":true,"last_message_contains":["The budget of this task is spent (dollars: $0.05"]}}`
	code, stdout, stderr := w.run(w.runArgs(w.script(body(summary)), "--max-cost", "0.05", "go")...)
	if code != ExitStopped {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var end deepagents.Event
	var notes int
	for _, e := range events(t, stdout) {
		if e.Type == deepagents.EventRunEnd {
			end = e
		}
		if e.Type == deepagents.EventToolResult && strings.Contains(e.Content, "Budget: ") {
			notes++
		}
	}
	if end.EndCode != agent.EndBudget || !strings.Contains(end.EndReason, "dollars") {
		t.Errorf("run_end %+v", end)
	}
	if notes != 1 {
		t.Errorf("%d budget notes, want one", notes)
	}
	// The text output says why; a budget of 0 is none.
	code, stdout, stderr = w.run("run", "--model", "replay:"+w.script(body(summary)), "--dir", w.dir, "--db", w.db, "--max-cost", "0.05", "go")
	if code != ExitStopped || !strings.Contains(stderr, "deepagents: stopped (budget): dollars: $0.05") || !strings.Contains(stdout, "nothing is left") {
		t.Errorf("text output: exit %d, %q %q", code, stdout, stderr)
	}
	if code, _, stderr := w.run(w.runArgs(w.script(body(`{"content":"done"}`)), "--max-cost", "0", "go")...); code != 0 {
		t.Errorf("no limit: exit %d: %s", code, stderr)
	}
	if code, _, stderr := w.run(w.runArgs(w.script(body(`{"content":"done"}`)), "--max-cost", "-1", "go")...); code != ExitUsage {
		t.Errorf("a negative budget: exit %d: %s", code, stderr)
	}
}
