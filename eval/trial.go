package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/deepagents-go/deepagents/backend/sandbox"
	"github.com/deepagents-go/deepagents/internal/fsutil"
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
func (tr *Trial) Shell(timeout time.Duration, binds ...sandbox.Bind) (*sandbox.LocalShell, error) {
	return sandbox.NewLocalShell(tr.Dir, sandbox.LocalShellOptions{
		Sandbox:    &sandbox.Bubblewrap{Binds: binds},
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
	// Output is the verifier's output (bounded); ExitCode its exit
	// status (a reward counts whatever it is, as in Harbor).
	Output   string
	ExitCode int
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
	sh, err := sandbox.NewLocalShell(tr.Dir, sandbox.LocalShellOptions{
		Sandbox: &sandbox.Bubblewrap{Home: tr.verifierHome, Binds: []sandbox.Bind{
			{Host: tests, At: TestsDir}, {Host: logs, At: LogsDir, Writable: true}}},
		Timeout:    timeout,
		MaxTimeout: timeout,
	})
	if err != nil {
		return Verification{}, err
	}
	defer sh.Close()
	res, err := sh.Execute(ctx, "bash "+TestsDir+"/test.sh", timeout)
	v := Verification{Output: res.Output, ExitCode: res.ExitCode}
	if err != nil {
		return v, fmt.Errorf("eval: the verifier: %w", err)
	}
	v.Reward, err = readReward(logs)
	return v, err
}

// maxReward bounds the bytes of a reward file read: a number, or a small
// JSON object.
const maxReward = 4 << 10

// readReward reads reward.txt (a number) or reward.json ({"reward": N}),
// a number from 0 to 1. The files are the verifier's, but the agent's code
// that the verifier runs could have made them anything: a link, a pipe, a
// huge file. So each must be a regular file, read without following a
// link, at most maxReward bytes, and its text is never quoted.
func readReward(dir string) (float64, error) {
	b, err := readSmall(filepath.Join(dir, "reward.txt"))
	if err == nil {
		r, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		if err != nil {
			return 0, errors.New("eval: reward.txt does not hold a number")
		}
		return checkReward(r)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("eval: reward.txt: %w", err)
	}
	b, err = readSmall(filepath.Join(dir, "reward.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, ErrNoReward
	}
	if err != nil {
		return 0, fmt.Errorf("eval: reward.json: %w", err)
	}
	var v struct {
		Reward *float64 `json:"reward"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.Reward == nil {
		return 0, errors.New("eval: reward.json is not {\"reward\": N}")
	}
	return checkReward(*v.Reward)
}

// checkReward refuses a reward outside [0, 1] (NaN and infinities too).
func checkReward(r float64) (float64, error) {
	if !(r >= 0 && r <= 1) {
		return 0, errors.New("eval: the reward is not a number from 0 to 1")
	}
	return r, nil
}

// readSmall reads the regular file at path, not through a link, at most
// maxReward bytes.
func readSmall(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, errors.New("a link, not a file")
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if st.Size() > maxReward {
		return nil, fmt.Errorf("larger than %d bytes", maxReward)
	}
	return io.ReadAll(io.LimitReader(f, maxReward))
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
			return fsutil.CopyFile(p, to, info.Mode().Perm())
		}
		return nil // devices, sockets: not a task's
	})
}
