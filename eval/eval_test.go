package eval_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/eval"
)

// needsSandbox skips without bubblewrap, except in CI, which installs it.
func needsSandbox(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bubblewrap is missing in CI")
		}
		t.Skip("needs bubblewrap")
	}
}

// verifierHome is the verifiers' HOME for the package's tests: Go's
// build cache is built once.
var verifierHome string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "eval-test-home-")
	if err != nil {
		panic(err)
	}
	verifierHome = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

func dataset(t *testing.T) []eval.Task {
	t.Helper()
	tasks, err := eval.LoadDataset("dataset")
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) < 3 {
		t.Fatalf("%d tasks", len(tasks))
	}
	return tasks
}

// The oracle scores 1 on every shipped task: the dataset checks itself.
func TestOracleSolvesTheDataset(t *testing.T) {
	needsSandbox(t)
	tasks := dataset(t)
	sc, err := eval.Run(context.Background(), tasks, eval.Config{Agent: eval.Oracle{}, K: 1, Parallel: 2, VerifierHome: verifierHome})
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range sc.Tasks {
		if ts.PassAtK != 1 {
			t.Errorf("%s: the oracle scored %v: %+v", ts.Task, ts.PassAtK, ts.Results)
		}
	}
	if sc.Total.PassAtK != 1 || sc.Total.Trials != len(tasks) {
		t.Errorf("total %+v", sc.Total)
	}
}

// idle does nothing: every task fails, and the eval can tell.
type idle struct{}

func (idle) Name() string { return "idle" }
func (idle) Attempt(context.Context, *eval.Trial) (eval.Usage, error) {
	return eval.Usage{}, nil
}

func TestIdleAgentFails(t *testing.T) {
	needsSandbox(t)
	sc, err := eval.Run(context.Background(), dataset(t), eval.Config{Agent: idle{}, K: 2, VerifierHome: verifierHome})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Total.Passed != 0 || sc.Total.PassAtK != 0 || sc.Total.Outcomes[eval.Failed] != sc.Total.Trials {
		t.Errorf("an idle agent scored: %+v", sc.Total)
	}
}

// peeker looks for the tests and the solution from the trial's sandbox,
// as an agent's commands would.
type peeker struct{ seen *string }

func (peeker) Name() string { return "peeker" }
func (p peeker) Attempt(ctx context.Context, tr *eval.Trial) (eval.Usage, error) {
	sh, err := tr.Shell(tr.Task.AgentTimeout())
	if err != nil {
		return eval.Usage{}, err
	}
	defer sh.Close()
	res, err := sh.Execute(ctx, "ls /tests /solution /logs 2>&1; ls -a; echo 1 > /logs/verifier/reward.txt", 0)
	*p.seen = res.Output
	return eval.Usage{}, err
}

// The agent never sees the tests or the solution, and cannot write the
// verifier's reward.
func TestAgentCannotSeeTheTests(t *testing.T) {
	needsSandbox(t)
	var seen string
	tasks := dataset(t)[:1]
	sc, err := eval.Run(context.Background(), tasks, eval.Config{Agent: peeker{&seen}, VerifierHome: verifierHome})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(seen, "cannot access '/tests'") || strings.Contains(seen, "test.sh") || strings.Contains(seen, "solve.sh") {
		t.Errorf("the agent saw:\n%s", seen)
	}
	if sc.Total.Passed != 0 {
		t.Errorf("the agent's own reward counted: %+v", sc.Tasks[0].Results)
	}
}

func TestLoadDatasetErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := eval.LoadDataset(dir); err == nil {
		t.Error("an empty folder is a dataset")
	}
	os.MkdirAll(dir+"/bad", 0o755)
	os.WriteFile(dir+"/bad/task.toml", []byte("version = \"1.0\"\n"), 0o644)
	if _, err := eval.LoadDataset(dir); err == nil || !strings.Contains(err.Error(), "instruction.md") {
		t.Errorf("a task without instruction.md: %v", err)
	}
	os.WriteFile(dir+"/bad/instruction.md", []byte("do it"), 0o644)
	os.WriteFile(dir+"/bad/task.toml", []byte("[agent\n"), 0o644)
	if _, err := eval.LoadDataset(dir); err == nil || !strings.Contains(err.Error(), "task.toml") {
		t.Errorf("a bad task.toml: %v", err)
	}
}

// A task is named by its folder's own name, however the folder is
// given: ".", "..", a path with a trailing slash.
func TestTaskName(t *testing.T) {
	root := t.TempDir()
	task := filepath.Join(root, "count")
	for _, f := range []string{"instruction.md", "task.toml", "tests/test.sh"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(task, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(task, f), []byte("version = \"1.0\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(filepath.Join(task, "tests"))
	for _, tt := range []struct{ path, want string }{
		{"..", "count"},
		{"../", "count"},
		{"../../count", "count"},
		{task, "count"},
	} {
		tasks, err := eval.LoadDataset(tt.path)
		if err != nil || len(tasks) != 1 || tasks[0].Name != tt.want {
			t.Errorf("LoadDataset(%q): %+v %v, want one task %q", tt.path, tasks, err, tt.want)
		}
	}
	t.Chdir(task)
	if tasks, err := eval.LoadDataset("."); err != nil || len(tasks) != 1 || tasks[0].Name != "count" {
		t.Errorf(`LoadDataset("."): %+v %v`, tasks, err)
	}
	for _, tt := range []struct {
		name string
		ok   bool
	}{{"count", true}, {"a.b", true}, {"", false}, {".", false}, {"..", false}, {"a/b", false}, {"/", false}} {
		if err := eval.CheckTaskName(tt.name); (err == nil) != tt.ok {
			t.Errorf("CheckTaskName(%q) = %v", tt.name, err)
		}
	}
}
