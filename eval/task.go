package eval

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// ErrTask is returned for a folder that is not a task in Harbor's format.
var ErrTask = errors.New("eval: not a task")

// Task is one task of a dataset.
type Task struct {
	// Name is the task's folder's name; Dir the folder.
	Name, Dir string
	// Instruction is instruction.md: what the agent is asked.
	Instruction string
	// Config is task.toml.
	Config TaskConfig
}

// TaskConfig is a task's task.toml, as much of it as the sandbox uses;
// the rest (metadata) is kept as it was.
type TaskConfig struct {
	Version  string         `toml:"version"`
	Metadata map[string]any `toml:"metadata"`
	Agent    struct {
		TimeoutSec float64 `toml:"timeout_sec"`
	} `toml:"agent"`
	Verifier struct {
		TimeoutSec float64 `toml:"timeout_sec"`
	} `toml:"verifier"`
	Environment struct {
		BuildTimeoutSec float64 `toml:"build_timeout_sec"`
		CPUs            float64 `toml:"cpus"`
		MemoryMB        int     `toml:"memory_mb"`
		StorageMB       int     `toml:"storage_mb"`
	} `toml:"environment"`
}

// Defaults of a task that says nothing of its timeouts.
const (
	DefaultAgentTimeout    = 30 * time.Minute
	DefaultVerifierTimeout = 10 * time.Minute
)

// AgentTimeout is the agent's time for one trial.
func (t Task) AgentTimeout() time.Duration {
	return seconds(t.Config.Agent.TimeoutSec, DefaultAgentTimeout)
}

// VerifierTimeout is the verifier's time.
func (t Task) VerifierTimeout() time.Duration {
	return seconds(t.Config.Verifier.TimeoutSec, DefaultVerifierTimeout)
}

func seconds(s float64, def time.Duration) time.Duration {
	if s <= 0 {
		return def
	}
	return time.Duration(s * float64(time.Second))
}

// LoadTask reads the task in dir: instruction.md, task.toml and
// tests/test.sh must be there. Its name is the last element of dir's
// absolute path ("." names the current folder's task by that folder's
// name); a folder that gives no name ("/") is not a task.
func LoadTask(dir string) (Task, error) {
	t := Task{Dir: dir}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return t, fmt.Errorf("%w: %s: %v", ErrTask, dir, err)
	}
	t.Name = filepath.Base(abs)
	if err := CheckTaskName(t.Name); err != nil {
		return t, fmt.Errorf("%w: %s: %v", ErrTask, dir, err)
	}
	ins, err := os.ReadFile(filepath.Join(dir, "instruction.md"))
	if err != nil {
		return t, fmt.Errorf("%w: %s: %v", ErrTask, dir, err)
	}
	t.Instruction = strings.TrimSpace(string(ins))
	if _, err := toml.DecodeFile(filepath.Join(dir, "task.toml"), &t.Config); err != nil {
		return t, fmt.Errorf("%w: %s: task.toml: %v", ErrTask, dir, err)
	}
	if st, err := os.Stat(filepath.Join(dir, "tests", "test.sh")); err != nil || !st.Mode().IsRegular() {
		return t, fmt.Errorf("%w: %s: no tests/test.sh", ErrTask, dir)
	}
	return t, nil
}

// CheckTaskName refuses a task name that cannot name a file in a folder:
// "", ".", ".." or one with a path separator.
func CheckTaskName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("%q cannot name a task", name)
	case strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator):
		return fmt.Errorf("the task name %q holds a path separator", name)
	}
	return nil
}

// LoadDataset reads the tasks of path: a task folder, or a folder of
// them (each subfolder with a task.toml), sorted by name.
func LoadDataset(path string) ([]Task, error) {
	if _, err := os.Stat(filepath.Join(path, "task.toml")); err == nil {
		t, err := LoadTask(path)
		return []Task{t}, err
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("eval: the dataset %s: %w", path, err)
	}
	var tasks []Task
	var errs []error
	for _, e := range entries {
		dir := filepath.Join(path, e.Name())
		if st, err := os.Stat(dir); err != nil || !st.IsDir() { // a link to a task is one
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "task.toml")); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		t, err := LoadTask(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		tasks = append(tasks, t)
	}
	if len(tasks) == 0 && len(errs) == 0 {
		return nil, fmt.Errorf("eval: the dataset %s holds no task (a folder with task.toml)", path)
	}
	slices.SortFunc(tasks, func(a, b Task) int { return strings.Compare(a.Name, b.Name) })
	return tasks, errors.Join(errs...)
}
