package cli

import (
	"strings"
	"testing"
)

// --max-parallel-tools, a flag of the settings table alone: checked, kept
// by the thread, and a change to it noted.
func TestMaxParallelToolsFlag(t *testing.T) {
	w := newWorld(t)
	s := w.script(`{"turns":[{"content":"ok"}]}`)
	if code, _, stderr := w.run(w.runArgs(s, "--max-parallel-tools", "-1", "go")...); code != ExitUsage || !strings.Contains(stderr, "--max-parallel-tools must not be negative") {
		t.Errorf("-1: exit %d: %s", code, stderr)
	}
	if code, _, stderr := w.run(w.runArgs(s, "--thread", "p", "--max-parallel-tools", "2", "go")...); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	code, out, stderr := w.run("state", "p", "--db", w.db)
	if code != 0 || !strings.Contains(strings.ReplaceAll(out, " ", ""), `"max_parallel_tools":2`) {
		t.Errorf("state: exit %d: %s %s", code, out, stderr)
	}
	if code, _, stderr := w.run(w.runArgs(s, "--thread", "p", "--max-parallel-tools", "3", "again")...); code != 0 || !strings.Contains(stderr, "ran with --max-parallel-tools 2; this run uses 3") {
		t.Errorf("second run: exit %d: %s", code, stderr)
	}
}
