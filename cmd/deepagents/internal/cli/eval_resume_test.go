package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/eval"
)

// tinyDataset makes a dataset of tasks the oracle solves in an instant:
// each writes done.txt.
func tinyDataset(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		mustWrite(t, filepath.Join(dir, n, "instruction.md"), "Write done.txt.\n")
		mustWrite(t, filepath.Join(dir, n, "task.toml"), "version = \"1.0\"\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 60.0\n")
		mustWrite(t, filepath.Join(dir, n, "environment", "README"), "a task\n")
		mustWrite(t, filepath.Join(dir, n, "solution", "solve.sh"), "#!/bin/bash\necho done > done.txt\n")
		mustWrite(t, filepath.Join(dir, n, "tests", "test.sh"), "#!/bin/bash\nif [ -f done.txt ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n")
	}
	return dir
}

// progress are the trials an eval's progress lines name ("one #0").
func progress(stderr string) []string {
	var ran []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "[") {
			if _, rest, ok := strings.Cut(l, "] "); ok {
				task, _, _ := strings.Cut(rest, ":")
				ran = append(ran, task)
			}
		}
	}
	return ran
}

// --log logs each trial; an eval cut short (a log with some of its
// trials and a last line cut mid-write) and resumed with --resume runs
// only the trials the log lacks, and appends them to it.
func TestEvalResume(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("CI") == "" {
		t.Skip("bubblewrap is not installed")
	}
	dataset := tinyDataset(t, "one", "two")
	c := newInproc(t)
	dir := t.TempDir()

	full := filepath.Join(dir, "full.jsonl")
	page := filepath.Join(dir, "page.html")
	code, stdout, stderr := c.run("eval", "--agent", "oracle", "-k", "2", "--log", full, "--html", page, dataset)
	if code != 0 || len(progress(stderr)) != 4 {
		t.Fatalf("--log: exit %d\n%s\n%s", code, stdout, stderr)
	}
	lc, err := eval.ReadLog(full)
	if err != nil || len(lc.Trials) != 4 || lc.Header.Agent != "oracle" || lc.Header.K != 2 || lc.Header.Dataset != dataset {
		t.Fatalf("the log: %+v %v", lc, err)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), ">two</td>") {
		t.Errorf("--html: %v\n%s", err, b)
	}
	if code, _, stderr := c.run("eval", "--agent", "oracle", "-k", "2", "--log", full, dataset); code != ExitUsage || !strings.Contains(stderr, "--resume "+full) {
		t.Errorf("--log over a log: exit %d\n%s", code, stderr)
	}

	// Cut short: one #0 (logged as failed, so that the scorecard shows
	// it was kept) and one #1 done, two #0 being written.
	cut := filepath.Join(dir, "cut.jsonl")
	mustWrite(t, cut, `{"eval_log":1,"dataset":"`+dataset+`","agent":"oracle","k":2}
{"task":"one","n":0,"reward":0,"outcome":"failed","verifier_exit":0,"usage":{"steps":1},"wall_ns":1}
{"task":"one","n":1,"reward":1,"outcome":"passed","verifier_exit":0,"usage":{"steps":1},"wall_ns":1}
{"task":"two","n":0,"rew`)
	code, stdout, stderr = c.run("eval", "--agent", "oracle", "-k", "2", "--resume", cut, dataset)
	if code != 0 {
		t.Fatalf("--resume: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if ran := progress(stderr); strings.Join(ran, ",") != "two #0,two #1" && strings.Join(ran, ",") != "two #1,two #0" {
		t.Errorf("--resume ran %q, want two's trials alone\n%s", ran, stderr)
	}
	for _, want := range []string{"was cut short", "2 of 4 trials are in", "2 to run", "[3/4]", "[4/4]"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("no %q in\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, "| one | 2 | 1 | 1.000 | 0.500 |") || !strings.Contains(stdout, "| two | 2 | 2 |") {
		t.Errorf("the resumed scorecard:\n%s", stdout)
	}
	if lc, err := eval.ReadLog(cut); err != nil || len(lc.Trials) != 4 || lc.Truncated != 0 {
		b, _ := os.ReadFile(cut)
		t.Errorf("the log after --resume: %+v %v\n%s", lc, err, b)
	}
	// Resumed again, nothing is left to run.
	code, stdout, stderr = c.run("eval", "--agent", "oracle", "-k", "2", "--resume", cut, "--log", cut, dataset)
	if code != 0 || len(progress(stderr)) != 0 || !strings.Contains(stderr, "0 to run") || !strings.Contains(stdout, "| **all** | 4 | 3 |") {
		t.Errorf("--resume of a finished eval: exit %d\n%s\n%s", code, stdout, stderr)
	}

	garbage := filepath.Join(dir, "garbage.jsonl")
	mustWrite(t, garbage, "not a log\n")
	harness := filepath.Join(dir, "harness.jsonl")
	mustWrite(t, harness, `{"eval_log":1,"dataset":"`+dataset+`","agent":"harness","k":2}`+"\n")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"another k", []string{"--agent", "oracle", "-k", "3", "--resume", full}, "logs an eval of the agent oracle with k = 2, not of oracle with k = 3"},
		{"another agent", []string{"--agent", "oracle", "-k", "2", "--resume", harness}, "logs an eval of the agent harness with k = 2, not of oracle with k = 2"},
		{"a missing log", []string{"--agent", "oracle", "--resume", filepath.Join(dir, "missing.jsonl")}, "missing.jsonl"},
		{"not a log", []string{"--agent", "oracle", "--resume", garbage}, "not an eval log"},
		{"another --log", []string{"--agent", "oracle", "--resume", full, "--log", garbage}, "no --log of another file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := c.run(append(append([]string{"eval"}, tt.args...), dataset)...)
			if code != ExitUsage || !strings.Contains(stderr, tt.want) || len(progress(stderr)) != 0 {
				t.Errorf("exit %d, want %d and %q\n%s\n%s", code, ExitUsage, tt.want, stdout, stderr)
			}
		})
	}
}

// A log another eval has open is refused, as a usage error, before any
// trial runs.
func TestEvalResumeLockedLog(t *testing.T) {
	dataset := tinyDataset(t, "one")
	c := newInproc(t)
	path := filepath.Join(t.TempDir(), "log.jsonl")
	l, err := eval.CreateLog(path, eval.LogHeader{Dataset: dataset, Agent: "oracle", K: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	code, stdout, stderr := c.run("eval", "--agent", "oracle", "--resume", path, dataset)
	if code != ExitUsage || !strings.Contains(stderr, "another eval has the log open") || len(progress(stderr)) != 0 {
		t.Errorf("--resume of a locked log: exit %d, want %d\n%s\n%s", code, ExitUsage, stdout, stderr)
	}
}

// The log's header names the model, the mode and the dataset's tasks;
// --resume refuses a log of another model, mode or tasks, naming what
// differs, and takes an older header without them with a note.
func TestEvalResumeHeader(t *testing.T) {
	dataset := tinyDataset(t, "one", "two")
	c := newInproc(t)
	dir := t.TempDir()
	logged := filepath.Join(dir, "logged.jsonl")
	if code, stdout, stderr := c.run("eval", "--agent", "oracle", "--log", logged, dataset); code != 0 {
		t.Fatalf("--log: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if lc, err := eval.ReadLog(logged); err != nil || strings.Join(lc.Header.Tasks, ",") != "one,two" || lc.Header.Model != "" {
		t.Fatalf("the header: %+v %v", lc, err)
	}
	head := `{"eval_log":1,"dataset":"` + dataset + `","agent":"oracle","k":1`
	for _, tt := range []struct {
		name, header string
		code         int
		want         string
	}{
		{"the same eval", head + `,"tasks":["one","two"]}`, 0, "0 to run"},
		{"an older header", head + `}`, 0, "does not name its tasks (an older log)"},
		{"another model", head + `,"model":"anthropic:claude-x","tasks":["one","two"]}`, ExitUsage, "the model: "},
		{"another mode", head + `,"mode":"record","tasks":["one","two"]}`, ExitUsage, "the mode: "},
		{"a task the dataset lacks", head + `,"tasks":["one","three","two"]}`, ExitUsage, "logs three, which the dataset lacks"},
		{"a task the log lacks", head + `,"tasks":["one"]}`, ExitUsage, "the dataset has two, which"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.jsonl")
			mustWrite(t, path, tt.header+"\n"+
				`{"task":"one","n":0,"reward":1,"outcome":"passed","verifier_exit":0,"usage":{"steps":1},"wall_ns":1}`+"\n"+
				`{"task":"two","n":0,"reward":1,"outcome":"passed","verifier_exit":0,"usage":{"steps":1},"wall_ns":1}`+"\n")
			code, stdout, stderr := c.run("eval", "--agent", "oracle", "--resume", path, dataset)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, want %d and %q\n%s\n%s", code, tt.code, tt.want, stdout, stderr)
			}
			if tt.code != 0 && len(progress(stderr)) != 0 {
				t.Errorf("a refused log ran trials:\n%s", stderr)
			}
		})
	}
}

// An output that cannot be written fails the eval before any trial
// runs, and leaves the other outputs as they were.
func TestEvalOutputsCheckedFirst(t *testing.T) {
	dataset := tinyDataset(t, "one")
	c := newInproc(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	mustWrite(t, file, "x")
	under := filepath.Join(file, "out") // under a file: cannot be made
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"--html", []string{"--html", under}, "--html"},
		{"--json", []string{"--json", under}, "--json"},
		{"--record", []string{"--record", under}, "--record"},
		{"--html into a folder", []string{"--html", dir}, "--html"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			json := filepath.Join(t.TempDir(), "run.json")
			logPath := filepath.Join(t.TempDir(), "run.jsonl")
			args := append([]string{"eval", "--agent", "oracle", "--log", logPath}, tt.args...)
			if tt.name != "--json" {
				args = append(args, "--json", json)
			}
			code, stdout, stderr := c.run(append(args, dataset)...)
			if code == 0 || !strings.Contains(stderr, tt.want) || len(progress(stderr)) != 0 || strings.Contains(stdout, "| **all**") {
				t.Errorf("exit %d, want a failure before any trial naming %s\n%s\n%s", code, tt.want, stdout, stderr)
			}
			for _, p := range []string{json, logPath} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s was left behind", p)
				}
			}
		})
	}
}

// --resume --retry OUTCOMES runs the logged trials of those outcomes
// again, appending their new results, which the log then reads.
func TestEvalResumeRetry(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("CI") == "" {
		t.Skip("bubblewrap is not installed")
	}
	dataset := tinyDataset(t, "one", "two")
	c := newInproc(t)
	logged := func(t *testing.T) string {
		path := filepath.Join(t.TempDir(), "log.jsonl")
		line := func(task string, n int, outcome string) string {
			return `{"task":"` + task + `","n":` + string(rune('0'+n)) + `,"reward":0,"outcome":"` + outcome + `","verifier_exit":0,"usage":{"steps":1},"wall_ns":1}` + "\n"
		}
		mustWrite(t, path, `{"eval_log":1,"dataset":"`+dataset+`","agent":"oracle","k":2,"tasks":["one","two"]}`+"\n"+
			line("one", 0, "agent_error")+line("one", 1, "failed")+line("two", 0, "verifier_error")+line("two", 1, "agent_timeout"))
		return path
	}
	for _, tt := range []struct {
		name, retry string
		ran         []string
		passed      int
	}{
		{"no retry", "", nil, 0},
		{"the errors", "agent_error,verifier_error", []string{"one #0", "two #0"}, 2},
		{"failed", "failed", []string{"one #1"}, 1},
		{"all but passed", "failed, agent_timeout,agent_error,verifier_error", []string{"one #0", "one #1", "two #0", "two #1"}, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := logged(t)
			args := []string{"eval", "--agent", "oracle", "-k", "2", "--resume", path}
			if tt.retry != "" {
				args = append(args, "--retry", tt.retry)
			}
			code, stdout, stderr := c.run(append(args, dataset)...)
			ran := progress(stderr)
			slices.Sort(ran)
			if code != 0 || !slices.Equal(ran, tt.ran) {
				t.Fatalf("exit %d, ran %q, want %q\n%s\n%s", code, ran, tt.ran, stdout, stderr)
			}
			lc, err := eval.ReadLog(path)
			if err != nil || len(lc.Trials) != 4 {
				t.Fatalf("the log: %+v %v", lc, err)
			}
			passed := 0
			for _, r := range lc.Trials {
				if r.Outcome == eval.Passed {
					passed++
				}
			}
			if passed != tt.passed {
				t.Errorf("%d trials of the log passed, want %d (the retried ones, read as their last line)", passed, tt.passed)
			}
		})
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"without --resume", []string{"--retry", "agent_error"}, "it takes --resume"},
		{"no outcome", []string{"--resume", logged(t), "--retry", "agent_eror"}, `"agent_eror" is no outcome`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := c.run(append(append([]string{"eval", "--agent", "oracle", "-k", "2"}, tt.args...), dataset)...)
			if code != ExitUsage || !strings.Contains(stderr, tt.want) || len(progress(stderr)) != 0 {
				t.Errorf("exit %d, want %d and %q\n%s\n%s", code, ExitUsage, tt.want, stdout, stderr)
			}
		})
	}
}

// At the end each output is tried whatever became of the others: a
// --json that cannot be written (/dev/full) leaves --html written, and
// the eval fails naming --json.
func TestEvalOutputsAllTried(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("CI") == "" {
		t.Skip("bubblewrap is not installed")
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dataset := tinyDataset(t, "one")
	c := newInproc(t)
	page := filepath.Join(t.TempDir(), "page.html")
	code, stdout, stderr := c.run("eval", "--agent", "oracle", "--json", "/dev/full", "--html", page, dataset)
	if code != ExitFailed || !strings.Contains(stderr, "--json") || len(progress(stderr)) != 1 {
		t.Errorf("exit %d, want %d naming --json after the trial\n%s\n%s", code, ExitFailed, stdout, stderr)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("--html after --json failed: %v", err)
	}
}
