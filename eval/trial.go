package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/backend"
)

// Where a trial's sandbox finds the task's tests, the verifier's logs and
// the oracle's solution, as Harbor's containers have them.
const (
	TestsDir    = "/tests"
	LogsDir     = "/logs/verifier"
	SolutionDir = "/solution"
)

// Trial is one attempt at a task: a fresh copy of the task's environment
// (Dir), which the agent works in, and the verifier checks after.
type Trial struct {
	Task Task
	// N is the trial's number for its task, from 0.
	N int
	// Dir is the workspace: the task's environment/ copied (but its
	// Dockerfile).
	Dir  string
	root string
	// verifierHome is the verifier's HOME, which the verifiers of one
	// eval share (Go's and pip's caches); "" for a fresh one each time.
	verifierHome string
}

// NewTrial makes trial n of t under base (a temporary folder for "").
func NewTrial(t Task, n int, base string) (*Trial, error) {
	root, err := os.MkdirTemp(base, "deepagents-eval-"+t.Name+"-")
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	tr := &Trial{Task: t, N: n, Dir: filepath.Join(root, "workspace"), root: root}
	if err := os.Mkdir(tr.Dir, 0o755); err != nil {
		tr.Close()
		return nil, fmt.Errorf("eval: %w", err)
	}
	env := filepath.Join(t.Dir, "environment")
	if _, err := os.Stat(env); err == nil {
		if err := copyTree(env, tr.Dir, func(rel string) bool { return rel == "Dockerfile" }); err != nil {
			tr.Close()
			return nil, fmt.Errorf("eval: %s: environment: %w", t.Name, err)
		}
	}
	return tr, nil
}

// Close removes the trial's folders.
func (tr *Trial) Close() error { return os.RemoveAll(tr.root) }

// Shell returns a sandboxed shell over the workspace, with binds (the
// tests, the solution) mounted too; its commands may run as long as
// timeout.
func (tr *Trial) Shell(timeout time.Duration, binds ...backend.Bind) (*backend.LocalShell, error) {
	return backend.NewLocalShell(tr.Dir, backend.LocalShellOptions{
		Sandbox:    &backend.Bubblewrap{Binds: binds},
		Timeout:    timeout,
		MaxTimeout: timeout,
	})
}

// copyOut copies the task's folder sub (tests, solution) next to the
// workspace, for a bind: the task's own folder is never written.
func (tr *Trial) copyOut(sub string) (string, error) {
	dst := filepath.Join(tr.root, sub)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return "", err
	}
	return dst, copyTree(filepath.Join(tr.Task.Dir, sub), dst, nil)
}

// Verification is what the verifier said of a trial.
type Verification struct {
	// Reward is reward.txt's number, or reward.json's "reward".
	Reward float64
	// Output is the verifier's output (bounded).
	Output string
}

// ErrNoReward is returned when the verifier wrote no reward.
var ErrNoReward = errors.New("eval: the verifier wrote no reward (/logs/verifier/reward.txt or reward.json)")

// Verify runs the task's tests/test.sh in the workspace, the tests
// mounted read-only at TestsDir only now, and reads the reward it wrote
// in LogsDir.
func (tr *Trial) Verify(ctx context.Context) (Verification, error) {
	tests, err := tr.copyOut("tests")
	if err != nil {
		return Verification{}, fmt.Errorf("eval: the tests: %w", err)
	}
	logs := filepath.Join(tr.root, "logs", "verifier")
	if err := os.MkdirAll(logs, 0o777); err != nil {
		return Verification{}, err
	}
	timeout := tr.Task.VerifierTimeout()
	sh, err := backend.NewLocalShell(tr.Dir, backend.LocalShellOptions{
		Sandbox: &backend.Bubblewrap{Home: tr.verifierHome, Binds: []backend.Bind{
			{Host: tests, At: TestsDir}, {Host: logs, At: LogsDir, Writable: true}}},
		Timeout:    timeout,
		MaxTimeout: timeout,
	})
	if err != nil {
		return Verification{}, err
	}
	defer sh.Close()
	res, err := sh.Execute(ctx, "bash "+TestsDir+"/test.sh", timeout)
	v := Verification{Output: res.Output}
	if err != nil {
		return v, fmt.Errorf("eval: the verifier: %w", err)
	}
	v.Reward, err = readReward(logs)
	return v, err
}

// readReward reads reward.txt (a number) or reward.json ({"reward": N}).
func readReward(dir string) (float64, error) {
	if b, err := os.ReadFile(filepath.Join(dir, "reward.txt")); err == nil {
		r, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		if err != nil {
			return 0, fmt.Errorf("eval: reward.txt: %q is not a number", strings.TrimSpace(string(b)))
		}
		return r, nil
	}
	b, err := os.ReadFile(filepath.Join(dir, "reward.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, ErrNoReward
	}
	if err != nil {
		return 0, err
	}
	var v struct {
		Reward *float64 `json:"reward"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.Reward == nil {
		return 0, fmt.Errorf("eval: reward.json: want {\"reward\": N}: %s", strings.TrimSpace(string(b)))
	}
	return *v.Reward, nil
}

// copyTree copies the regular files, folders and links of src into dst
// (made), but those skip names (relative, slash-separated).
func copyTree(src, dst string, skip func(rel string) bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "." {
			return nil
		}
		if skip != nil && skip(filepath.ToSlash(rel)) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, info.Mode().Perm())
		}
		return nil // devices, sockets: not a task's
	})
}
