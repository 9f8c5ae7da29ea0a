package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/bench/workload"
	"github.com/deepagents-go/deepagents/llm/replay"
)

// BenchmarkRun runs the CLI's run command in-process on the benchmark
// workload, so its cost per step can be profiled:
//
//	go test -run='^$' -bench=Run -cpuprofile cpu.out ./cmd/deepagents/internal/cli
func BenchmarkRun(b *testing.B) {
	for _, out := range []string{"jsonl", "text"} {
		b.Run("output="+out, func(b *testing.B) {
			steps := benchSteps
			script, env := benchSetup(b, workload.Script(steps))
			for b.Loop() {
				ws := benchDir(b)
				if code := Main([]string{"run", "--model", "replay:" + script, "--output", out, "--db", "memory:", "--dir", ws, "--max-steps", "2000", "go"}, env); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*steps), "µs/step")
		})
	}
}

// benchSetup writes the replay script and returns its path and an Env whose
// HOME and XDG_DATA_HOME are temporary.
func benchSetup(b *testing.B, s *replay.Script) (string, Env) {
	b.Helper()
	script := filepath.Join(b.TempDir(), "script.json")
	data, err := json.Marshal(s)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(script, data, 0o600); err != nil {
		b.Fatal(err)
	}
	home := b.TempDir()
	b.Setenv("XDG_DATA_HOME", home)
	return script, Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
		Getenv: func(k string) string { return map[string]string{"HOME": home}[k] }}
}

// benchDir returns a fresh workspace, in memory (/dev/shm) where there is
// one, so that the disk's speed does not hide the harness's costs.
func benchDir(b *testing.B) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "deepagents-bench")
		if err == nil {
			b.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return b.TempDir()
}

// benchSteps is the workload size of BenchmarkRun; 1 measures the fixed
// cost of a run (go test -bench=Run -args -steps 1).
var benchSteps = 1000

func init() {
	flag.IntVar(&benchSteps, "steps", 1000, "BenchmarkRun's number of tool steps")
}

// BenchmarkRunGrowing runs the CLI's run command in-process on the growing
// workload (bench/workload, bench/longrun) with a SQLite file, summaries
// succeeding and failing, so long runs can be profiled:
//
//	go test -run='^$' -bench=RunGrowing -benchtime=1x -memprofile mem.out ./cmd/deepagents/internal/cli -args -steps 10000
func BenchmarkRunGrowing(b *testing.B) {
	for _, summaries := range []bool{true, false} {
		b.Run(fmt.Sprintf("summaries=%v", summaries), func(b *testing.B) {
			steps := benchSteps
			script, env := benchSetup(b, workload.GrowingScript(steps, summaries))
			for b.Loop() {
				db := filepath.Join(b.TempDir(), "threads.db")
				args := []string{"run", "--model", "replay:" + script, "--output", "jsonl", "--db", db, "--dir", benchDir(b), "--max-steps", strconv.Itoa(steps + 1), "go"}
				if code := Main(args, env); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*steps), "µs/step")
		})
	}
}
