package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/eval"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
)

// newEvalCmd is deepagents eval: a dataset of Harbor tasks against the
// harness (with the model and settings of run) or the oracle.
func newEvalCmd(env Env) *cobra.Command {
	var f runFlags
	var agentName, jsonOut, replayDir, trajDir, htmlOut, logPath, resumePath, retryList string
	var k, parallel int
	cmd := &cobra.Command{
		Use:   "eval [flags] DATASET",
		Short: "Score the agent on benchmark tasks in Harbor's format",
		Long: `Score the agent on DATASET: a task in Harbor's format (instruction.md, task.toml,
environment/, tests/test.sh, solution/solve.sh), or a folder of them.

Each trial runs in the sandbox over a fresh copy of the task's environment/:
the agent (--agent harness, with the model and flags of run; or oracle, which
runs solution/solve.sh) works there within task.toml's agent timeout, then
tests/test.sh runs in the same folder, the tests mounted at /tests only then,
and writes /logs/verifier/reward.txt. -k trials per task give pass@k (the
unbiased estimator) and avg@k; the scorecard goes to standard output as
Markdown, to --json FILE, and to --html FILE as a page with charts.
--trajectories DIR writes each harness trial's trajectory in ATIF, Harbor's
trajectory format, to DIR/TASK/N.json.

--log FILE appends each finished trial to FILE as it ends (a JSON line,
synced to disk); --resume FILE continues the eval FILE logs, running only
the trials it lacks (and, with --retry OUTCOMES, those of these outcomes
again). eval compare A.json B.json compares two scorecards.

--model replay:DIR, DIR a folder, is a scripted eval: each trial of task
TASK plays DIR/TASK.json (the scripted model's format) as its model, with
no model and no network; eval/scripted solves eval/dataset this way.

See docs/eval.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.Dir = os.TempDir() // each trial's own; validate wants one
			if err := f.validate(cmd); err != nil {
				return err
			}
			if k < 1 || parallel < 1 {
				return usageError{errors.New("-k and --parallel must be at least 1")}
			}
			retry, err := parseRetry(retryList)
			if err != nil {
				return err
			}
			if len(retry) > 0 && resumePath == "" {
				return usageError{errors.New("--retry runs again trials of a log: it takes --resume FILE")}
			}
			if logPath != "" && resumePath != "" && filepath.Clean(logPath) != filepath.Clean(resumePath) {
				return usageError{errors.New("--resume FILE appends to FILE: it takes no --log of another file")}
			}
			recordDir := f.Record
			var recorded []byte
			if replayDir != "" {
				if recordDir != "" || f.Given("model") || agentName != "harness" {
					return usageError{errors.New("--replay plays the recorded trials' model: it takes no --record, --model or --agent")}
				}
				var err error
				if recorded, err = os.ReadFile(filepath.Join(replayDir, recordedScorecard)); err != nil {
					return usageError{fmt.Errorf("--replay: %w (a folder --record wrote)", err)}
				}
				var rec eval.Scorecard
				if err := json.Unmarshal(recorded, &rec); err != nil {
					return usageError{fmt.Errorf("--replay: %s: %w", recordedScorecard, err)}
				}
				k = rec.K
			}
			tasks, err := eval.LoadDataset(args[0])
			if err != nil {
				return usageError{err}
			}
			var a eval.Agent
			traj := newTrajectories(trajDir)
			switch agentName {
			case "oracle":
				a = eval.Oracle{}
				if traj != nil {
					fmt.Fprintln(env.Stderr, "--trajectories: the oracle runs solution/solve.sh, with no model: it has no trajectory to write")
					traj = nil
				}
			case "harness":
				if f.Sandbox != "bwrap" {
					return usageError{errors.New("eval runs the agent in the sandbox: --sandbox none would let it read the tests and the solution")}
				}
				h := &harnessAgent{env: env, f: f, record: recordDir, replay: replayDir, traj: traj}
				// A session that cannot open (a missing key, a bad
				// flag) fails the eval, not every trial. --model
				// replay:DIR plays DIR/TASK.json in each trial of
				// TASK (eval_scripted.go).
				if err := h.check(cmd.Context()); err != nil {
					return err
				}
				a = h
			default:
				return usageError{fmt.Errorf("--agent must be harness or oracle, not %q", agentName)}
			}
			hdr := eval.LogHeader{Agent: a.Name(), K: k}
			for _, t := range tasks {
				hdr.Tasks = append(hdr.Tasks, t.Name)
			}
			slices.Sort(hdr.Tasks)
			if h, ok := a.(*harnessAgent); ok {
				hdr.Model = h.model
				switch {
				case replayDir != "":
					hdr.Mode = "replay"
					if abs, err := filepath.Abs(replayDir); err == nil {
						hdr.Model = "replay:" + abs
					} else {
						hdr.Model = "replay:" + replayDir
					}
				case recordDir != "":
					hdr.Mode = "record"
				}
			}
			// Every output is opened before the first trial: a path that
			// cannot be written fails now, not after hours of paid trials.
			var outs outputs
			defer func() { outs.abandon() }()
			jsonF, err := outs.open("--json", jsonOut)
			if err != nil {
				return err
			}
			htmlF, err := outs.open("--html", htmlOut)
			if err != nil {
				return err
			}
			var recordF *output
			if recordDir != "" {
				if err := os.MkdirAll(recordDir, 0o755); err != nil {
					return usageError{fmt.Errorf("--record: %w", err)}
				}
				if recordF, err = outs.open("--record", filepath.Join(recordDir, recordedScorecard)); err != nil {
					return err
				}
			}
			if traj != nil {
				if err := os.MkdirAll(traj.dir, 0o755); err != nil {
					return usageError{fmt.Errorf("--trajectories: %w", err)}
				}
			}
			tl, err := openTrialLog(env, logPath, resumePath, args[0], hdr, tasks, retry)
			if err != nil {
				return err
			}
			var mu sync.Mutex
			done, passed := tl.kept, tl.keptPassed
			var spent float64 // by the trials of this eval run
			total := len(tasks) * k
			var logErr error
			cfg := eval.Config{Agent: a, K: k, Parallel: parallel, Done: func(r eval.TrialResult) {
				mu.Lock()
				defer mu.Unlock()
				done++
				if r.Outcome == eval.Passed {
					passed++
				}
				spent += r.Usage.Cost
				line := fmt.Sprintf("[%d/%d] %s #%d: %s (reward %.2f, $%.4f, %d steps) · %d passed (%.1f%%) · $%.4f so far", done, total, r.Task, r.N, r.Outcome, r.Reward, r.Usage.Cost, r.Usage.Steps, passed, 100*float64(passed)/float64(done), spent)
				if r.Error != "" {
					line += ": " + display.OneLine(display.Clip(r.Error, 200))
				}
				fmt.Fprintln(env.Stderr, line)
				if tl.log != nil && logErr == nil {
					if logErr = tl.log.Append(r); logErr != nil {
						fmt.Fprintf(env.Stderr, "the log: %s; the trials from here on are not logged\n", logErr)
					}
				}
			}}
			if tl.contents != nil {
				cfg.Skip = tl.contents.Skip(retry...)
			}
			sc, err := eval.Run(cmd.Context(), tasks, cfg)
			if tl.log != nil {
				if cerr := tl.log.Close(); logErr == nil {
					logErr = cerr
				}
			}
			if sc == nil {
				return err
			}
			fmt.Fprint(env.Stdout, sc.Markdown())
			// Each output is tried, whatever became of the others.
			var errs []error
			var replayErr error
			repro, merr := json.MarshalIndent(sc.Reproducible(), "", "  ")
			switch {
			case merr != nil:
				errs = append(errs, fmt.Errorf("the scorecard: %w", merr))
			case err == nil: // a partial eval is no recording, and no replay
				repro = append(repro, '\n')
				errs = append(errs, recordF.write(repro))
				if replayDir != "" {
					replayErr = compareReplay(env, sc, recorded, repro)
				}
			}
			if jsonF != nil {
				b, merr := json.MarshalIndent(sc, "", "  ")
				if merr == nil {
					merr = jsonF.write(append(b, '\n'))
				}
				errs = append(errs, wrapFlag("--json", merr))
			}
			if htmlF != nil {
				var page bytes.Buffer
				herr := sc.HTML(&page)
				if herr == nil {
					herr = htmlF.write(page.Bytes())
				}
				errs = append(errs, wrapFlag("--html", herr))
			}
			if err == nil {
				errs = append(errs, wrapFlag("--log", logErr))
			}
			errs = append(errs, traj.err(env))
			if oerr := errors.Join(errs...); oerr != nil {
				return errors.Join(err, oerr)
			}
			if err == nil {
				err = replayErr
			}
			return err
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&agentName, "agent", "harness", "who attempts the tasks: harness (this agent, with --model and the flags of run) or oracle (the tasks' solution/solve.sh: a dataset's self-check)")
	fl.IntVarP(&k, "k", "k", 1, "trials per task (pass@k)")
	fl.IntVar(&parallel, "parallel", 1, "trials run at once")
	fl.StringVar(&jsonOut, "json", "", "also write the scorecard, every trial included, to FILE as JSON")
	// run's --record FILE is a folder here: a recording per trial.
	fl.Lookup("record").Usage = "record each trial's model exchanges in DIR (DIR/TASK/N.json) and the scorecard (DIR/scorecard.json), for --replay"
	fl.StringVar(&trajDir, "trajectories", "", "write each harness trial's trajectory in ATIF, Harbor's format, to DIR/TASK/N.json (its subagents' beside it); the oracle has none")
	fl.StringVar(&htmlOut, "html", "", "also write the scorecard to `FILE` as one self-contained HTML page (the table, pass@k against cost, outcomes per task; inline SVG, no script)")
	fl.StringVar(&logPath, "log", "", "append each finished trial to `FILE` (a new file) as a JSON line, synced to disk as it ends, for --resume")
	fl.StringVar(&resumePath, "resume", "", "continue the eval that --log logged in `FILE`: keep its trials, run the others, and append them to FILE")
	fl.StringVar(&retryList, "retry", "", "with --resume, run again the logged trials of these `OUTCOMES` (comma-separated: agent_error,verifier_error; any of passed, failed, agent_timeout, agent_error, verifier_error), appending their new results")
	fl.StringVar(&replayDir, "replay", "", "play the trials --record recorded in DIR, with no model and no network, and check that the scorecard is the same byte for byte and that the harness sends each trial's requests as it did")
	cmd.AddCommand(newEvalCompareCmd(env))
	return cmd
}

// output is a file eval writes once it ends, opened for writing before
// it starts (its contents left as they are until then).
type output struct {
	flag, path string
	f          *os.File
	// created says the file did not exist before: abandoned, it is
	// removed.
	created, done bool
}

// outputs are an eval's outputs, those not written abandoned at its end.
type outputs []*output

// open opens path for flag's output ("" for none: a nil *output): a
// usage error when it cannot be written.
func (outs *outputs) open(flag, path string) (*output, error) {
	if path == "" {
		return nil, nil
	}
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, usageError{fmt.Errorf("%s: %w", flag, err)}
	}
	o := &output{flag: flag, path: path, f: f, created: errors.Is(statErr, fs.ErrNotExist)}
	*outs = append(*outs, o)
	return o, nil
}

// write replaces the output's contents with b and closes it (nil for a
// nil *output).
func (o *output) write(b []byte) error {
	if o == nil {
		return nil
	}
	o.done = true
	err := o.f.Truncate(0)
	if err == nil {
		_, err = o.f.WriteAt(b, 0)
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", o.flag, err)
	}
	return nil
}

// abandon closes the outputs not written, removing those eval created.
func (outs outputs) abandon() {
	for _, o := range outs {
		if !o.done {
			o.f.Close()
			if o.created {
				os.Remove(o.path)
			}
		}
	}
}

// wrapFlag prefixes err with flag ("" for nil); an error that names its
// flag already is left alone.
func wrapFlag(flag string, err error) error {
	if err == nil || strings.HasPrefix(err.Error(), flag+":") {
		return err
	}
	return fmt.Errorf("%s: %w", flag, err)
}

// trialLog is an eval's --log or --resume: the log it appends to, the
// trials it keeps and how many of them count in this eval.
type trialLog struct {
	log      *eval.Log
	contents *eval.LogContents
	// kept of this eval's trials are in the log, keptPassed of them
	// passed.
	kept, keptPassed int
}

// openTrialLog opens --log FILE (a new log) or --resume FILE (a log of
// an eval of the same agent, k, model and tasks) for the eval hdr says
// (its agent, k, model, mode and sorted task names) of tasks, the tasks
// of dataset. Neither: a trialLog that logs nothing.
func openTrialLog(env Env, logPath, resumePath, dataset string, hdr eval.LogHeader, tasks []eval.Task, retry []eval.Outcome) (trialLog, error) {
	abs, err := filepath.Abs(dataset)
	if err != nil {
		abs = dataset
	}
	agent, k := hdr.Agent, hdr.K
	if resumePath == "" {
		if logPath == "" {
			return trialLog{}, nil
		}
		hdr.Dataset = abs
		l, err := eval.CreateLog(logPath, hdr)
		if errors.Is(err, fs.ErrExist) {
			return trialLog{}, usageError{fmt.Errorf("--log: %s exists: --resume %[1]s continues the eval it logs", logPath)}
		}
		if errors.Is(err, eval.ErrLogLocked) {
			return trialLog{}, usageError{fmt.Errorf("--log: %w: wait for it to end", err)}
		}
		if err != nil {
			return trialLog{}, fmt.Errorf("--log: %w", err)
		}
		return trialLog{log: l}, nil
	}
	lc, err := eval.ReadLog(resumePath)
	if err != nil {
		return trialLog{}, usageError{fmt.Errorf("--resume: %w", err)}
	}
	if h := lc.Header; h.Agent != agent || h.K != k {
		return trialLog{}, usageError{fmt.Errorf("--resume: %s logs an eval of the agent %s with k = %d, not of %s with k = %d", resumePath, h.Agent, h.K, agent, k)}
	}
	if err := sameEval(env, resumePath, lc.Header, hdr); err != nil {
		return trialLog{}, err
	}
	if lc.Truncated > 0 {
		fmt.Fprintf(env.Stderr, "--resume: the last line of %s was cut short (%d bytes: a trial being logged when the eval stopped); it is left out, and that trial runs again\n", resumePath, lc.Truncated)
	}
	if lc.Header.Dataset != abs {
		fmt.Fprintf(env.Stderr, "--resume: %s logs the dataset %s, not %s; its trials of tasks of the same names are kept\n", resumePath, lc.Header.Dataset, abs)
	}
	tl := trialLog{contents: lc}
	// Locked, the log is read again: another eval may have logged
	// trials since.
	if tl.log, err = eval.AppendLog(resumePath, lc); errors.Is(err, eval.ErrLogLocked) {
		return trialLog{}, usageError{fmt.Errorf("--resume: %w: two evals on one log would each run the trials the other runs; wait for it to end", err)}
	} else if err != nil {
		return trialLog{}, fmt.Errorf("--resume: %w", err)
	}
	skip, all := lc.Skip(retry...), lc.Skip()
	retried := 0
	for _, t := range tasks {
		for n := range k {
			if r, ok := skip(t.Name, n); ok {
				tl.kept++
				if r.Outcome == eval.Passed {
					tl.keptPassed++
				}
			} else if _, ok := all(t.Name, n); ok {
				retried++
			}
		}
	}
	again := ""
	if len(retry) > 0 {
		again = fmt.Sprintf(", %d of them again (--retry)", retried)
	}
	fmt.Fprintf(env.Stderr, "--resume: %d of %d trials are in %s; %d to run%s\n", tl.kept+retried, len(tasks)*k, resumePath, len(tasks)*k-tl.kept, again)
	return tl, nil
}

// parseRetry parses --retry's comma-separated outcomes: a usage error
// for one that is no outcome.
func parseRetry(list string) ([]eval.Outcome, error) {
	var out []eval.Outcome
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		o := eval.Outcome(s)
		if !slices.Contains(eval.Outcomes, o) {
			names := make([]string, len(eval.Outcomes))
			for i, o := range eval.Outcomes {
				names[i] = string(o)
			}
			return nil, usageError{fmt.Errorf("--retry: %q is no outcome (%s)", s, strings.Join(names, ", "))}
		}
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out, nil
}

// sameEval refuses, as a usage error naming what differs, to resume the
// eval logged (its header) as the eval now: another model or mode, or
// other tasks. A field an older log lacks is unknown: allowed, with a
// note.
func sameEval(env Env, path string, logged, now eval.LogHeader) error {
	var differ []string
	if logged.Model == "" && logged.Mode == "" {
		if now.Model != "" {
			fmt.Fprintf(env.Stderr, "--resume: %s does not name its model (an older log): resumed with %s, which the kept trials may not have run\n", path, now.Model)
		}
	} else {
		if logged.Model != now.Model {
			differ = append(differ, fmt.Sprintf("the model: %s logs %s, this eval runs %s", path, orNone(logged.Model), orNone(now.Model)))
		}
		if logged.Mode != now.Mode {
			differ = append(differ, fmt.Sprintf("the mode: %s logs %s, this eval is %s", path, orNone(logged.Mode), orNone(now.Mode)))
		}
	}
	if logged.Tasks == nil {
		fmt.Fprintf(env.Stderr, "--resume: %s does not name its tasks (an older log): its trials of tasks of the same names are kept\n", path)
	} else if !slices.Equal(logged.Tasks, now.Tasks) {
		var only, missing []string
		for _, t := range logged.Tasks {
			if !slices.Contains(now.Tasks, t) {
				only = append(only, t)
			}
		}
		for _, t := range now.Tasks {
			if !slices.Contains(logged.Tasks, t) {
				missing = append(missing, t)
			}
		}
		d := "the tasks:"
		if len(only) > 0 {
			d += fmt.Sprintf(" %s logs %s, which the dataset lacks", path, strings.Join(only, ", "))
		}
		if len(missing) > 0 {
			if len(only) > 0 {
				d += ";"
			}
			d += fmt.Sprintf(" the dataset has %s, which %s lacks", strings.Join(missing, ", "), path)
		}
		differ = append(differ, d)
	}
	if len(differ) > 0 {
		return usageError{fmt.Errorf("--resume: %s logs another eval; %s", path, strings.Join(differ, "; "))}
	}
	return nil
}

// harnessAgent is this harness on a trial: a run of the instruction in
// the trial's folder, as deepagents run would run it headless (--shell,
// nothing asking, a database of its own in memory).
type harnessAgent struct {
	env Env
	f   runFlags
	// record and replay are --record's and --replay's folders.
	record, replay string
	// traj writes the trials' trajectories (--trajectories; nil: none).
	traj *trajectories
	// model is the model spec the session resolved (check), for the
	// log's header.
	model string
}

// recordedScorecard is the name of the scorecard --record writes.
const recordedScorecard = "scorecard.json"

// recording is where trial n of task is recorded in dir: an error for
// a task whose name would put it elsewhere.
func recording(dir, task string, n int) (string, error) {
	return joinUnder(dir, task, strconv.Itoa(n)+".json")
}

// joinUnder joins elem under dir, and refuses a path that is not under
// dir (a task named ".." would write beside it).
func joinUnder(dir string, elem ...string) (string, error) {
	p := filepath.Join(append([]string{dir}, elem...)...)
	rel, err := filepath.Rel(filepath.Clean(dir), p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%s is not under %s", p, dir)
	}
	return p, nil
}

// compareReplay says whether a replay reproduced the recorded scorecard
// (its reproducible JSON, byte for byte), and which trials the harness now
// asks something else of the model in: an error when either differs.
func compareReplay(env Env, sc *eval.Scorecard, recorded, now []byte) error {
	var changed []string
	for _, ts := range sc.Tasks {
		for _, r := range ts.Results {
			if strings.Contains(r.Error, replay.ErrRequestMismatch.Error()) {
				changed = append(changed, fmt.Sprintf("%s #%d: %s", r.Task, r.N, display.OneLine(display.Clip(r.Error, 300))))
			}
		}
	}
	for _, c := range changed {
		fmt.Fprintln(env.Stderr, "the harness now sends something else: "+c)
	}
	if bytes.Equal(recorded, now) && len(changed) == 0 {
		fmt.Fprintln(env.Stderr, "replay: the scorecard is the recorded one, byte for byte")
		return nil
	}
	fmt.Fprintf(env.Stderr, "replay: the scorecard differs from the recorded one (%d trials ask the model something else)\n", len(changed))
	return exitError{ExitFailed}
}

func (h *harnessAgent) Name() string { return "harness" }

// finiteCost is t.Cost(prices), but a model whose calls cost NaN or an
// infinity (a price of inf or nan in the user's prices) is unpriced: its
// calls left out, and named, as an unknown price's are.
func finiteCost(t *deepagents.UsageTree, prices map[string]llm.Price) (dollars float64, unpriced string) {
	for _, m := range t.Models {
		if d, ok := m.Cost(prices); ok && !math.IsNaN(d) && !math.IsInf(d, 0) {
			dollars += d
		} else if unpriced == "" {
			unpriced = m.Model
		}
	}
	for _, c := range t.Subagents {
		d, u := finiteCost(c, prices)
		dollars += d
		if unpriced == "" {
			unpriced = u
		}
	}
	return dollars, unpriced
}

// flags are the run flags of a trial in dir: the sandbox, a shell,
// nothing asking (whatever the user's permission_mode), a database of its
// own in memory.
func (h *harnessAgent) flags(dir string) runFlags {
	f := h.f
	f.Dir, f.Shell, f.AutoApprove, f.Sandbox, f.PermissionMode, f.db = dir, true, true, "bwrap", "", "memory:"
	f.Record = ""
	f.middleware = evalMiddleware()
	given := h.f.Given
	f.Given = func(name string) bool {
		switch name {
		case "dir", "shell", "auto-approve", "sandbox", "db":
			return true
		case "permission-mode":
			return false
		case "model":
			return h.replay != "" || given(name) // a replay's model is its recording, whatever the configuration says
		}
		return given(name)
	}
	return f
}

// check opens a session once, in a folder of its own, printing its
// notes: what would fail every trial fails here.
func (h *harnessAgent) check(ctx context.Context) error {
	if h.replay != "" {
		return nil // each trial's model is its recording
	}
	dir, err := os.MkdirTemp("", "deepagents-eval-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	f := h.flags(dir)
	if f.Model, err = checkModel(f.Model); err != nil {
		return err
	}
	o, err := openSession(ctx, h.env, &f, false, false, nil)
	if err != nil {
		return err
	}
	h.model = o.spec.Model
	if h.model == "" {
		h.model = "default" // the environment's
	}
	o.close()
	return nil
}

func (h *harnessAgent) Attempt(ctx context.Context, tr *eval.Trial) (eval.Usage, error) {
	f := h.flags(tr.Dir)
	f.Model = scriptedModel(f.Model, tr.Task.Name)
	switch {
	case h.record != "":
		var err error
		if f.Record, err = recording(h.record, tr.Task.Name, tr.N); err != nil {
			return eval.Usage{}, fmt.Errorf("--record: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(f.Record), 0o755); err != nil {
			return eval.Usage{}, err
		}
	case h.replay != "":
		rec, err := recording(h.replay, tr.Task.Name, tr.N)
		if err != nil {
			return eval.Usage{}, fmt.Errorf("--replay: %w", err)
		}
		f.Model = "replay:" + rec
	}
	// A trial's notes would interleave with the progress: check printed
	// them once.
	quiet := h.env
	quiet.Stderr = io.Discard
	o, err := openSession(ctx, quiet, &f, false, false, nil)
	if err != nil {
		return eval.Usage{}, err
	}
	defer o.close()
	var used deepagents.UsageTree
	var runErr error
	traj := h.traj.begin(tr, o.spec.Prices)
	defer traj.write()
	for e, err := range o.Agent.Stream(ctx, deepagents.Prompt(tr.Task.Instruction)) {
		if err != nil {
			runErr = err
			traj.add(deepagents.Event{Type: deepagents.EventError, Error: err.Error()})
			break
		}
		used.Add(e)
		traj.add(e)
		if e.Type == deepagents.EventRunEnd && len(e.Namespace) == 0 && e.Status != deepagents.StatusCompleted {
			runErr = fmt.Errorf("the run ended %s: %s", e.Status, e.Error)
		}
	}
	calls, u := used.Total()
	cost, unpriced := finiteCost(&used, o.spec.Prices)
	return eval.Usage{InputTokens: u.InputTokens, CacheWriteTokens: u.CacheWriteTokens, CacheReadTokens: u.CacheReadTokens,
		OutputTokens: u.OutputTokens, Cost: cost, Unpriced: unpriced, Steps: calls}, runErr
}
