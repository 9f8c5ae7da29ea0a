package eval_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/eval"
	"github.com/deepagents-go/deepagents/internal/golden"
)

// trial is a finished trial for fixed scorecards.
func trial(task string, n int, o eval.Outcome, cost float64, tokens int, errText string) eval.TrialResult {
	r := eval.TrialResult{Task: task, N: n, Outcome: o, Error: errText, Wall: time.Duration(n+1) * time.Second,
		Usage: eval.Usage{InputTokens: tokens, OutputTokens: tokens / 10, Cost: cost, Steps: 3}}
	if o == eval.Passed {
		r.Reward = 1
	}
	return r
}

// before and after are two small fixed scorecards: after solves more,
// for more, and has a task before lacks (and lacks one it has).
func before() *eval.Scorecard {
	sc := eval.Score("harness", 2, []eval.TrialResult{
		trial("alpha", 0, eval.Passed, 0.01, 1000, ""),
		trial("alpha", 1, eval.Failed, 0.012, 1200, ""),
		trial("beta", 0, eval.Failed, 0.02, 2000, ""),
		trial("beta", 1, eval.AgentTimeout, 0.05, 5000, "context deadline exceeded"),
		trial("gamma", 0, eval.Failed, 0.001, 100, ""),
		trial("gamma", 1, eval.Failed, 0.001, 100, ""),
		trial("old-only", 0, eval.Passed, 0.003, 300, ""),
		trial("old-only", 1, eval.Passed, 0.003, 300, ""),
	})
	sc.Elapsed = 9 * time.Second
	return sc
}

func after() *eval.Scorecard {
	sc := eval.Score("harness", 2, []eval.TrialResult{
		trial("alpha", 0, eval.Passed, 0.02, 1500, ""),
		trial("alpha", 1, eval.Passed, 0.02, 1500, ""),
		trial("beta", 0, eval.Passed, 0.04, 3000, ""),
		trial("beta", 1, eval.AgentError, 0.03, 2500, "the run ended failed: model overloaded"),
		trial("gamma", 0, eval.Failed, 0.002, 200, ""),
		trial("gamma", 1, eval.VerifierError, 0.002, 200, "eval: the verifier wrote no reward"),
		trial("new-only", 0, eval.Passed, 0.004, 400, ""),
		trial("new-only", 1, eval.Failed, 0.004, 400, ""),
	})
	sc.Elapsed = 8 * time.Second
	return sc
}

func TestCompareMarkdownGolden(t *testing.T) {
	c := eval.Compare(before(), after())
	golden.Check(t, "testdata/compare.md.golden", []byte(c.Markdown()))
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/compare.json.golden", append(b, '\n'))
}

func TestCompare(t *testing.T) {
	c := eval.Compare(before(), after())
	names := []string{}
	for _, tc := range c.Tasks {
		names = append(names, tc.Task)
	}
	if strings.Join(names, " ") != "alpha beta gamma new-only old-only" {
		t.Fatalf("tasks %v", names)
	}
	by := map[string]eval.TaskComparison{}
	for _, tc := range c.Tasks {
		by[tc.Task] = tc
	}
	if tc := by["old-only"]; tc.A == nil || tc.B != nil || tc.CI != nil {
		t.Errorf("a task in A only: %+v", tc)
	}
	if tc := by["new-only"]; tc.A != nil || tc.B == nil || tc.CI != nil {
		t.Errorf("a task in B only: %+v", tc)
	}
	// alpha: pass@2 of 1/2 is 1, of 2/2 is 1: no difference in pass@2,
	// but the pass rate went from 1/2 to 2/2.
	if tc := by["alpha"]; tc.Diff != 0 || tc.CI == nil || tc.CI.Low >= 0 || tc.CI.High <= 0.5 {
		t.Errorf("alpha: %+v %v", tc, tc.CI)
	}
	if tc := by["alpha"]; tc.A.Tokens != 1000+100+1200+120 || tc.B.Cost != 0.04 {
		t.Errorf("alpha's usage: %+v %+v", tc.A, tc.B)
	}
	tot := c.Total
	// Over alpha, beta and gamma: A's pass@2 are 1, 0 and 0, B's 1, 1
	// and 0.
	if tot.Tasks != 3 || math.Abs(tot.A-1.0/3) > 1e-12 || math.Abs(tot.B-2.0/3) > 1e-12 || tot.CI == nil {
		t.Errorf("total %+v", tot)
	}
	if tot.CI.Low > tot.Diff || tot.CI.High < tot.Diff {
		t.Errorf("the total's interval %v leaves out its difference %v", tot.CI, tot.Diff)
	}
	if again := eval.Compare(before(), after()); *again.Total.CI != *tot.CI {
		t.Errorf("the bootstrap is not deterministic: %v then %v", tot.CI, again.Total.CI)
	}
	if len(c.Notes) != 2 {
		t.Errorf("notes %q", c.Notes)
	}
}

// A different agent, k or a partial scorecard is said, not refused.
func TestCompareNotes(t *testing.T) {
	other := eval.Score("oracle", 1, []eval.TrialResult{trial("alpha", 0, eval.Passed, 0, 0, "")})
	other.Partial = true
	for _, tt := range []struct {
		name string
		a, b *eval.Scorecard
		want []string
	}{
		{"same", before(), before(), nil},
		{"agent, k and partial", before(), other, []string{"the agents differ: A is harness, B is oracle", "k differs: A's pass@2 is compared with B's pass@1", "B is partial", "3 tasks are in A only"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := eval.Compare(tt.a, tt.b)
			md := c.Markdown()
			if len(tt.want) == 0 && len(c.Notes) != 0 {
				t.Errorf("notes %q", c.Notes)
			}
			for _, w := range tt.want {
				if !strings.Contains(md, w) {
					t.Errorf("no %q in\n%s", w, md)
				}
			}
		})
	}
	// No task in common: no total, no interval.
	c := eval.Compare(before(), eval.Score("harness", 2, []eval.TrialResult{trial("zeta", 0, eval.Passed, 0, 0, "")}))
	if c.Total.Tasks != 0 || c.Total.CI != nil || !strings.Contains(c.Markdown(), "no task in both") {
		t.Errorf("no task in common: %+v", c.Total)
	}
}

func TestReadScorecard(t *testing.T) {
	dir := t.TempDir()
	good, _ := json.Marshal(before())
	for _, tt := range []struct {
		name, body, want string
	}{
		{"a scorecard", string(good), ""},
		{"not JSON", "| task | trials |", "not a scorecard"},
		{"an array", "[1, 2]", "not a scorecard"},
		{"no agent", `{"k": 1, "tasks": []}`, "no agent"},
		{"no k", `{"agent": "a", "tasks": []}`, "k is 0"},
		{"a task twice", `{"agent": "a", "k": 1, "tasks": [{"task": "x", "trials": 1}, {"task": "x", "trials": 1}]}`, "twice"},
		{"more passed than trials", `{"agent": "a", "k": 1, "tasks": [{"task": "x", "trials": 1, "passed": 2}]}`, "2 passed of 1"},
		{"a nameless task", `{"agent": "a", "k": 1, "tasks": [{"trials": 1}]}`, "no name"},
		{"pass@k above 1", `{"agent": "a", "k": 1, "tasks": [{"task": "x", "trials": 1, "passed": 1, "pass_at_k": 2}]}`, "pass@k"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".json")
			if err := os.WriteFile(p, []byte(tt.body), 0o644); err != nil {
				t.Fatal(err)
			}
			sc, err := eval.ReadScorecard(p)
			switch {
			case tt.want == "" && (err != nil || sc.Agent != "harness" || len(sc.Tasks) != 4):
				t.Errorf("%+v, %v", sc, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), p)):
				t.Errorf("got %v, want an error naming the file and %q", err, tt.want)
			}
		})
	}
	if _, err := eval.ReadScorecard(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file is a scorecard")
	}
}

// scoreOf is a scorecard of agent at k with, per task, passed of trials.
func scoreOf(agent string, k int, tasks map[string][2]int) *eval.Scorecard {
	var rs []eval.TrialResult
	for name, pt := range tasks {
		for n := range pt[1] {
			o := eval.Failed
			if n < pt[0] {
				o = eval.Passed
			}
			rs = append(rs, trial(name, n, o, 0, 0, ""))
		}
	}
	return eval.Score(agent, k, rs)
}

// The total's interval draws the trials of each task as well as the
// tasks: three tasks each 0 of 1 against 1 of 1 are three coin flips,
// not a sure +1.
func TestCompareTotalIntervalDrawsTrials(t *testing.T) {
	for _, tt := range []struct {
		name string
		a, b map[string][2]int
		k    int
	}{
		{"three coin flips", map[string][2]int{"x": {0, 1}, "y": {0, 1}, "z": {0, 1}}, map[string][2]int{"x": {1, 1}, "y": {1, 1}, "z": {1, 1}}, 1},
		{"the same in both", map[string][2]int{"x": {1, 2}, "y": {1, 2}}, map[string][2]int{"x": {1, 2}, "y": {1, 2}}, 1},
		{"pass@2", map[string][2]int{"x": {0, 2}, "y": {0, 2}}, map[string][2]int{"x": {2, 2}, "y": {2, 2}}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := eval.Compare(scoreOf("a", tt.k, tt.a), scoreOf("b", tt.k, tt.b))
			ci := c.Total.CI
			if ci == nil || ci.Low >= ci.High || ci.Low > c.Total.Diff || ci.High < c.Total.Diff {
				t.Fatalf("the total's interval %v for a difference of %+.3f", ci, c.Total.Diff)
			}
			if c.Total.Diff == 1 && ci.Low >= 1 {
				t.Errorf("the interval %v leaves out any chance that B is not always better", ci)
			}
			if again := eval.Compare(scoreOf("a", tt.k, tt.a), scoreOf("b", tt.k, tt.b)); *again.Total.CI != *ci {
				t.Errorf("not deterministic: %v then %v", ci, again.Total.CI)
			}
		})
	}
}

// A task's interval is for the difference printed, its pass@k's, also
// when k > 1 (a bootstrap of its trials), and Newcombe's at pass@1.
func TestCompareTaskIntervalIsOfPassAtK(t *testing.T) {
	for _, tt := range []struct {
		name       string
		k          int
		a, b       [2]int // passed, trials
		method     string
		diffInside bool
	}{
		{"k = 1", 1, [2]int{1, 4}, [2]int{3, 4}, eval.CINewcombe, true},
		{"pass@2 of 1/2 against 0/2", 2, [2]int{1, 2}, [2]int{0, 2}, eval.CIBootstrap, true},
		{"pass@2 of 1/3 against 3/3", 2, [2]int{1, 3}, [2]int{3, 3}, eval.CIBootstrap, true},
		{"pass@3 of 2/5 against 1/5", 3, [2]int{2, 5}, [2]int{1, 5}, eval.CIBootstrap, true},
		{"k = 2 of one trial each: pass@1", 2, [2]int{0, 1}, [2]int{1, 1}, eval.CINewcombe, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := eval.Compare(scoreOf("a", tt.k, map[string][2]int{"x": tt.a}), scoreOf("b", tt.k, map[string][2]int{"x": tt.b}))
			tc := c.Tasks[0]
			if tc.CI == nil || tc.CIMethod != tt.method {
				t.Fatalf("the interval %v by %q, want by %q", tc.CI, tc.CIMethod, tt.method)
			}
			if tc.CI.Low > tc.Diff || tc.CI.High < tc.Diff || tc.CI.Low < -1 || tc.CI.High > 1 {
				t.Errorf("the interval %v leaves out the difference printed, %+.3f", tc.CI, tc.Diff)
			}
			again := eval.Compare(scoreOf("a", tt.k, map[string][2]int{"x": tt.a}), scoreOf("b", tt.k, map[string][2]int{"x": tt.b}))
			if *again.Tasks[0].CI != *tc.CI {
				t.Errorf("not deterministic: %v then %v", tc.CI, again.Tasks[0].CI)
			}
		})
	}
}
