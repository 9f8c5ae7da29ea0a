// Command glob compares the agent's glob tool with ripgrep and find over a
// source tree (by default the Go source tree, $(go env GOROOT)/src), as the
// agent uses it:
//
//   - ours, tool: the glob tool of the filesystem middleware over the
//     Filesystem backend, called in process with JSON arguments as a model
//     would call it, formatting of the result included;
//   - ours, CLI: deepagents run --dir ROOT --model replay:SCRIPT, a script
//     of that one tool call and a final answer, as a process (start-up
//     included; the output also shows the CLI's start-up alone, a script
//     with only the final answer);
//   - rg: rg --files --no-ignore -g GLOB, in ROOT (--no-ignore because the
//     backend ignores .gitignore; without --hidden because "*" and "**"
//     skip names starting with "." as rg does);
//   - find: an equivalent find command, without paths through a name
//     starting with ".".
//
// Each runs -runs times after a warm-up (so the page cache is warm for all),
// taking turns, and the table shows median wall times. The file sets must
// agree; a row whose sets differ is marked and the differences listed. Run
// from the repository root:
//
//	go run ./bench/glob [-root DIR] [-runs N] [-cli FILE]
//
// The same comparison for grep is bench/grep (with -cli for the CLI).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/filesystem"
	"github.com/deepagents-go/deepagents/tool"
)

// query is one glob pattern and the equivalent find arguments.
type query struct {
	arg  string // the pattern
	find []string
}

func queries(root string) []query {
	return []query{
		{arg: `**/*_test.go`, find: []string{root, "-type", "f", "-name", "*_test.go"}},
		{arg: `**/*.s`, find: []string{root, "-type", "f", "-name", "*.s"}},
		{arg: `**/testdata/**/*.txt`, find: []string{root, "-type", "f", "-path", "*/testdata/*", "-name", "*.txt"}},
		{arg: `net/**/*.go`, find: []string{filepath.Join(root, "net"), "-type", "f", "-name", "*.go"}},
		{arg: `*/*.go`, find: []string{root, "-mindepth", "2", "-maxdepth", "2", "-type", "f", "-name", "*.go"}},
	}
}

func main() {
	root := flag.String("root", "", "tree to search (default: $(go env GOROOT)/src)")
	runs := flag.Int("runs", 7, "timed runs of each tool per query")
	cli := flag.String("cli", "", "the deepagents binary (default: go build ./cmd/deepagents into a temporary directory)")
	flag.Parse()
	if *runs < 1 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: glob [-root DIR] [-runs N] [-cli FILE]")
		os.Exit(2)
	}
	if err := run(context.Background(), *root, *runs, *cli); err != nil {
		fmt.Fprintln(os.Stderr, "glob:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, root string, runs int, cli string) error {
	if root == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			return fmt.Errorf("go env GOROOT: %w", err)
		}
		root = filepath.Join(strings.TrimSpace(string(out)), "src")
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "deepagents-glob")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if cli == "" {
		cli = filepath.Join(tmp, "deepagents")
		if out, err := exec.Command("go", "build", "-o", cli, "./cmd/deepagents").CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./cmd/deepagents (run from the repository root): %w: %s", err, out)
		}
	}
	if _, err := exec.LookPath("rg"); err != nil {
		return fmt.Errorf("ripgrep is needed: %w", err)
	}
	fsb, err := backend.NewFilesystemBackend(root, backend.FilesystemOptions{})
	if err != nil {
		return err
	}
	// The in-process tool returns every file; the CLI keeps its
	// 80,000-character cap.
	mw, err := filesystem.New(filesystem.Config{Backend: fsb, EvictChars: -1})
	if err != nil {
		return err
	}
	tools := map[string]tool.Tool{}
	for _, t := range mw.Tools() {
		tools[t.Spec().Name] = t
	}
	home := filepath.Join(tmp, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		return err
	}
	c := &cliRunner{bin: cli, root: root, tmp: tmp, env: append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"))}

	rgVersion, _ := exec.Command("rg", "--version").Output()
	fmt.Printf("tree: %s (%s)\nmachine: %s/%s, %d CPUs, %s; %s\nmedian wall time of %d runs after a warm-up, taking turns\n\n",
		root, countFiles(root), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(),
		firstLine(string(rgVersion)), runs)

	startup, err := c.startup(ctx, runs)
	if err != nil {
		return err
	}
	fmt.Printf("CLI start-up alone (a script with only the final answer): %s\n\n", ms(startup))
	fmt.Println("| pattern | files | ours, tool in process | ours, CLI process | rg --files -g | find | CLI ÷ rg | CLI ÷ find |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	var problems []string
	for _, q := range queries(root) {
		args := toolArgs(q)
		script, err := c.script("glob", args)
		if err != nil {
			return err
		}
		var ours, viaCLI, rg, found []string
		var runErr error
		fns := []func(){
			func() {
				out, err := tools["glob"].Call(ctx, args)
				if err != nil {
					runErr = fmt.Errorf("glob tool: %w", err)
				}
				ours = toolFiles(out)
			},
			func() {
				out, err := c.run(ctx, script)
				if err != nil {
					runErr = err
				}
				viaCLI = toolFiles(out)
			},
			func() {
				// rg runs in root with no path argument, so that it prints
				// relative paths and matches the glob against them.
				out, err := lines(ctx, root, "rg", "--files", "--no-ignore", "-g", q.arg)
				if err != nil {
					runErr = err
				}
				slices.Sort(out)
				rg = out
			},
			func() {
				out, err := lines(ctx, "", "find", append(q.find, "-not", "-path", "*/.*")...)
				if err != nil {
					runErr = err
				}
				found = relTo(root, out)
			},
		}
		times := takeTurns(runs, fns)
		if runErr != nil {
			return runErr
		}
		mark := ""
		if d := diff(ours, rg, "ours", "rg"); d != "" {
			problems, mark = append(problems, fmt.Sprintf("%q: %s", q.arg, d)), " (differs)"
		}
		if d := diff(ours, viaCLI, "tool", "CLI"); d != "" {
			problems, mark = append(problems, fmt.Sprintf("%q: %s", q.arg, d)), " (differs)"
		}
		if d := diff(ours, found, "ours", "find"); d != "" {
			problems, mark = append(problems, fmt.Sprintf("%q: %s", q.arg, d)), " (differs)"
		}
		fmt.Printf("| `%s` | %d%s | %s | %s | %s | %s | %.2f× | %.2f× |\n", q.arg, len(ours), mark,
			ms(times[0]), ms(times[1]), ms(times[2]), ms(times[3]),
			float64(times[1])/float64(times[2]), float64(times[1])/float64(times[3]))
	}
	if len(problems) > 0 {
		fmt.Println()
		for _, p := range problems {
			fmt.Println("-", p)
		}
		return errors.New("the file sets differ (see above)")
	}
	fmt.Println("\nThe same files for every pattern from every tool.")
	return nil
}

// toolArgs returns the glob tool's arguments for q.
func toolArgs(q query) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"pattern": q.arg}) // strings only: cannot fail
	return b
}

// toolFiles returns the files a glob tool result lists, without the
// leading slash, sorted.
func toolFiles(out string) []string {
	if out == "No files found" {
		return nil
	}
	var files []string
	for l := range strings.SplitSeq(out, "\n") {
		if l != "" {
			files = append(files, strings.TrimPrefix(l, "/"))
		}
	}
	slices.Sort(files)
	return files
}

// cliRunner runs the deepagents CLI on one-call scripts.
type cliRunner struct {
	bin, root, tmp string
	env            []string
	n              int
}

// script writes a replay script of one tool call and a final answer.
func (c *cliRunner) script(name string, args json.RawMessage) (string, error) {
	s := replay.Script{Turns: []replay.Turn{
		{ToolCalls: []llm.ToolCall{{ID: "call_0", Name: name, Args: args}}},
		{Content: "done"},
	}}
	if name == "" {
		s.Turns = s.Turns[1:]
	}
	data, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	c.n++
	p := filepath.Join(c.tmp, fmt.Sprintf("script-%d.json", c.n))
	return p, os.WriteFile(p, data, 0o644)
}

// run runs the CLI on a script and returns the content of its tool result.
func (c *cliRunner) run(ctx context.Context, script string) (string, error) {
	cmd := exec.CommandContext(ctx, c.bin, "run", "--model", "replay:"+script, "--output", "jsonl",
		"--db", "memory:", "--dir", c.root, "--max-steps", "3", "go")
	cmd.Env = c.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("deepagents run: %w: %s", err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	result, status := "", ""
	for sc.Scan() {
		var ev struct{ Type, Content, Status string }
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return "", fmt.Errorf("deepagents run output: %w", err)
		}
		switch ev.Type {
		case "tool_result":
			result = ev.Content
		case "run_end":
			status = ev.Status
		}
	}
	if status != "completed" {
		return "", fmt.Errorf("deepagents run ended %q", status)
	}
	return result, sc.Err()
}

// startup times the CLI on a script with only a final answer.
func (c *cliRunner) startup(ctx context.Context, runs int) (time.Duration, error) {
	script, err := c.script("", nil)
	if err != nil {
		return 0, err
	}
	var runErr error
	t := takeTurns(runs, []func(){func() {
		if _, err := c.run(ctx, script); err != nil {
			runErr = err
		}
	}})
	return t[0], runErr
}

// takeTurns calls each function once as a warm-up, then runs times in
// turn, and returns each one's median time.
func takeTurns(runs int, fns []func()) []time.Duration {
	for _, fn := range fns {
		fn()
	}
	ds := make([][]time.Duration, len(fns))
	for range runs {
		for i, fn := range fns {
			start := time.Now()
			fn()
			ds[i] = append(ds[i], time.Since(start))
		}
	}
	out := make([]time.Duration, len(fns))
	for i, d := range ds {
		slices.Sort(d)
		out[i] = d[len(d)/2]
	}
	return out
}

// lines runs a command in dir and returns its output lines. Exit status 1 (no
// match, for rg) is not an error.
func lines(ctx context.Context, dir, name string, args ...string) ([]string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == 1 && stderr.Len() == 0 {
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", name, err, stderr.String())
	}
	var ls []string
	for l := range strings.SplitSeq(string(out), "\n") {
		if l != "" {
			ls = append(ls, l)
		}
	}
	return ls, nil
}

// relTo makes host paths relative to root, with slashes, sorted.
func relTo(root string, paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if r, err := filepath.Rel(root, p); err == nil {
			out = append(out, filepath.ToSlash(r))
		}
	}
	slices.Sort(out)
	return out
}

// diff describes how two sorted file lists differ, or returns "".
func diff(a, b []string, na, nb string) string {
	if slices.Equal(a, b) {
		return ""
	}
	only := func(x, y []string) []string {
		var out []string
		for _, s := range x {
			if _, ok := slices.BinarySearch(y, s); !ok {
				out = append(out, s)
			}
		}
		if len(out) > 5 {
			out = append(out[:5:5], fmt.Sprintf("… %d more", len(out)-5))
		}
		return out
	}
	return fmt.Sprintf("only %s: %q; only %s: %q", na, only(a, b), nb, only(b, a))
}

func countFiles(root string) string {
	n, size := 0, int64(0)
	_ = filepath.WalkDir(root, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
			if fi, err := d.Info(); err == nil {
				size += fi.Size()
			}
		}
		return nil
	})
	return fmt.Sprintf("%d files, %d MB", n, size>>20)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
