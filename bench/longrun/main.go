// Command longrun runs the growing workload (see bench/workload) through
// the deepagents CLI as a whole process, the way a user's long run goes:
// every ls lists a folder that keeps growing, the conversation crosses the
// summarization trigger with the replay model's default context window, and
// every step is checkpointed into a SQLite file. It runs each step count
// with summaries that succeed and with summaries that fail, and Eino's deep
// agent on the same steps, and prints a Markdown table of:
//
//   - steps/s: steps over the CLI process's wall time, start-up included
//     (Eino's is over its own invoke call, measured inside its process);
//   - peak RSS of the process;
//   - checkpoint database bytes: the SQLite file with its -wal and -shm
//     after the process exits; and, apart, the conversation history files
//     the CLI appends beside it (DB.history/);
//   - message bytes: the bytes of the conversation's own messages, that is
//     the JSON of every assistant message plus the content of every tool
//     result the run produced (from its jsonl events), and the ratio of the
//     two;
//   - the notices the run gave (summarized, summary_failed,
//     context_trimmed).
//
// Usage, from the repository root:
//
//	go run ./bench/longrun [-sizes 1000,10000] [-summaries ok,fail] [-eino=true] [-timeout 30m] [-keep] [-durability sync] [-no-rewind]
//
// HOME and XDG_* point into the temporary directory, so nothing is written
// to the user's own data. No flag but -durability changes a product default: the CLI runs
// with its defaults but --db, --dir, --model replay:FILE, --output jsonl,
// --thread, and --max-steps N+1 (the default limit of 1,000 model calls
// would stop the longer runs).
package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/bench/internal/harness"
	"github.com/deepagents-go/deepagents/bench/internal/rusage"
	"github.com/deepagents-go/deepagents/bench/workload"
)

type config struct {
	sizes     []int
	summaries []bool
	eino      bool
	timeout   time.Duration
	keep      bool
	wsRoot    string
	// noRewind runs the CLI with rewind: false in its configuration.
	noRewind bool
	// durability, when set, is passed as --durability: the one flag that
	// changes a product default, named in the results when used.
	durability string
}

func main() {
	var c config
	var sizes, summaries string
	flag.StringVar(&sizes, "sizes", "1000,10000", "comma-separated step counts")
	flag.StringVar(&summaries, "summaries", "ok,fail", "summary outcomes to run: ok (the summarizer answers), fail (every summary call fails)")
	flag.BoolVar(&c.eino, "eino", true, "also run Eino's deep agent on the same steps (bench/eino)")
	flag.DurationVar(&c.timeout, "timeout", 30*time.Minute, "longest one run may take")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary directory")
	flag.BoolVar(&c.noRewind, "no-rewind", false, "run the CLI with rewind: false in its configuration (no workspace checkpoints), the one setting that differs")
	flag.StringVar(&c.durability, "durability", "", "pass --durability to the CLI (default: the CLI's own, async); sync measures a commit before every step")
	flag.StringVar(&c.wsRoot, "workspace-root", harness.WorkspaceRoot(), "where the CLI's workspaces go (default: /dev/shm when it exists, as in bench/compare, so that Eino's in-memory file store is not compared with a disk; the checkpoint database stays in the temporary directory)")
	flag.Parse()
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fatal("-sizes: %q is not a positive step count", s)
		}
		c.sizes = append(c.sizes, n)
	}
	for _, s := range strings.Split(summaries, ",") {
		switch strings.TrimSpace(s) {
		case "ok":
			c.summaries = append(c.summaries, true)
		case "fail":
			c.summaries = append(c.summaries, false)
		default:
			fatal("-summaries: %q is neither ok nor fail", s)
		}
	}
	if err := run(context.Background(), c); err != nil {
		fatal("%v", err)
	}
}

// result is one run's measurements.
type result struct {
	impl      string
	label     string // the run as the table names it, when not impl
	n         int
	summaries bool
	seconds   float64
	rss       int64 // bytes
	dbBytes   int64
	histBytes int64 // the conversation history files beside the database
	msgBytes  int64
	notices   map[string]int
	err       error
}

func run(ctx context.Context, c config) error {
	tmp, err := os.MkdirTemp("", "longrun-")
	if err != nil {
		return err
	}
	if c.keep {
		logf("keeping %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	cli := filepath.Join(tmp, "deepagents")
	logf("building the CLI")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", cli, "./cmd/deepagents").CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/deepagents: %v\n%s", err, out)
	}
	eino := filepath.Join(tmp, "eino")
	if c.eino {
		logf("building bench/eino")
		build := exec.CommandContext(ctx, "go", "build", "-o", eino, ".")
		build.Dir = "bench/eino"
		build.Env = append(os.Environ(), "GOWORK=off") // its own module, outside go.work
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("building bench/eino: %v\n%s", err, out)
		}
	}
	var results []result
	for _, n := range c.sizes {
		for _, ok := range c.summaries {
			r := runCLI(ctx, c, tmp, cli, n, ok)
			logf("%s", r)
			results = append(results, r)
		}
		if c.eino {
			r := runEino(ctx, c, eino, n)
			logf("%s", r)
			results = append(results, r)
		}
	}
	printTable(os.Stdout, results)
	return nil
}

func (r result) String() string {
	if r.err != nil {
		return fmt.Sprintf("%s n=%d summaries=%v: FAILED: %v", r.impl, r.n, r.summaries, r.err)
	}
	return fmt.Sprintf("%s n=%d summaries=%v: %.0f steps/s, %.1f MB RSS, db %d B, messages %d B, notices %v",
		r.impl, r.n, r.summaries, float64(r.n)/r.seconds, harness.MB(r.rss), r.dbBytes, r.msgBytes, r.notices)
}

func runCLI(ctx context.Context, c config, tmp, cli string, n int, summaries bool) result {
	r := result{impl: "cli", n: n, summaries: summaries, notices: map[string]int{}}
	if c.durability != "" {
		r.label = "cli --durability " + c.durability
	}
	if c.noRewind {
		r.label = strings.TrimSpace(cmp.Or(r.label, "cli") + ", rewind: false")
	}
	dir := filepath.Join(tmp, fmt.Sprintf("run-%d-%v", n, summaries))
	ws, err := os.MkdirTemp(c.wsRoot, "longrun-ws-")
	if err != nil {
		r.err = err
		return r
	}
	defer os.RemoveAll(ws)
	home := filepath.Join(dir, "home")
	for _, d := range []string{ws, filepath.Join(home, ".deepagents")} {
		if r.err = os.MkdirAll(d, 0o755); r.err != nil {
			return r
		}
	}
	if c.noRewind {
		if r.err = os.WriteFile(filepath.Join(home, ".deepagents", "config.yaml"), []byte("rewind: false\n"), 0o644); r.err != nil {
			return r
		}
	}
	script := filepath.Join(dir, "script.json")
	b, err := json.Marshal(workload.GrowingScript(n, summaries))
	if err != nil {
		r.err = err
		return r
	}
	if r.err = os.WriteFile(script, b, 0o644); r.err != nil {
		return r
	}
	db := filepath.Join(dir, "threads.db")
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, "run", "--model", "replay:"+script, "--db", db, "--dir", ws,
		"--output", "jsonl", "--thread", "longrun", "--max-steps", strconv.Itoa(n+1), "go")
	if c.durability != "" {
		cmd.Args = slices.Insert(cmd.Args, len(cmd.Args)-1, "--durability", c.durability)
	}
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_STATE_HOME="+filepath.Join(home, "state"))
	stderr := &harness.TailBuffer{Max: 4096}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		r.err = err
		return r
	}
	start := time.Now()
	if r.err = cmd.Start(); r.err != nil {
		return r
	}
	results, status, perr := readEvents(stdout, &r)
	werr := cmd.Wait()
	r.seconds = time.Since(start).Seconds()
	r.rss = rusage.Child(cmd.ProcessState)
	switch {
	case perr != nil:
		r.err = perr
	case werr != nil:
		r.err = fmt.Errorf("%v: %s", werr, stderr.String())
	case status != "completed":
		r.err = fmt.Errorf("run ended %q", status)
	case results != n:
		r.err = fmt.Errorf("%d tool results, want %d", results, n)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if st, err := os.Stat(db + suffix); err == nil {
			r.dbBytes += st.Size()
		}
	}
	_ = filepath.WalkDir(db+".history", func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				r.histBytes += info.Size()
			}
		}
		return nil
	})
	return r
}

// readEvents reads the CLI's jsonl events, adding up the message bytes and
// notices into r; it returns the number of tool results, the final status
// and the first problem (a tool error, a line that is not an event).
func readEvents(stdout io.Reader, r *result) (results int, status string, err error) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev struct {
			Type    string          `json:"type"`
			Message json.RawMessage `json:"message"`
			Content string          `json:"content"`
			IsError bool            `json:"is_error"`
			Name    string          `json:"name"`
			Status  string          `json:"status"`
			Error   string          `json:"error"`
		}
		if e := json.Unmarshal(sc.Bytes(), &ev); e != nil && err == nil {
			err = fmt.Errorf("not an event: %.200s", sc.Text())
			continue
		}
		switch ev.Type {
		case "message":
			r.msgBytes += int64(len(ev.Message))
		case "tool_result":
			results++
			r.msgBytes += int64(len(ev.Content))
			if ev.IsError && err == nil {
				err = fmt.Errorf("tool %s failed: %.200s", ev.Name, ev.Content)
			}
		case "notice":
			r.notices[ev.Name]++
		case "run_end":
			status = ev.Status
			if ev.Error != "" && err == nil {
				err = errors.New(ev.Error)
			}
		}
	}
	if e := sc.Err(); e != nil && err == nil {
		err = e
	}
	return results, status, err
}

func runEino(ctx context.Context, c config, bin string, n int) result {
	r := result{impl: "eino", n: n}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-n", strconv.Itoa(n), "-files-per-dir", strconv.Itoa(workload.GrowingFilesPerDir))
	stderr := &harness.TailBuffer{Max: 4096}
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		r.err = fmt.Errorf("%v: %s", err, stderr.String())
		return r
	}
	var got struct {
		Seconds  float64 `json:"seconds"`
		MaxRSSMB float64 `json:"max_rss_mb"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		r.err = fmt.Errorf("eino output %q: %v", out, err)
		return r
	}
	r.seconds, r.rss = got.Seconds, int64(got.MaxRSSMB*(1<<20))
	return r
}

func printTable(w io.Writer, results []result) {
	fmt.Fprintln(w, "| steps | run | summaries | steps/s | peak RSS (MB) | checkpoint DB (MB) | history files (MB) | message bytes (MB) | DB / messages | notices |")
	fmt.Fprintln(w, "|---:|---|---|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range results {
		if r.err != nil {
			fmt.Fprintf(w, "| %d | %s | %s | failed: %v | | | | | | |\n", r.n, r.impl, summariesName(r), r.err)
			continue
		}
		db, hist, msgs, ratio := "n/a", "n/a", "n/a", "n/a"
		if r.impl == "cli" {
			db, hist, msgs = fmt.Sprintf("%.1f", harness.MB(r.dbBytes)), fmt.Sprintf("%.1f", harness.MB(r.histBytes)), fmt.Sprintf("%.1f", harness.MB(r.msgBytes))
			ratio = fmt.Sprintf("%.2f", float64(r.dbBytes)/float64(r.msgBytes))
		}
		fmt.Fprintf(w, "| %d | %s | %s | %.0f | %.1f | %s | %s | %s | %s | %s |\n", r.n, cmp.Or(r.label, r.impl), summariesName(r),
			float64(r.n)/r.seconds, harness.MB(r.rss), db, hist, msgs, ratio, noticesString(r.notices))
	}
}

func summariesName(r result) string {
	switch {
	case r.impl != "cli":
		return "none (no summarization)"
	case r.summaries:
		return "succeed"
	}
	return "fail"
}

func noticesString(m map[string]int) string {
	var parts []string
	for _, k := range []string{"summarized", "summary_failed", "context_trimmed", "model_retry"} {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s ×%d", k, m[k]))
		}
	}
	return strings.Join(parts, ", ")
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, "longrun: "+format+"\n", args...) }

func fatal(format string, args ...any) {
	logf(format, args...)
	os.Exit(1)
}
