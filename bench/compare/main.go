// Command compare runs the benchmark workload (bench/workload) side by side
// in deepagents-go (in process and as the deepagents CLI), CloudWeGo Eino's
// deep agent (bench/eino) and the JavaScript DeepAgents (bench/js), and
// prints Markdown tables of the medians with ratios.
//
// It builds everything first (go build of bench/loop, cmd/deepagents and
// the bench/eino module; npm ci in bench/js when node_modules is missing),
// checks that the three drivers produce the same workload, then runs every
// implementation for each size without checkpoints and for one size with
// checkpoints, alternating implementations (their order rotates from one
// repetition to the next), each run in a fresh process. Run it from the
// repository root:
//
//	go run ./bench/compare                 # N = 100, 1000, 10000; 400 with checkpoints; 3 repetitions
//	go run ./bench/compare -quick          # N = 100, 1000; 100 with checkpoints; 1 repetition
//	go run ./bench/compare -reps 5 -timeout 20m -json results.json
//
// Steps per second are N / the run's time: for the in-process drivers (ours,
// Eino, JS) the time of the agent's invoke call, measured inside the
// process; for the CLI the whole process's wall time (start-up, reading the
// script and opening the database included). Peak RSS is every process's
// peak resident set size measured the same way for all, by GNU time
// (/usr/bin/time -f %M) around the process; without GNU time, by wait4,
// which on Linux reports at least compare's own peak (see
// bench/internal/rusage).
//
// Checkpoints: ours in process uses the sqlite package (a file in a
// temporary directory, one transaction per step, synchronous=NORMAL); the
// CLI checkpoints every step always, into --db memory: for the runs
// "without" checkpoints and into a SQLite file for the runs with; the
// JavaScript uses LangGraph's MemorySaver with a thread_id. Eino's runner
// checkpoints only on interrupts, so it has no run with checkpoints.
//
// A run that exceeds -timeout is killed and reported as "timeout"; one that
// dies of memory exhaustion (V8's "heap out of memory", or killed by a
// signal) as "OOM". Either ends the repetitions of that implementation at
// that size.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/bench/internal/harness"
	"github.com/deepagents-go/deepagents/bench/internal/rusage"
	"github.com/deepagents-go/deepagents/bench/workload"
)

type config struct {
	root       string
	sizes      []int
	ckptN      int
	reps       int
	timeout    time.Duration
	wsRoot     string // where the CLI's workspaces go
	impls      []string
	jsHeapMB   int
	jsonOut    string
	keep       bool
	npmInstall bool
}

func main() {
	var c config
	var sizes, impls string
	quick := flag.Bool("quick", false, "quick mode: sizes 100,1000, checkpoints at 100, 1 repetition, 2-minute timeout")
	flag.StringVar(&sizes, "sizes", "100,1000,10000", "comma-separated step counts without checkpoints")
	flag.IntVar(&c.ckptN, "checkpoint-n", 400, "step count of the runs with checkpoints (0: none)")
	flag.IntVar(&c.reps, "reps", 3, "repetitions of each run")
	flag.DurationVar(&c.timeout, "timeout", 10*time.Minute, "longest one run may take")
	flag.StringVar(&c.wsRoot, "cli-workspace", harness.WorkspaceRoot(), "directory for the CLI's workspaces (default: /dev/shm when it exists, so that its files, like the other harnesses' in-memory file stores, do not wait on a disk; the checkpoint database stays in the temporary directory)")
	flag.StringVar(&impls, "impls", "go,cli,eino,js", "implementations to run (cli-norewind: the CLI with rewind: false in its configuration, the one setting that differs)")
	flag.IntVar(&c.jsHeapMB, "js-heap-mb", 0, "node --max-old-space-size for the JavaScript runs (0: Node's default)")
	flag.StringVar(&c.jsonOut, "json", "", "also write every run's result to this `file`")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary directory (binaries, scripts, workspaces)")
	flag.BoolVar(&c.npmInstall, "npm-install", false, "run npm ci in bench/js even when node_modules exists")
	flag.Parse()
	if *quick {
		sizes, c.ckptN, c.reps, c.timeout = "100,1000", 100, 1, 2*time.Minute
		flag.Visit(func(f *flag.Flag) { // explicit flags win over -quick
			switch f.Name {
			case "sizes":
				sizes = f.Value.String()
			case "checkpoint-n":
				c.ckptN, _ = strconv.Atoi(f.Value.String())
			case "reps":
				c.reps, _ = strconv.Atoi(f.Value.String())
			case "timeout":
				c.timeout, _ = time.ParseDuration(f.Value.String())
			}
		})
	}
	var err error
	if c.sizes, err = parseSizes(sizes); err != nil || c.reps < 1 || c.ckptN < 0 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: compare [-quick] [-sizes N,...] [-checkpoint-n N] [-reps R] [-timeout D] [-impls go,cli,eino,js] [-json FILE]")
		os.Exit(2)
	}
	for s := range strings.SplitSeq(impls, ",") {
		if s = strings.TrimSpace(s); s != "" {
			if !slices.Contains(allImpls, s) {
				fatal("unknown implementation %q (want some of %s)", s, strings.Join(allImpls, ","))
			}
			c.impls = append(c.impls, s)
		}
	}
	if c.root, err = findRoot(); err != nil {
		fatal("%v", err)
	}
	if err := run(context.Background(), c); err != nil {
		fatal("%v", err)
	}
}

var allImpls = []string{"go", "cli", "cli-norewind", "eino", "js"}

var labels = map[string]string{
	"go":           "deepagents-go, in process",
	"cli":          "deepagents-go, CLI",
	"cli-norewind": "deepagents-go, CLI, rewind: false",
	"eino":         "Eino",
	"js":           "JS DeepAgents",
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad size %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// findRoot returns the repository root: the nearest directory at or above
// the working directory holding bench/workload.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "bench", "workload", "workload.go")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run compare from the deepagents repository (no bench/workload found above the working directory)")
		}
		dir = parent
	}
}

// env holds what the runs need: built binaries and scripts.
type env struct {
	config
	tmp      string
	loop     string // bench/loop binary
	cli      string // deepagents binary
	eino     string // bench/eino binary
	scripts  map[int]string
	disabled map[string]string // implementation -> why it cannot run
	gnuTime  string            // GNU time, when it works: measures peak RSS
}

func run(ctx context.Context, c config) error {
	tmp, err := os.MkdirTemp("", "deepagents-compare")
	if err != nil {
		return err
	}
	if c.keep {
		logf("keeping %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	e := &env{config: c, tmp: tmp, scripts: map[int]string{}, disabled: map[string]string{}}
	if err := e.build(ctx); err != nil {
		return err
	}
	if err := e.checkParity(ctx); err != nil {
		return err
	}
	for _, n := range append(slices.Clone(c.sizes), c.ckptN) {
		if n == 0 || e.scripts[n] != "" {
			continue
		}
		p := filepath.Join(tmp, fmt.Sprintf("script-%d.json", n))
		if _, err := output(ctx, "", e.loop, "-n", strconv.Itoa(n), "-write-script", p); err != nil {
			return err
		}
		e.scripts[n] = p
	}

	type job struct {
		n    int
		ckpt bool
	}
	var jobs []job
	for _, n := range c.sizes {
		jobs = append(jobs, job{n, false})
	}
	if c.ckptN > 0 {
		jobs = append(jobs, job{c.ckptN, true})
	}
	var results []result
	given := map[string]string{} // key -> why the remaining repetitions were skipped
	total, done := 0, 0
	for _, j := range jobs {
		for _, im := range c.impls {
			if e.runnable(im, j.ckpt) {
				total += c.reps
			}
		}
	}
	for rep := range c.reps {
		for _, j := range jobs {
			order := rotate(c.impls, rep)
			for _, im := range order {
				if !e.runnable(im, j.ckpt) {
					continue
				}
				key := fmt.Sprintf("%s/%d/%v", im, j.n, j.ckpt)
				done++
				if why := given[key]; why != "" {
					logf("[%d/%d] %-4s n=%-6d ckpt=%-5v skipped (%s before)", done, total, im, j.n, j.ckpt, why)
					continue
				}
				r := e.runOne(ctx, im, j.n, j.ckpt, rep)
				results = append(results, r)
				logf("[%d/%d] %-4s n=%-6d ckpt=%-5v %s", done, total, im, j.n, j.ckpt, r)
				if r.Status == statusTimeout || r.Status == statusOOM {
					given[key] = r.Status
				}
			}
		}
	}
	if c.jsonOut != "" {
		data, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(c.jsonOut, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	printTables(os.Stdout, e, results)
	for _, r := range results {
		if r.Status == statusError {
			return errors.New("some runs failed (see above)")
		}
	}
	return nil
}

func rotate(s []string, k int) []string {
	if len(s) == 0 {
		return nil
	}
	k %= len(s)
	return append(slices.Clone(s[k:]), s[:k]...)
}

func (e *env) runnable(im string, ckpt bool) bool {
	if e.disabled[im] != "" {
		return false
	}
	return !ckpt || im != "eino"
}

// build compiles the Go programs and installs the JavaScript dependencies.
// An implementation that cannot be built is disabled, with the reason
// printed; the others still run.
func (e *env) build(ctx context.Context) error {
	want := func(im string) bool { return slices.Contains(e.impls, im) }
	e.gnuTime = findGNUTime(ctx, e.tmp)
	if e.gnuTime == "" {
		logf("GNU time not found: peak RSS comes from wait4 and is at least compare's own peak (see bench/internal/rusage)")
	}
	e.loop = filepath.Join(e.tmp, "loop")
	logf("building bench/loop")
	if _, err := output(ctx, e.root, "go", "build", "-o", e.loop, "./bench/loop"); err != nil {
		return err // needed for the scripts and the parity check
	}
	if want("cli") || want("cli-norewind") {
		e.cli = filepath.Join(e.tmp, "deepagents")
		logf("building cmd/deepagents")
		if _, err := output(ctx, e.root, "go", "build", "-o", e.cli, "./cmd/deepagents"); err != nil {
			e.disable("cli", err)
			e.disable("cli-norewind", err)
		}
	}
	if want("eino") {
		e.eino = filepath.Join(e.tmp, "eino")
		logf("building bench/eino (its own module)")
		// Its own module, outside the repository's go.work.
		if _, err := outputEnv(ctx, filepath.Join(e.root, "bench", "eino"), []string{"GOWORK=off"}, "go", "build", "-o", e.eino, "."); err != nil {
			e.disable("eino", err)
		}
	}
	if want("js") {
		dir := filepath.Join(e.root, "bench", "js")
		if _, err := exec.LookPath("node"); err != nil {
			e.disable("js", err)
		} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "deepagents")); err != nil || e.npmInstall {
			logf("npm ci in bench/js")
			if _, err := output(ctx, dir, "npm", "ci", "--no-audit", "--no-fund"); err != nil {
				e.disable("js", err)
			}
		}
	}
	return nil
}

// findGNUTime returns the path of GNU time if "time -f %M -o FILE" works.
func findGNUTime(ctx context.Context, tmp string) string {
	const bin = "/usr/bin/time"
	out := filepath.Join(tmp, "time-check")
	if err := exec.CommandContext(ctx, bin, "-f", "%M", "-o", out, "true").Run(); err != nil {
		return ""
	}
	if _, err := readTimeRSS(out); err != nil {
		return ""
	}
	return bin
}

// readTimeRSS reads the peak RSS in bytes that GNU time -f %M wrote: the
// last line of the file (before it, time may report how the command
// ended).
func readTimeRSS(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	kb, err := strconv.ParseInt(lastLines(string(data), 1), 10, 64)
	return kb * 1024, err
}

func (e *env) disable(im string, err error) {
	e.disabled[im] = err.Error()
	logf("%s disabled: %v", im, err)
}

// checkParity makes sure the three drivers build the same workload.
func (e *env) checkParity(ctx context.Context) error {
	const n = 301
	ours, err := output(ctx, "", e.loop, "-n", strconv.Itoa(n), "-dump")
	if err != nil {
		return err
	}
	others := map[string][]string{}
	if e.runnable("eino", false) && slices.Contains(e.impls, "eino") {
		others["eino"] = []string{e.eino, "-n", strconv.Itoa(n), "-dump"}
	}
	if e.runnable("js", false) && slices.Contains(e.impls, "js") {
		others["js"] = []string{"node", filepath.Join(e.root, "bench", "js", "driver.mjs"), strconv.Itoa(n), "--dump"}
	}
	for im, argv := range others {
		got, err := output(ctx, "", argv[0], argv[1:]...)
		if err != nil {
			return err
		}
		if err := sameLines(ours, got); err != nil {
			return fmt.Errorf("the %s driver's workload differs from bench/workload: %w", im, err)
		}
	}
	logf("workload parity: go, %s agree on %d steps", strings.Join(slices.Sorted(maps.Keys(others)), ", "), n)
	return nil
}

// sameLines compares two outputs of one JSON value per line, as values.
func sameLines(a, b []byte) error {
	la := strings.Split(strings.TrimSpace(string(a)), "\n")
	lb := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(la) != len(lb) {
		return fmt.Errorf("%d lines, want %d", len(lb), len(la))
	}
	for i := range la {
		var va, vb any
		if err := json.Unmarshal([]byte(la[i]), &va); err != nil {
			return fmt.Errorf("line %d: %w", i+1, err)
		}
		if err := json.Unmarshal([]byte(lb[i]), &vb); err != nil {
			return fmt.Errorf("line %d: %w", i+1, err)
		}
		if !reflect.DeepEqual(va, vb) {
			return fmt.Errorf("line %d: %s, want %s", i+1, lb[i], la[i])
		}
	}
	return nil
}

// Run outcomes.
const (
	statusOK      = "ok"
	statusTimeout = "timeout"
	statusOOM     = "OOM"
	statusError   = "error"
)

type result struct {
	Impl       string  `json:"impl"`
	N          int     `json:"n"`
	Checkpoint bool    `json:"checkpoint"`
	Rep        int     `json:"rep"`
	Status     string  `json:"status"`
	Seconds    float64 `json:"seconds"`        // the time steps/s is computed from
	Wall       float64 `json:"wall_seconds"`   // the whole process
	RSS        int64   `json:"max_rss_bytes"`  // measured from outside (GNU time, or wait4)
	SelfRSS    int64   `json:"self_rss_bytes"` // as the driver reported it (not the CLI)
	Error      string  `json:"error,omitempty"`
}

func (r result) StepsPerSec() float64 { return float64(r.N) / r.Seconds }

// ProcessStepsPerSec is N over the process's whole wall time, start-up
// and set-up included: the one rate measured the same way for every
// implementation (the CLI's run time is its process's; the others time
// their own loop, after their start-up).
func (r result) ProcessStepsPerSec() float64 { return float64(r.N) / r.Wall }

func (r result) String() string {
	if r.Status != statusOK {
		s := fmt.Sprintf("%s after %.1f s", r.Status, r.Wall)
		if r.Error != "" {
			s += ": " + r.Error
		}
		return s
	}
	return fmt.Sprintf("%9.1f steps/s  %7.1f MB  (%.2f s; process %.2f s)", r.StepsPerSec(), harness.MB(r.RSS), r.Seconds, r.Wall)
}

// runOne runs one implementation once in a fresh process.
func (e *env) runOne(ctx context.Context, im string, n int, ckpt bool, rep int) result {
	r := result{Impl: im, N: n, Checkpoint: ckpt, Rep: rep}
	dir, err := os.MkdirTemp(e.tmp, fmt.Sprintf("%s-%d-", im, n))
	if err != nil {
		r.Status, r.Error = statusError, err.Error()
		return r
	}
	defer os.RemoveAll(dir)
	var argv []string
	switch im {
	case "go":
		argv = []string{e.loop, "-n", strconv.Itoa(n)}
		if ckpt {
			argv = append(argv, "-checkpoint", filepath.Join(dir, "bench.db"))
		}
	case "cli", "cli-norewind":
		db := "memory:"
		if ckpt {
			db = filepath.Join(dir, "bench.db")
		}
		ws, err := os.MkdirTemp(e.wsRoot, "deepagents-compare-ws-")
		if err != nil {
			r.Status, r.Error = statusError, err.Error()
			return r
		}
		defer os.RemoveAll(ws)
		argv = []string{e.cli, "run", "--model", "replay:" + e.scripts[n], "--output", "jsonl",
			"--db", db, "--dir", ws, "--max-steps", strconv.Itoa(n + 1), "go"}
	case "eino":
		argv = []string{e.eino, "-n", strconv.Itoa(n)}
	case "js":
		argv = []string{"node"}
		if e.jsHeapMB > 0 {
			argv = append(argv, fmt.Sprintf("--max-old-space-size=%d", e.jsHeapMB))
		}
		argv = append(argv, filepath.Join(e.root, "bench", "js", "driver.mjs"), strconv.Itoa(n))
		if ckpt {
			argv = append(argv, "--checkpoint")
		}
	}

	rssFile := filepath.Join(dir, "rss")
	if e.gnuTime != "" {
		argv = append([]string{e.gnuTime, "-f", "%M", "-o", rssFile, "--"}, argv...)
	}
	cctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, argv[0], argv[1:]...)
	ownGroup(cmd)
	cmd.Dir = dir
	// The CLI reads ~/.deepagents (memory, skills, agents): give it an
	// empty home so that nothing of the user's leaks into the runs.
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		r.Status, r.Error = statusError, err.Error()
		return r
	}
	if im == "cli-norewind" {
		cfg := filepath.Join(home, ".deepagents", "config.yaml")
		if err := errors.Join(os.Mkdir(filepath.Dir(cfg), 0o755), os.WriteFile(cfg, []byte("rewind: false\n"), 0o644)); err != nil {
			r.Status, r.Error = statusError, err.Error()
			return r
		}
	}
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"))
	var stdout bytes.Buffer
	stderr := &harness.TailBuffer{Max: 4096}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	start := time.Now()
	err = cmd.Run()
	r.Wall = time.Since(start).Seconds()
	r.RSS = rusage.Child(cmd.ProcessState)
	timeOut, _ := os.ReadFile(rssFile)
	if e.gnuTime != "" {
		if rss, err := readTimeRSS(rssFile); err == nil {
			r.RSS = rss
		}
	}
	switch {
	case cctx.Err() != nil && ctx.Err() == nil:
		r.Status = statusTimeout
		r.Error = fmt.Sprintf("longer than %s", e.timeout)
		return r
	case err != nil:
		msg := strings.TrimSpace(stderr.String())
		r.Status, r.Error = statusError, fmt.Sprintf("%v: %s", err, lastLines(msg, 3))
		if strings.Contains(msg, "heap out of memory") || strings.Contains(msg, "out of memory") || killedBySignal(cmd.ProcessState, string(timeOut)) {
			r.Status = statusOOM
		}
		return r
	}
	if im == "cli" || im == "cli-norewind" {
		r.Seconds = r.Wall
		if err := checkEvents(n, stdout.Bytes()); err != nil {
			r.Status, r.Error = statusError, err.Error()
			return r
		}
	} else {
		var out struct {
			N       int     `json:"n"`
			Seconds float64 `json:"seconds"`
			RSS     float64 `json:"max_rss_mb"`
		}
		if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &out); err != nil || out.N != n || out.Seconds <= 0 {
			r.Status, r.Error = statusError, fmt.Sprintf("unexpected output %q (%v)", lastLines(stdout.String(), 2), err)
			return r
		}
		r.Seconds, r.SelfRSS = out.Seconds, int64(out.RSS*(1<<20))
	}
	r.Status = statusOK
	return r
}

// killedBySignal reports whether the program was killed by SIGKILL (the
// OOM killer) or SIGABRT (V8 giving up), directly or under GNU time.
func killedBySignal(ps *os.ProcessState, timeOut string) bool {
	if strings.Contains(timeOut, "terminated by signal 9") || strings.Contains(timeOut, "terminated by signal 6") {
		return true
	}
	if ps == nil {
		return false
	}
	s := ps.String()
	return strings.Contains(s, "signal: killed") || strings.Contains(s, "signal: aborted")
}

// checkEvents verifies the CLI's event stream: the run completed, one
// tool result per step, none an error, and the last read and listing show
// what was written.
func checkEvents(n int, out []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	results := 0
	var lastRead, lastLs, status, runErr string
	for sc.Scan() {
		var ev struct {
			Type    string `json:"type"`
			Name    string `json:"name"`
			Content string `json:"content"`
			IsError bool   `json:"is_error"`
			Status  string `json:"status"`
			Error   string `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("CLI output: %w", err)
		}
		switch ev.Type {
		case "tool_result":
			if ev.IsError {
				return fmt.Errorf("tool %s failed: %s", ev.Name, ev.Content)
			}
			results++
			switch ev.Name {
			case "read_file":
				lastRead = ev.Content
			case "ls":
				lastLs = ev.Content
			}
		case "run_end":
			status, runErr = ev.Status, ev.Error
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if status != "completed" {
		return fmt.Errorf("CLI run ended %q: %s", status, runErr)
	}
	if results != n {
		return fmt.Errorf("%d tool results, want %d", results, n)
	}
	return workload.CheckResults(n, lastRead, lastLs)
}

func lastLines(s string, k int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > k {
		lines = lines[len(lines)-k:]
	}
	return strings.Join(lines, " | ")
}

// output runs a command in dir and returns its standard output; a failure
// carries the tail of its standard error.
func output(ctx context.Context, dir, name string, args ...string) ([]byte, error) {
	return outputEnv(ctx, dir, nil, name, args...)
}

// outputEnv is output with env added to the environment.
func outputEnv(ctx context.Context, dir string, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	stderr := &harness.TailBuffer{Max: 4096}
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, lastLines(stderr.String(), 5))
	}
	return out, nil
}

// ---- tables ----

// cell is the median of one implementation at one size, or why there is
// none.
type cell struct {
	ok       bool
	why      string // when !ok
	rate     float64
	rss      float64 // MB
	runs     int
	min, max float64 // steps/s of the runs
}

func summarize(results []result, im string, n int, ckpt bool) cell {
	return summarizeBy(results, im, n, ckpt, result.StepsPerSec)
}

// summarizeBy is summarize with the rate taken by rate.
func summarizeBy(results []result, im string, n int, ckpt bool, rate func(result) float64) cell {
	var rates, rss []float64
	why := ""
	for _, r := range results {
		if r.Impl != im || r.N != n || r.Checkpoint != ckpt {
			continue
		}
		if r.Status != statusOK {
			why = r.Status
			continue
		}
		rates = append(rates, rate(r))
		rss = append(rss, harness.MB(r.RSS))
	}
	if len(rates) == 0 {
		if why == "" {
			why = "n/a"
		}
		return cell{why: why}
	}
	return cell{ok: true, rate: median(rates), rss: median(rss), runs: len(rates), min: slices.Min(rates), max: slices.Max(rates)}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (c cell) rateString(timeout time.Duration) string {
	if !c.ok {
		return c.whyString(timeout)
	}
	return thousands(c.rate)
}

func (c cell) rssString(timeout time.Duration) string {
	if !c.ok {
		return c.whyString(timeout)
	}
	return fmt.Sprintf("%.0f MB", c.rss)
}

func (c cell) whyString(timeout time.Duration) string {
	if c.why == statusTimeout {
		return fmt.Sprintf("timeout (> %s)", timeout)
	}
	return c.why
}

// ratio formats a/b as "12×", or "–" when either is missing.
func ratio(a, b cell, rss bool) string {
	if !a.ok || !b.ok {
		return "–"
	}
	var x float64
	if rss {
		x = b.rss / a.rss // how many times less memory a needs
	} else {
		x = a.rate / b.rate
	}
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f×", x)
	case x >= 10:
		return fmt.Sprintf("%.1f×", x)
	default:
		return fmt.Sprintf("%.2f×", x)
	}
}

func thousands(x float64) string {
	if x < 100 {
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	s := strconv.FormatInt(int64(x+0.5), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func printTables(w io.Writer, e *env, results []result) {
	to := e.timeout
	has := func(im string) bool { return slices.Contains(e.impls, im) }
	fmt.Fprintf(w, "\n%s/%s, %d CPUs, %s; medians of %d repetition(s); steps/s = N / run time\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), e.reps)
	for im, why := range e.disabled {
		fmt.Fprintf(w, "%s could not run: %s\n\n", labels[im], why)
	}

	cols := []string{}
	for _, im := range allImpls {
		if has(im) {
			cols = append(cols, im)
		}
	}
	type rp struct{ a, b string }
	var pairs []rp
	for _, p := range []rp{{"go", "js"}, {"go", "eino"}, {"cli", "js"}, {"cli", "eino"}, {"cli-norewind", "eino"}, {"cli", "cli-norewind"}} {
		if has(p.a) && has(p.b) {
			pairs = append(pairs, p)
		}
	}
	short := map[string]string{"go": "ours", "cli": "CLI", "cli-norewind": "CLI, no rewind", "eino": "Eino", "js": "JS"}
	header := func(title string, ratioFmt string) {
		fmt.Fprintf(w, "| %s |", title)
		for _, im := range cols {
			fmt.Fprintf(w, " %s |", labels[im])
		}
		for _, p := range pairs {
			fmt.Fprintf(w, " "+ratioFmt+" |", short[p.a], short[p.b])
		}
		fmt.Fprintln(w)
		fmt.Fprint(w, "|---:|")
		for range len(cols) + len(pairs) {
			fmt.Fprint(w, "---:|")
		}
		fmt.Fprintln(w)
	}
	row := func(label string, n int, ckpt bool, rss bool, rate func(result) float64) {
		fmt.Fprintf(w, "| %s |", label)
		cells := map[string]cell{}
		for _, im := range cols {
			c := summarizeBy(results, im, n, ckpt, rate)
			if ckpt && im == "eino" {
				c = cell{why: "n/a"}
			}
			cells[im] = c
			if rss {
				fmt.Fprintf(w, " %s |", c.rssString(to))
			} else {
				fmt.Fprintf(w, " %s |", c.rateString(to))
			}
		}
		for _, p := range pairs {
			fmt.Fprintf(w, " %s |", ratio(cells[p.a], cells[p.b], rss))
		}
		fmt.Fprintln(w)
	}

	bySize := func(title, ratioFmt string, rss bool, rate func(result) float64) {
		fmt.Fprintln(w, title)
		fmt.Fprintln(w)
		header("steps", ratioFmt)
		for _, n := range e.sizes {
			row(thousands(float64(n)), n, false, rss, rate)
		}
	}
	bySize("Steps per second, without checkpoints (higher is better):", "%s ÷ %s", false, result.StepsPerSec)
	fmt.Fprintln(w)
	bySize("Steps per second over each whole process, start-up included, every implementation timed the same way (higher is better):",
		"%s ÷ %s", false, result.ProcessStepsPerSec)
	fmt.Fprintln(w)
	bySize("Peak RSS, without checkpoints (lower is better; ratios: how many times less memory):", "%s vs %s", true, result.StepsPerSec)
	if e.ckptN > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "With a checkpoint per step, %s steps (ours: SQLite file; CLI: SQLite file; JS: MemorySaver; Eino: no per-step checkpoints):\n\n", thousands(float64(e.ckptN)))
		header("", "%s ÷ %s")
		row("steps/s", e.ckptN, true, false, result.StepsPerSec)
		row("peak RSS", e.ckptN, true, true, result.StepsPerSec)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Spread (min–max steps/s over the repetitions):")
	fmt.Fprintln(w)
	for _, im := range cols {
		var parts []string
		for _, n := range e.sizes {
			if c := summarize(results, im, n, false); c.ok && c.runs > 1 {
				parts = append(parts, fmt.Sprintf("%d: %s–%s", n, thousands(c.min), thousands(c.max)))
			}
		}
		if c := summarize(results, im, e.ckptN, true); c.ok && c.runs > 1 {
			parts = append(parts, fmt.Sprintf("%d with checkpoints: %s–%s", e.ckptN, thousands(c.min), thousands(c.max)))
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "- %s: %s\n", labels[im], strings.Join(parts, "; "))
		}
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "compare: "+format+"\n", args...)
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "compare: "+format+"\n", args...)
	os.Exit(1)
}
