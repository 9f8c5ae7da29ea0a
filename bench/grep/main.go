// Command grep compares the Filesystem backend's grep with ripgrep.
//
// It searches a tree (by default the Go source tree, $(go env GOROOT)/src)
// for a few patterns in files-with-matches mode, with:
//
//   - ours, in process: backend.Filesystem.Grep, as the grep tool calls it;
//   - ours, as a process: this binary started with -once, which does one
//     grep and prints the paths, so process start-up is counted as it will
//     be for the CLI;
//   - ripgrep: rg -l --no-ignore --hidden PATTERN ROOT. --no-ignore and
//     --hidden make rg search every file, as the backend does (it has no
//     notion of .gitignore or hidden files).
//
// Each is run -runs times after one warm-up run (so the page cache is warm
// for all), taking turns, and the median wall time is reported. The file sets must be
// equal; differences are listed. Usage:
//
//	go run ./bench/grep [-root DIR] [-runs N] [-md] [-cli PATH] [PATTERN ...]
//
// With -cli, the deepagents binary at PATH runs too, as a whole process:
// "deepagents run" with a scripted model whose one turn calls the grep tool
// over the tree (--dir ROOT), then answers. Its files come from the tool
// result the run prints (--output jsonl), and must equal rg's.
//
// A last row compares Glob("**/*_test.go") with
// rg --files --no-ignore --hidden -g '**/*_test.go'.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/deepagents-go/deepagents/middleware/filesystem"
)

var defaultPatterns = []string{
	`func main`,
	`func \w+\(ctx context\.Context`,
	`errors\.New\("[a-z]+ [a-z]+`,
	`TODO|FIXME`,
	`(?i)deprecated`,
	`[A-Z][a-z]+[0-9]{3}\b`,
}

func main() {
	root := flag.String("root", "", "tree to search (default: $(go env GOROOT)/src)")
	runs := flag.Int("runs", 7, "timed runs of each tool per pattern")
	md := flag.Bool("md", false, "print a Markdown table")
	once := flag.Bool("once", false, "grep once for the pattern argument and print the matching files (used for the process timing)")
	glob := flag.Bool("glob", false, "with -once: glob instead of grep")
	cli := flag.String("cli", "", "also time the deepagents binary at this path doing the grep in a whole `deepagents run`")
	flag.Parse()
	if *root == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			fatal("go env GOROOT: %v", err)
		}
		*root = filepath.Join(strings.TrimSpace(string(out)), "src")
	}
	var err error
	if *once {
		if flag.NArg() != 1 {
			fatal("-once needs one pattern")
		}
		var files []string
		if *glob {
			files = globFiles(*root, flag.Arg(0))
		} else if files, err = grepFiles(*root, flag.Arg(0)); err != nil {
			fatal("%v", err)
		}
		w := bufio.NewWriterSize(os.Stdout, 64<<10)
		for _, f := range files {
			w.WriteString(f)
			w.WriteByte('\n')
		}
		w.Flush()
		return
	}
	patterns := flag.Args()
	if len(patterns) == 0 {
		patterns = defaultPatterns
	}
	self, err := os.Executable()
	if err != nil {
		fatal("%v", err)
	}
	rgVersion, _ := exec.Command("rg", "--version").Output()
	fmt.Printf("tree: %s\nmachine: %s/%s, %d CPUs (GOMAXPROCS %d), %s\nripgrep: %s\nruns: median of %d after a warm-up\n\n",
		*root, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(),
		firstLine(string(rgVersion)), *runs)
	if *md {
		if *cli != "" {
			fmt.Println("| pattern | files | ours, in process | ours, process | deepagents run | rg -l | process / rg | deepagents run / rg |")
			fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
		} else {
			fmt.Println("| pattern | files | ours, in process | ours, process | rg -l | process / rg |")
			fmt.Println("|---|---:|---:|---:|---:|---:|")
		}
	} else {
		fmt.Printf("%-36s %6s %12s %12s %12s %8s %12s %8s\n", "pattern", "files", "in-process", "process", "rg -l", "ratio", "deepagents", "ratio")
	}
	allSame := true
	for _, pat := range patterns {
		var ours, proc, rg, da []string
		fns := []func(){
			func() {
				if ours, err = grepFiles(*root, pat); err != nil {
					fatal("grep %q: %v", pat, err)
				}
			},
			func() { proc = run(self, "-root", *root, "-once", pat) },
			func() { rg = run("rg", "-l", "--no-ignore", "--hidden", "--", pat, *root) },
		}
		if *cli != "" {
			script := grepScript(pat)
			fns = append(fns, func() { da = runCLI(*cli, script, *root) })
		}
		times := timeAll(*runs, fns...)
		inproc, process, rgTime := times[0], times[1], times[2]
		for i, f := range rg {
			rg[i] = strings.TrimPrefix(filepath.ToSlash(strings.TrimPrefix(f, *root)), "/")
		}
		slices.Sort(rg)
		same := slices.Equal(ours, rg) && slices.Equal(ours, proc)
		if *cli != "" && !slices.Equal(ours, da) && !cappedSubset(da, ours) {
			same = false
			fmt.Printf("  %q: deepagents run found %d files, the backend %d\n", pat, len(da), len(ours))
		}
		allSame = allSame && same
		ratio := float64(process) / float64(rgTime)
		name := strings.ReplaceAll(pat, "|", `\|`)
		switch {
		case *md && *cli != "":
			fmt.Printf("| `%s` | %d | %s | %s | %s | %s | %.2f× | %.2f× |\n", name, len(ours), ms(inproc), ms(process), ms(times[3]), ms(rgTime), ratio, float64(times[3])/float64(rgTime))
		case *md:
			fmt.Printf("| `%s` | %d | %s | %s | %s | %.2f× |\n", name, len(ours), ms(inproc), ms(process), ms(rgTime), ratio)
		case *cli != "":
			fmt.Printf("%-36s %6d %12s %12s %12s %7.2fx %12s %7.2fx\n", pat, len(ours), ms(inproc), ms(process), ms(rgTime), ratio, ms(times[3]), float64(times[3])/float64(rgTime))
		default:
			fmt.Printf("%-36s %6d %12s %12s %12s %7.2fx\n", pat, len(ours), ms(inproc), ms(process), ms(rgTime), ratio)
		}
		if !same {
			reportDiff(pat, ours, rg, proc)
		}
	}
	// Glob: the backend's Glob against rg --files with a glob.
	{
		const pat = "**/*_test.go"
		var ours, proc, rg []string
		times := timeAll(*runs,
			func() { ours = globFiles(*root, pat) },
			func() { proc = run(self, "-root", *root, "-once", "-glob", pat) },
			func() { rg = run("rg", "--files", "--no-ignore", "--hidden", "-g", pat, *root) },
		)
		inproc, process, rgTime := times[0], times[1], times[2]
		for i, f := range rg {
			rg[i] = strings.TrimPrefix(filepath.ToSlash(strings.TrimPrefix(f, *root)), "/")
		}
		slices.Sort(rg)
		same := slices.Equal(ours, rg) && slices.Equal(ours, proc)
		allSame = allSame && same
		ratio := float64(process) / float64(rgTime)
		label := "glob " + pat + " (vs rg --files -g)"
		if *md {
			fmt.Printf("| %s | %d | %s | %s | %s | %.2f× |\n", label, len(ours), ms(inproc), ms(process), ms(rgTime), ratio)
		} else {
			fmt.Printf("%-36s %6d %12s %12s %12s %7.2fx\n", label, len(ours), ms(inproc), ms(process), ms(rgTime), ratio)
		}
		if !same {
			reportDiff(pat, ours, rg, proc)
		}
	}
	if !allSame {
		fmt.Println("\nFILE SETS DIFFER (see above)")
		os.Exit(1)
	}
	fmt.Println("\nsame files found by both for every pattern")
}

// grepFiles runs the backend's grep in files-with-matches mode and returns
// the matching files relative to root.
func grepFiles(root, pattern string) ([]string, error) {
	fs, err := backend.NewFilesystemBackend(root, backend.FilesystemOptions{})
	if err != nil {
		return nil, err
	}
	ms, err := fs.Grep(context.Background(), backend.GrepQuery{Pattern: pattern, Mode: backend.GrepFiles})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Path[1:]
	}
	return out, nil
}

// globFiles runs the backend's Glob and returns the files relative to root.
func globFiles(root, pattern string) []string {
	fs, err := backend.NewFilesystemBackend(root, backend.FilesystemOptions{})
	if err != nil {
		fatal("%v", err)
	}
	fi, err := fs.Glob(context.Background(), pattern, "/")
	if err != nil {
		fatal("glob %q: %v", pattern, err)
	}
	out := make([]string, len(fi))
	for i, f := range fi {
		out[i] = f.Path[1:]
	}
	return out
}

// grepScript writes a scripted-model file whose first turn calls the grep
// tool for pattern over the whole workspace.
func grepScript(pattern string) string {
	args, _ := json.Marshal(map[string]string{"pattern": pattern, "path": "/"})
	script, _ := json.Marshal(map[string]any{"turns": []map[string]any{
		{"tool_calls": []map[string]any{{"id": "g", "name": "grep", "args": json.RawMessage(args)}}},
		{"content": "done"},
	}})
	f, err := os.CreateTemp("", "benchgrep-*.json")
	if err != nil {
		fatal("%v", err)
	}
	defer f.Close()
	if _, err := f.Write(script); err != nil {
		fatal("%v", err)
	}
	return f.Name()
}

// runCLI runs a whole deepagents process that greps root with the script,
// and returns the files its grep tool reported, relative to root.
func runCLI(bin, script, root string) []string {
	cmd := exec.Command(bin, "run", "--model", "replay:"+script, "--dir", root, "--db", "memory:",
		"--auto-approve", "--grep-regexp", "--output", "jsonl", "grep the tree")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		fatal("%s: %v: %s", bin, err, stderr.String())
	}
	var files []string
	for line := range strings.SplitSeq(string(out), "\n") {
		var ev struct {
			Type    string `json:"type"`
			Content string `json:"content"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil || ev.Type != "tool_result" {
			continue
		}
		if ev.Content == "No matches found" {
			return nil
		}
		// The tool stops at its match cap (filesystem.DefaultGrepMaxMatches)
		// and says so after a blank line.
		content, _, _ := strings.Cut(ev.Content, "\n\nNote: the search stopped")
		for p := range strings.SplitSeq(content, "\n") {
			files = append(files, strings.TrimPrefix(p, "/"))
		}
	}
	slices.Sort(files)
	return files
}

// cappedSubset reports whether the CLI's files are the grep tool's capped
// answer: exactly its cap of files, all of them among the backend's.
func cappedSubset(cli, all []string) bool {
	if len(cli) != filesystem.DefaultGrepMaxMatches || len(all) <= len(cli) {
		return false
	}
	for _, f := range cli {
		if _, ok := slices.BinarySearch(all, f); !ok {
			return false
		}
	}
	return true
}

// run runs a command and returns its output lines. Exit status 1 (no
// match, for rg) is not an error.
func run(name string, args ...string) []string {
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			fatal("%s: %v: %s", name, err, stderr.String())
		}
	}
	var lines []string
	for l := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// timeAll returns the median wall time of each fn over runs rounds, after
// a warm-up round. The functions take turns within each round, so that a
// change in the machine's load affects all alike.
func timeAll(runs int, fns ...func()) []time.Duration {
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
	for i := range ds {
		slices.Sort(ds[i])
		out[i] = ds[i][len(ds[i])/2]
	}
	return out
}

func reportDiff(pat string, ours, rg, proc []string) {
	only := func(a, b []string) []string {
		var out []string
		for _, x := range a {
			if _, found := slices.BinarySearch(b, x); !found {
				out = append(out, x)
			}
		}
		return out
	}
	fmt.Printf("  %q: only ours: %q\n  only rg: %q\n", pat, head(only(ours, rg)), head(only(rg, ours)))
	if !slices.Equal(ours, proc) {
		fmt.Printf("  in-process and process results differ\n")
	}
}

func head(s []string) []string {
	if len(s) > 10 {
		return append(s[:10:10], fmt.Sprintf("... %d more", len(s)-10))
	}
	return s
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench/grep: "+format+"\n", args...)
	os.Exit(2)
}
