package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/eval"
)

// writeScorecard writes sc as eval --json would.
func writeScorecard(t *testing.T, path string, sc *eval.Scorecard) {
	t.Helper()
	b, err := json.MarshalIndent(sc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, path, string(b))
}

func TestEvalCompare(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	writeScorecard(t, a, eval.Score("harness", 1, []eval.TrialResult{
		{Task: "one", Outcome: eval.Failed, Usage: eval.Usage{Cost: 0.5, InputTokens: 100}},
		{Task: "two", Outcome: eval.Passed, Reward: 1},
	}))
	writeScorecard(t, b, eval.Score("oracle", 2, []eval.TrialResult{
		{Task: "one", Outcome: eval.Passed, Reward: 1, Usage: eval.Usage{Cost: 0.25}},
		{Task: "one", N: 1, Outcome: eval.Passed, Reward: 1},
		{Task: "three", Outcome: eval.Passed, Reward: 1},
	}))
	out, page := filepath.Join(dir, "cmp.json"), filepath.Join(dir, "cmp.html")
	code, stdout, stderr := runCLI(t, nil, "eval", "compare", "--json", out, "--html", page, a, b)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"# Eval comparison: A harness (k = 1, 2 tasks", "B oracle (k = 2, 2 tasks",
		"the agents differ", "k differs", "| one | 0.000 | 1.000 | +1.000 |", "| three (B only) |", "| two (A only) |",
		"| $0.5000 | $0.2500 | 100 | 0 |", "| **all** (1 in both) | 0.000 | 1.000 | +1.000 |",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
	var c eval.Comparison
	if b, err := os.ReadFile(out); err != nil || json.Unmarshal(b, &c) != nil || c.Total.Tasks != 1 || len(c.Tasks) != 3 {
		t.Errorf("--json: %+v %v", c, err)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "three") {
		t.Errorf("--html: %v\n%s", err, b)
	}

	bad := filepath.Join(dir, "bad.json")
	mustWrite(t, bad, "| not | json |")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"one file", []string{a}, "two scorecards"},
		{"three files", []string{a, b, b}, "two scorecards"},
		{"a missing file", []string{a, filepath.Join(dir, "missing.json")}, "missing.json"},
		{"not JSON", []string{bad, b}, "bad.json: not a scorecard"},
		{"not a scorecard", []string{a, page}, "cmp.html: not a scorecard"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, nil, append([]string{"eval", "compare"}, tt.args...)...)
			if code != ExitUsage || !strings.Contains(stderr, tt.want) || stdout != "" {
				t.Errorf("exit %d, want %d and %q\n%s\n%s", code, ExitUsage, tt.want, stdout, stderr)
			}
		})
	}
}
