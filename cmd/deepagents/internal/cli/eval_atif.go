package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/eval"
	"github.com/deepagents-go/deepagents/eval/atif"
	"github.com/deepagents-go/deepagents/llm"
)

// trajectories writes deepagents eval --trajectories DIR: each harness
// trial's trajectory in ATIF (package eval/atif) at DIR/TASK/N.json, and
// its subagents' beside it (DIR/TASK/N.NAMESPACE.json). A nil
// *trajectories writes nothing.
type trajectories struct {
	dir string

	mu sync.Mutex
	// errs are the trajectories that could not be written, or that
	// did not validate: they fail the eval once its scorecard is out, and
	// leave the trials' scores alone.
	errs []error
}

// newTrajectories returns the writer of --trajectories dir, or nil for no
// dir.
func newTrajectories(dir string) *trajectories {
	if dir == "" {
		return nil
	}
	return &trajectories{dir: dir}
}

// trial is the trajectory of one trial being built: nil when there is no
// --trajectories.
type trial struct {
	t    *trajectories
	b    *atif.Builder
	path string
	// files are the subagents' file names given, by namespace and run;
	// used the names taken (the trial's own too).
	files map[string]string
	used  map[string]bool
}

// begin starts the trajectory of tr, whose model calls are priced at
// prices (extra over the list prices, as the scorecard's cost is).
func (t *trajectories) begin(tr *eval.Trial, prices map[string]llm.Price) *trial {
	if t == nil {
		return nil
	}
	path, err := joinUnder(t.dir, tr.Task.Name, strconv.Itoa(tr.N)+".json")
	if err != nil {
		t.mu.Lock()
		t.errs = append(t.errs, err)
		t.mu.Unlock()
		return nil
	}
	w := &trial{t: t, path: path, files: map[string]string{}, used: map[string]bool{filepath.Base(path): true}}
	w.b = atif.NewBuilder(atif.Options{
		Agent:  atif.Agent{Name: "deepagents", Version: version()},
		Prompt: tr.Task.Instruction,
		Price:  func(spec string) (llm.Price, bool) { return llm.PriceOf(spec, prices) },
		// Trajectories are records of real runs: their steps are
		// stamped.
		Now:          time.Now,
		SubagentPath: w.subagentFile,
		Extra:        map[string]any{"task": tr.Task.Name, "trial": tr.N},
	})
	return w
}

// subagentFile is the file name of the trajectory of run (from 0) of the
// subagent at ns: subagentFile's, with "~2", "~3"... for a namespace's
// second, third run, and another "~N" where two namespaces map to one
// name (a-b:c and a:b-c); the same each time it is asked.
func (w *trial) subagentFile(ns []string, run int) string {
	key := strings.Join(ns, "\x00") + "\x00" + strconv.Itoa(run)
	if f, ok := w.files[key]; ok {
		return f
	}
	stem := strings.TrimSuffix(subagentFile(strings.TrimSuffix(filepath.Base(w.path), ".json"), ns), ".json")
	if run > 0 {
		stem += "~" + strconv.Itoa(run+1)
	}
	f := stem + ".json"
	for i := 2; w.used[f]; i++ {
		f = stem + "~" + strconv.Itoa(i) + ".json"
	}
	w.used[f] = true
	w.files[key] = f
	return f
}

// subagentFile is the file name of the trajectory of the subagent at ns
// of trial base ("0"): 0.researcher-call_1.json, one dotted part per level,
// each of letters, digits, '.', '_' and '-' only.
func subagentFile(base string, ns []string) string {
	parts := []string{base}
	for _, n := range ns {
		parts = append(parts, strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
				return r
			}
			return '-'
		}, n))
	}
	return strings.Join(parts, ".") + ".json"
}

// add takes the next event of the trial's run.
func (w *trial) add(e deepagents.Event) {
	if w != nil {
		w.b.Add(e)
	}
}

// write writes the trial's trajectory and its subagents', each checked
// against the pinned schema first (and written even when it fails, for
// the error to be looked into).
func (w *trial) write() {
	if w == nil {
		return
	}
	main, subs := w.b.Build()
	type file struct {
		path string
		t    *atif.Trajectory
	}
	files := []file{{w.path, main}}
	var errs []error
	for _, s := range subs {
		p, err := joinUnder(filepath.Dir(w.path), w.subagentFile(s.Namespace, s.Run))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, file{p, s.Trajectory})
	}
	for _, f := range files {
		b, err := json.MarshalIndent(f.t, "", "  ")
		if err == nil {
			if verr := atif.Validate(b); verr != nil {
				errs = append(errs, fmt.Errorf("%s: %w", f.path, verr))
			}
			if err = os.MkdirAll(filepath.Dir(f.path), 0o755); err == nil {
				err = os.WriteFile(f.path, append(b, '\n'), 0o644)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.path, err))
		}
	}
	if len(errs) > 0 {
		w.t.mu.Lock()
		w.t.errs = append(w.t.errs, errs...)
		w.t.mu.Unlock()
	}
}

// err is what went wrong writing the trajectories, printed, as the eval's
// error; nil when all were written and valid.
func (t *trajectories) err(env Env) error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.errs) == 0 {
		return nil
	}
	for _, e := range t.errs {
		fmt.Fprintln(env.Stderr, "--trajectories: "+e.Error())
	}
	return fmt.Errorf("--trajectories: %w", errors.Join(t.errs...))
}
