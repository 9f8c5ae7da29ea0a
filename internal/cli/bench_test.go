package cli

import (
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/bench/workload"
)

// BenchmarkRun runs the CLI's run command in-process on the benchmark
// workload, so its cost per step can be profiled:
//
//	go test -run='^$' -bench=Run -cpuprofile cpu.out ./internal/cli
func BenchmarkRun(b *testing.B) {
	for _, out := range []string{"jsonl", "text"} {
		b.Run("output="+out, func(b *testing.B) {
			steps := benchSteps
			script := filepath.Join(b.TempDir(), "script.json")
			data, err := json.Marshal(workload.Script(steps))
			if err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(script, data, 0o600); err != nil {
				b.Fatal(err)
			}
			home := b.TempDir()
			b.Setenv("XDG_DATA_HOME", home)
			env := Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
				Getenv: func(k string) string { return map[string]string{"HOME": home}[k] }}
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
