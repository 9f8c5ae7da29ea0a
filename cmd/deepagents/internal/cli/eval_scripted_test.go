package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// shippedEval is the shipped dataset and its scripted trajectories.
func shippedEval(t *testing.T) (dataset, scripts string, tasks []string) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("CI") == "" {
		t.Skip("bubblewrap is not installed")
	}
	dataset, _ = filepath.Abs("../../../../eval/dataset")
	scripts, _ = filepath.Abs("../../../../eval/scripted")
	entries, err := os.ReadDir(dataset)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(dataset, e.Name(), "task.toml")); err == nil {
			tasks = append(tasks, e.Name())
		}
	}
	// A script per task, and no script without its task.
	files, _ := filepath.Glob(filepath.Join(scripts, "*.json"))
	var scripted []string
	for _, f := range files {
		scripted = append(scripted, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	if !slices.Equal(tasks, scripted) || len(tasks) < 12 {
		t.Fatalf("the tasks %v and their scripts %v", tasks, scripted)
	}
	return dataset, scripts, tasks
}

// scriptedScores runs the scripted eval of the shipped dataset and returns
// each task's reward (k = 1).
func scriptedScores(t *testing.T) map[string]float64 {
	t.Helper()
	dataset, scripts, tasks := shippedEval(t)
	out := filepath.Join(t.TempDir(), "scorecard.json")
	code, stdout, stderr := newInproc(t).run("eval", "--model", "replay:"+scripts, "--parallel", "2", "--json", out, dataset)
	if code != 0 {
		t.Fatalf("the scripted eval: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var sc struct {
		Tasks []struct {
			Task    string
			Results []struct {
				Reward  float64
				Outcome string
				Error   string
			}
		}
	}
	b, err := os.ReadFile(out)
	if err != nil || json.Unmarshal(b, &sc) != nil || len(sc.Tasks) != len(tasks) {
		t.Fatalf("the scorecard (%v): %s", err, b)
	}
	scores := map[string]float64{}
	for _, ts := range sc.Tasks {
		if len(ts.Results) != 1 {
			t.Fatalf("%s: %d trials", ts.Task, len(ts.Results))
		}
		r := ts.Results[0]
		if r.Outcome != "passed" && r.Outcome != "failed" {
			t.Errorf("%s: %s: %s (the trajectory ran to its end either way)", ts.Task, r.Outcome, r.Error)
		}
		scores[ts.Task] = r.Reward
	}
	return scores
}

// The scripted trajectories of eval/scripted solve every task of
// eval/dataset: the harness end to end (prompt, tools, sandbox, verifier),
// with no model.
func TestScriptedEval(t *testing.T) {
	for task, reward := range scriptedScores(t) {
		if reward != 1 {
			t.Errorf("%s: its trajectory scored %v, not 1", task, reward)
		}
	}
}

// usesTool says whether the script of task calls tool.
func usesTool(t *testing.T, scripts, task, tool string) bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(scripts, task+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Turns []struct {
			ToolCalls []struct {
				Name string
			} `json:"tool_calls"`
		}
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", task, err)
	}
	for _, turn := range s.Turns {
		for _, c := range turn.ToolCalls {
			if c.Name == tool {
				return true
			}
		}
	}
	return false
}

// The eval can fail: with edit_file broken (it answers an error), the
// tasks whose trajectories edit a file score 0, and only they.
func TestBrokenToolScoresLower(t *testing.T) {
	_, scripts, tasks := shippedEval(t)
	brokenTools = []string{"edit_file"}
	t.Cleanup(func() { brokenTools = nil })
	scores := scriptedScores(t)
	var need []string
	for _, task := range tasks {
		want := 1.0
		if usesTool(t, scripts, task, "edit_file") {
			need = append(need, task)
			want = 0
		}
		if scores[task] != want {
			t.Errorf("%s with edit_file broken: %v, want %v", task, scores[task], want)
		}
	}
	if len(need) == 0 || len(need) == len(tasks) {
		t.Errorf("edit_file is in %d of %d trajectories: the test tells nothing", len(need), len(tasks))
	}
}

// A folder of scripts with none in it fails the eval at once, as a model
// that cannot open does.
func TestScriptedEvalWithoutScripts(t *testing.T) {
	dataset, _ := filepath.Abs("../../../../eval/dataset")
	code, stdout, stderr := newInproc(t).run("eval", "--model", "replay:"+t.TempDir(), dataset)
	if code != 2 || !strings.Contains(stderr, "holds no script") || strings.Contains(stdout, "| **all**") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}
