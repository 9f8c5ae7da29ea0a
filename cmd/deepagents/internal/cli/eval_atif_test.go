package cli

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/eval/atif"
	"github.com/deepagents-go/deepagents/llm"
)

// deepagents eval --trajectories writes each harness trial's trajectory
// in ATIF, valid against the pinned schema: the task's instruction, the
// scripted model's tool call with what it returned, its answer. The
// oracle has none.
func TestEvalTrajectories(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("CI") == "" {
		t.Skip("bubblewrap is not installed")
	}
	dataset, _ := filepath.Abs("../../../../eval/dataset")
	task := filepath.Join(dataset, "count-words")
	instruction, err := os.ReadFile(filepath.Join(task, "instruction.md"))
	if err != nil {
		t.Fatal(err)
	}
	c := newInproc(t)
	dir := filepath.Join(t.TempDir(), "trajectories")
	script := writeScript(t, `{"turns":[{"content":"Counting.","tool_calls":[{"id":"x","name":"execute","args":{"command":"wc -w < notes.txt | tr -d ' ' > count.txt"}}]},{"content":"Counted."}]}`)
	code, stdout, stderr := c.run("eval", "--model", "replay:"+script, "-k", "2", "--trajectories", dir, task)
	if code != 0 || !strings.Contains(stdout, "| count-words | 2 | 2 |") {
		t.Fatalf("eval --trajectories: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var files []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			files = append(files, rel)
		}
		return err
	})
	if strings.Join(files, " ") != "count-words/0.json count-words/1.json" {
		t.Fatalf("--trajectories wrote %v, want a trajectory per trial", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := atif.Validate(data); err != nil {
			t.Errorf("%s does not validate: %v\n%s", f, err, data)
			continue
		}
		var tr atif.Trajectory
		if err := json.Unmarshal(data, &tr); err != nil {
			t.Fatal(err)
		}
		if tr.SchemaVersion != atif.SchemaVersion || tr.Agent.Name != "deepagents" || !strings.HasPrefix(tr.Agent.ModelName, "replay:") || tr.SessionID == "" {
			t.Errorf("%s: the header: %s", f, data)
		}
		if len(tr.Steps) != 3 || tr.Steps[0].Source != atif.SourceUser || tr.Steps[0].Message != strings.TrimSpace(string(instruction)) {
			t.Fatalf("%s: want the instruction and two agent steps:\n%s", f, data)
		}
		call, answer := tr.Steps[1], tr.Steps[2]
		if call.Message != "Counting." || len(call.ToolCalls) != 1 || call.ToolCalls[0].FunctionName != "execute" ||
			call.Observation == nil || len(call.Observation.Results) != 1 || call.Observation.Results[0].SourceCallID != call.ToolCalls[0].ToolCallID || call.Metrics == nil {
			t.Errorf("%s: the tool call's step:\n%s", f, data)
		}
		if answer.Message != "Counted." || answer.Source != atif.SourceAgent {
			t.Errorf("%s: the answer's step:\n%s", f, data)
		}
		if tr.FinalMetrics == nil || *tr.FinalMetrics.TotalSteps != 3 || tr.Extra["task"] != "count-words" || tr.Extra["status"] != "completed" {
			t.Errorf("%s: the totals and the trial: %s", f, data)
		}
	}

	oracle := filepath.Join(t.TempDir(), "oracle")
	code, _, stderr = c.run("eval", "--agent", "oracle", "--trajectories", oracle, task)
	if code != 0 || !strings.Contains(stderr, "no trajectory") {
		t.Errorf("the oracle with --trajectories: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(oracle); !os.IsNotExist(err) {
		t.Errorf("the oracle wrote trajectories: %v", err)
	}
}

// A subagent's trajectory is written beside its trial's, under a name of
// plain characters.
func TestSubagentFile(t *testing.T) {
	if got := subagentFile("0", []string{"general-purpose:call_1", "x/y:z"}); got != "0.general-purpose-call_1.x-y-z.json" {
		t.Errorf("subagentFile = %s", got)
	}
}

// The subagents' file names of a trial are distinct: a namespace run
// twice, and two namespaces of one plain name, each get a suffix, and
// the same name each time they are asked.
func TestTrialSubagentFiles(t *testing.T) {
	w := &trial{path: filepath.Join("dir", "task", "0.json"), files: map[string]string{}, used: map[string]bool{"0.json": true}}
	for _, tt := range []struct {
		ns   []string
		run  int
		want string
	}{
		{[]string{"a-b:c"}, 0, "0.a-b-c.json"},
		{[]string{"a:b-c"}, 0, "0.a-b-c~2.json"},
		{[]string{"a-b:c"}, 1, "0.a-b-c~2~2.json"},
		{[]string{"a-b:c"}, 0, "0.a-b-c.json"},
		{[]string{"x:1"}, 1, "0.x-1~2.json"},
		{[]string{"x:1"}, 0, "0.x-1.json"},
		{[]string{"a:b-c"}, 0, "0.a-b-c~2.json"},
	} {
		if got := w.subagentFile(tt.ns, tt.run); got != tt.want {
			t.Errorf("%q run %d: %s, want %s", tt.ns, tt.run, got, tt.want)
		}
	}
}

// What eval writes under --record, --replay or --trajectories DIR stays
// under DIR.
func TestJoinUnder(t *testing.T) {
	for _, tt := range []struct {
		dir  string
		elem []string
		ok   bool
	}{
		{"out", []string{"task", "0.json"}, true},
		{"out/", []string{"a.b", "0.json"}, true},
		{"/abs/out", []string{"task", "0.researcher-call_1.json"}, true},
		{"out", []string{"..", "0.json"}, false},
		{"out", []string{".", "0.json"}, true},
		{"out", []string{"a/../..", "0.json"}, false},
		{"out", []string{"..x", "0.json"}, true},
		{"out", []string{""}, false},
		{"out", []string{"/etc", "passwd"}, true}, // Join makes it out/etc/passwd
	} {
		p, err := joinUnder(tt.dir, tt.elem...)
		if (err == nil) != tt.ok {
			t.Errorf("joinUnder(%q, %q) = %q, %v", tt.dir, tt.elem, p, err)
		}
	}
}

// A price of inf or nan makes its model unpriced in a trial's cost,
// which stays a finite number.
func TestFiniteCost(t *testing.T) {
	u := llm.Usage{InputTokens: 1000, OutputTokens: 100}
	tree := &deepagents.UsageTree{Models: []deepagents.ModelUsage{{Model: "p:ok", Calls: 1, Usage: u}, {Model: "p:bad", Calls: 1, Usage: u}}}
	for _, tt := range []struct {
		name     string
		bad      float64
		unpriced string
	}{{"inf", math.Inf(1), "p:bad"}, {"nan", math.NaN(), "p:bad"}, {"finite", 1, ""}} {
		t.Run(tt.name, func(t *testing.T) {
			prices := map[string]llm.Price{"p:ok": {Input: 1, Output: 1}, "p:bad": {Input: tt.bad, Output: 1}}
			cost, unpriced := finiteCost(tree, prices)
			if math.IsNaN(cost) || math.IsInf(cost, 0) || cost <= 0 || unpriced != tt.unpriced {
				t.Errorf("cost %v, unpriced %q; want a finite cost and %q", cost, unpriced, tt.unpriced)
			}
		})
	}
}
