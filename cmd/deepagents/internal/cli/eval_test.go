package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// deepagents eval scores the shipped dataset: the oracle solves every
// task; the harness, on a scripted trajectory, solves the task it
// solves and fails the others, in JSON and Markdown.
func TestEval(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("CI") == "" {
		t.Skip("bubblewrap is not installed")
	}
	dataset, _ := filepath.Abs("../../../../eval/dataset")
	c := newInproc(t)
	out := filepath.Join(t.TempDir(), "oracle.json")
	code, stdout, stderr := c.run("eval", "--agent", "oracle", "--json", out, filepath.Join(dataset, "count-words"))
	if code != 0 || !strings.Contains(stdout, "| **all** | 1 | 1 | 1.000 | 1.000 |") {
		t.Fatalf("oracle: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var sc struct {
		Agent string
		Total struct {
			PassAtK float64 `json:"pass_at_k"`
		}
	}
	if b, err := os.ReadFile(out); err != nil || json.Unmarshal(b, &sc) != nil || sc.Agent != "oracle" || sc.Total.PassAtK != 1 {
		t.Errorf("the JSON scorecard: %+v %v", sc, err)
	}
	script := writeScript(t, `{"turns":[{"tool_calls":[{"id":"x","name":"execute","args":{"command":"wc -w < notes.txt | tr -d ' ' > count.txt"}}]},{"content":"Counted."}]}`)
	code, stdout, stderr = c.run("eval", "--model", "replay:"+script, "-k", "2", filepath.Join(dataset, "count-words"))
	if code != 0 || !strings.Contains(stdout, "| count-words | 2 | 2 | 1.000 | 1.000 |") || !strings.Contains(stdout, "| 4 |") {
		t.Errorf("the scripted harness: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// The same script on another task does not solve it.
	code, stdout, stderr = c.run("eval", "--model", "replay:"+script, filepath.Join(dataset, "csv-total-python"))
	if code != 0 || !strings.Contains(stdout, "| **all** | 1 | 0 | 0.000 |") || !strings.Contains(stderr, "failed") {
		t.Errorf("a task the script does not solve: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// The agent runs in the sandbox, and a session that cannot open fails
	// the eval rather than every trial.
	if code, _, stderr := c.run("eval", "--sandbox", "none", "--model", "replay:"+script, dataset); code != 2 || !strings.Contains(stderr, "sandbox") {
		t.Errorf("--sandbox none: exit %d: %s", code, stderr)
	}
	if code, stdout, _ := c.run("eval", "--model", "replay:/no/such/script.json", dataset); code == 0 || strings.Contains(stdout, "| **all**") {
		t.Errorf("a model that cannot open: exit %d\n%s", code, stdout)
	}
	// Recorded, replayed: the same scorecard, byte for byte, and no
	// request differs. Replayed with another profile (another system
	// prompt), every trial says the harness now asks something else.
	rec := filepath.Join(t.TempDir(), "rec")
	code, stdout, stderr = c.run("eval", "--model", "replay:"+script, "-k", "2", "--record", rec, filepath.Join(dataset, "count-words"))
	if code != 0 {
		t.Fatalf("--record: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, f := range []string{"scorecard.json", "count-words/0.json", "count-words/1.json"} {
		if _, err := os.Stat(filepath.Join(rec, f)); err != nil {
			t.Errorf("--record wrote no %s", f)
		}
	}
	code, stdout, stderr = c.run("eval", "--replay", rec, filepath.Join(dataset, "count-words"))
	if code != 0 || !strings.Contains(stderr, "the scorecard is the recorded one, byte for byte") || !strings.Contains(stdout, "| count-words | 2 | 2 |") {
		t.Errorf("--replay: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, _, stderr = c.run("eval", "--replay", rec, "--profile", "open", filepath.Join(dataset, "count-words"))
	if code == 0 || strings.Count(stderr, "the harness now sends something else: count-words #") != 2 {
		t.Errorf("--replay with another prompt: exit %d\n%s", code, stderr)
	}
}
