// Command loop runs the benchmark workload (bench/workload) in process with
// the full deepagents.New stack and the State backend, and prints one JSON
// result line:
//
//	{"impl":"go","n":N,"checkpoint":false,"seconds":S,"steps_per_s":R,"max_rss_mb":M}
//
// seconds covers Invoke only (the agent is built before); max_rss_mb is the
// process's peak resident set size at the end.
//
// Usage:
//
//	go run ./bench/loop -n 10000                       # no checkpoints
//	go run ./bench/loop -n 400 -checkpoint /tmp/b.db   # SQLite on disk, a checkpoint per step
//	go run ./bench/loop -n 400 -checkpoint /tmp/b.db -sync-full
//	go run ./bench/loop -n 1000 -write-script s.json   # the replay script for deepagents run
//	go run ./bench/loop -n 1000 -dump                  # the calls, as bench/compare compares them
//
// -cpuprofile and -memprofile write profiles of the run.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/bench/internal/rusage"
	"github.com/deepagents-go/deepagents/bench/workload"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/sqlite"
)

type options struct {
	n                int
	checkpoint       string
	syncFull         bool
	script           string
	dump             bool
	cpuProf, memProf string
	growing          string // "", "ok" or "fail": the growing workload and its summaries
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 1000, "tool steps")
	flag.StringVar(&o.checkpoint, "checkpoint", "", "checkpoint every step into this SQLite `file` (created; must not exist)")
	flag.BoolVar(&o.syncFull, "sync-full", false, "with -checkpoint: fsync every commit (synchronous=FULL)")
	flag.StringVar(&o.script, "write-script", "", "write the workload as a replay script to `file` and exit")
	flag.BoolVar(&o.dump, "dump", false, "print the workload's calls and exit")
	flag.StringVar(&o.growing, "growing", "", "run the growing workload (bench/workload/growing.go) instead, with summaries that succeed (ok) or fail (fail)")
	flag.StringVar(&o.cpuProf, "cpuprofile", "", "write a CPU profile of the run to `file`")
	flag.StringVar(&o.memProf, "memprofile", "", "write an allocation profile of the run to `file`")
	flag.Parse()
	if o.n < 0 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: loop [-n N] [-checkpoint FILE [-sync-full]] [-write-script FILE | -dump]")
		os.Exit(2)
	}
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "loop:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	switch {
	case o.dump:
		_, err := os.Stdout.Write(workload.Canonical(o.n))
		return err
	case o.script != "":
		data, err := json.Marshal(workload.Script(o.n))
		if err != nil {
			return err
		}
		return os.WriteFile(o.script, data, 0o644)
	}

	script := workload.Script(o.n)
	switch o.growing {
	case "":
	case "ok", "fail":
		script = workload.GrowingScript(o.n, o.growing == "ok")
	default:
		return fmt.Errorf("-growing %q: want ok or fail", o.growing)
	}
	cfg := deepagents.Config{Model: replay.NewFromScript(script), MaxSteps: o.n + 1}
	in := deepagents.Prompt("go")
	if o.checkpoint != "" {
		if _, err := os.Stat(o.checkpoint); !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("-checkpoint %s: the file exists (or cannot be checked: %v)", o.checkpoint, err)
		}
		db, err := sqlite.Open(ctx, o.checkpoint, &sqlite.Options{SyncFull: o.syncFull})
		if err != nil {
			return err
		}
		defer db.Close()
		cfg.Checkpointer = db.Saver()
		in.ThreadID = "bench"
	}
	a, err := deepagents.New(cfg)
	if err != nil {
		return err
	}
	if o.cpuProf != "" {
		f, err := os.Create(o.cpuProf)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	if o.memProf != "" {
		runtime.MemProfileRate = 4096
	}

	start := time.Now()
	res, err := a.Invoke(ctx, in)
	seconds := time.Since(start).Seconds()

	if o.cpuProf != "" {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return err
	}
	if res.Steps != o.n+1 || res.Text() != workload.Final {
		return fmt.Errorf("run ended after %d model calls with %q, want %d and %q", res.Steps, res.Text(), o.n+1, workload.Final)
	}
	// Summarization rewrites the growing workload's conversation, so
	// only the bounded one can be checked message by message.
	if o.growing == "" {
		if err := workload.Check(o.n, res.State.Messages); err != nil {
			return err
		}
	}
	if o.memProf != "" {
		if err := writeHeap(o.memProf); err != nil {
			return err
		}
	}
	out, err := json.Marshal(map[string]any{
		"impl": "go", "n": o.n, "checkpoint": o.checkpoint != "", "seconds": seconds,
		"steps_per_s": float64(o.n) / seconds, "max_rss_mb": float64(rusage.Self()) / (1 << 20),
	})
	if err != nil {
		return err
	}
	_, err = fmt.Printf("%s\n", out)
	return err
}

func writeHeap(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
