// Command checkpoint measures checkpoint storage: it simulates a scripted
// run of N steps (each appending an assistant message with a tool call and
// the tool's result, about 800 bytes of JSON, with a todo change every 7th
// step and a small file change every 11th), putting one checkpoint per step,
// and reports the database size at a mark and at the end, the total time,
// the Put latency percentiles, the time to load the final state, and the
// peak RSS.
//
// With -agent it runs the real deep agent instead (deepagents.New with a
// scripted model playing the benchmark workload of bench/workload:
// write_file, read_file and ls in a cycle), its Checkpointer the saver, and
// reports the same figures for the agent's own checkpoints.
//
// Usage:
//
//	go run ./bench/checkpoint                       # SQLite in a temp dir
//	go run ./bench/checkpoint -agent                # the real agent, SQLite
//	go run ./bench/checkpoint -db /tmp/x.db -sync-full
//	go run ./bench/checkpoint -db 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable'
//	go run ./bench/checkpoint -db memory:
//
// A PostgreSQL run uses a fresh schema (dropped at the end unless -keep);
// its size is the sum of pg_total_relation_size over the schema's tables.
// A SQLite run's size is the database file after a truncating WAL
// checkpoint (outside the timed region).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/bench/workload"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/persist"
	"github.com/deepagents-go/deepagents/postgres"
	"github.com/deepagents-go/deepagents/sqlite"
	"github.com/deepagents-go/deepagents/thread"
)

func main() {
	dsn := flag.String("db", "", "database DSN (default: a SQLite file in a temporary directory)")
	steps := flag.Int("steps", 1000, "steps to simulate")
	mark := flag.Int("mark", 200, "also report the size after this many steps")
	syncFull := flag.Bool("sync-full", false, "SQLite: synchronous=FULL (fsync every commit)")
	keep := flag.Bool("keep", false, "keep the database (PostgreSQL: the schema) afterwards")
	agentRun := flag.Bool("agent", false, "run the real deep agent on the benchmark workload (bench/workload) with the saver, instead of simulated steps")
	flag.Parse()
	if err := run(*dsn, *steps, *mark, *syncFull, *keep, *agentRun); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(dsn string, steps, mark int, syncFull, keep, agentRun bool) error {
	ctx := context.Background()
	if dsn == "" {
		dir, err := os.MkdirTemp("", "bench-checkpoint")
		if err != nil {
			return err
		}
		if !keep {
			defer os.RemoveAll(dir)
		}
		dsn = filepath.Join(dir, "bench.db")
	}
	var schema string
	kind, _, err := persist.Parse(dsn)
	if err != nil {
		return err
	}
	if kind == persist.KindPostgres {
		var b [4]byte
		_, _ = rand.Read(b[:])
		schema = "bench_" + hex.EncodeToString(b[:])
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		if !keep {
			defer dropSchema(dsn, schema)
		}
		dsn += sep + "schema=" + schema
	}
	db, err := persist.Open(ctx, dsn, &persist.Options{SQLite: &sqlite.Options{SyncFull: syncFull}})
	if err != nil {
		return err
	}
	defer db.Close()
	size := sizer(db)

	var (
		lat               []time.Duration
		sizeMark          int64
		total             time.Duration
		snap              *checkpoint.Snapshot
		load              time.Duration
		wantMsgs, putSeen int
	)
	if agentRun {
		// The real agent: every step's checkpoint goes through a saver
		// that times Put and measures the size once mark steps are saved
		// (the input's checkpoint comes first, so that is Put mark+1).
		ts := &timedSaver{Saver: db.Saver, lat: make([]time.Duration, 0, steps+2)}
		ts.onPut = func() error {
			if putSeen++; putSeen == mark+1 {
				p0 := time.Now()
				var err error
				sizeMark, err = size(ctx)
				ts.paused += time.Since(p0)
				return err
			}
			return nil
		}
		a, err := deepagents.New(deepagents.Config{Model: replay.NewFromScript(workload.Script(steps)), Checkpointer: ts, MaxSteps: steps + 1})
		if err != nil {
			return err
		}
		in := deepagents.Prompt("go")
		in.ThreadID = "bench"
		start := time.Now()
		res, err := a.Invoke(ctx, in)
		if err != nil {
			return err
		}
		total = time.Since(start) - ts.paused
		if err := workload.Check(steps, res.State.Messages); err != nil {
			return err
		}
		lat, wantMsgs = ts.lat, len(res.State.Messages)
	} else {
		lease, err := db.Saver.Acquire(ctx, "bench", json.RawMessage(`{"bench":true}`))
		if err != nil {
			return err
		}
		rng := mrand.New(mrand.NewPCG(1, 2))
		lat = make([]time.Duration, 0, steps)
		var paused time.Duration
		start := time.Now()
		parent, keepN := "", 0
		for i := range steps {
			cp := &checkpoint.Checkpoint{ThreadID: "bench", ID: fmt.Sprintf("%08d", i), ParentID: parent, Step: i,
				Delta: checkpoint.Delta{Keep: keepN, Messages: stepMessages(rng, i)}}
			if i%7 == 3 {
				cp.Values = map[string]json.RawMessage{"todos": todos(i)}
			}
			if i%11 == 5 {
				cp.Files = map[string]*thread.FileData{fmt.Sprintf("/notes/%d.md", i%4): {Content: words(rng, 45), ModifiedAt: time.Now()}}
			}
			t0 := time.Now()
			if err := db.Saver.Put(ctx, cp); err != nil {
				return fmt.Errorf("step %d: %w", i, err)
			}
			lat = append(lat, time.Since(t0))
			parent, keepN = cp.ID, keepN+len(cp.Messages)
			if i+1 == mark {
				p0 := time.Now()
				if sizeMark, err = size(ctx); err != nil {
					return err
				}
				paused += time.Since(p0)
			}
		}
		total = time.Since(start) - paused
		if err := lease.Release(ctx, checkpoint.StatusIdle); err != nil {
			return err
		}
		wantMsgs = keepN
	}
	sizeEnd, err := size(ctx)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if snap, err = db.Saver.Load(ctx, "bench", ""); err != nil {
		return err
	}
	load = time.Since(t0)
	if len(snap.Messages) != wantMsgs {
		return fmt.Errorf("loaded %d messages, want %d", len(snap.Messages), wantMsgs)
	}
	keepN := wantMsgs
	var msgBytes int
	for i := range snap.Messages {
		b, _ := json.Marshal(snap.Messages[i])
		msgBytes += len(b)
	}

	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	fmt.Printf("database:        %s (%s)\n", db.Kind, db.Location)
	fmt.Printf("steps:           %d (%d messages, %.0f bytes of message JSON per step)\n", steps, keepN, float64(msgBytes)/float64(steps))
	fmt.Printf("total time:      %v (%.1f µs per step)\n", total.Round(time.Millisecond), float64(total.Microseconds())/float64(steps))
	fmt.Printf("Put latency:     p50 %v  p99 %v  max %v\n", pct(0.50).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
	if sizeMark > 0 {
		fmt.Printf("size at %4d:    %d bytes\n", mark, sizeMark)
	}
	fmt.Printf("size at %4d:    %d bytes", steps, sizeEnd)
	if sizeMark > 0 {
		fmt.Printf(" (%.2fx the size at %d for %.1fx the steps)", float64(sizeEnd)/float64(sizeMark), mark, float64(steps)/float64(mark))
	}
	fmt.Println()
	fmt.Printf("load head:       %v (%d messages)\n", load.Round(time.Microsecond), len(snap.Messages))
	fmt.Printf("peak RSS:        %.1f MB\n", float64(peakRSSKiB())/1024)
	return nil
}

// timedSaver times every Put of the saver it wraps.
type timedSaver struct {
	checkpoint.Saver
	lat    []time.Duration
	paused time.Duration
	onPut  func() error
}

func (t *timedSaver) Put(ctx context.Context, cp *checkpoint.Checkpoint) error {
	t0 := time.Now()
	err := t.Saver.Put(ctx, cp)
	t.lat = append(t.lat, time.Since(t0))
	if err == nil && t.onPut != nil {
		err = t.onPut()
	}
	return err
}

// sizer returns how to measure the database's size.
func sizer(db *persist.DB) func(context.Context) (int64, error) {
	switch s := db.Saver.(type) {
	case *sqlite.Saver:
		return func(ctx context.Context) (int64, error) {
			if err := s.DB().Checkpoint(ctx); err != nil {
				return 0, err
			}
			fi, err := os.Stat(s.DB().Path())
			if err != nil {
				return 0, err
			}
			return fi.Size(), nil
		}
	case *postgres.Saver:
		return func(ctx context.Context) (int64, error) {
			var n int64
			err := s.DB().Pool().QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
				FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
				WHERE n.nspname = $1 AND c.relkind = 'r'`, s.DB().Schema()).Scan(&n)
			return n, err
		}
	}
	return func(context.Context) (int64, error) { return 0, nil }
}

func dropSchema(dsn, schema string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, "drop schema:", err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
		fmt.Fprintln(os.Stderr, "drop schema:", err)
	}
}

var vocabulary = strings.Fields(`the of a file function error return value test build package module checkpoint
	thread message tool result read write edit search grep glob directory config server client request response
	handler context cancel timeout retry latency memory store namespace item key todo plan step agent model
	token cache prompt system user assistant output input stream event json schema field type struct interface`)

func words(rng *mrand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocabulary[rng.IntN(len(vocabulary))])
	}
	return b.String()
}

// stepMessages is one scripted step: an assistant message (text and a
// tool call) and the tool's result.
func stepMessages(rng *mrand.Rand, i int) []llm.Message {
	call := fmt.Sprintf("toolu_%016x", rng.Uint64())
	args, _ := json.Marshal(map[string]any{"file_path": fmt.Sprintf("/src/pkg%d/file%d.go", i%9, i%23), "offset": i % 50, "limit": 100})
	return []llm.Message{
		{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text(words(rng, 28))},
			ToolCalls: []llm.ToolCall{{ID: call, Name: "read_file", Args: args}}},
		llm.ToolResult(call, "read_file", words(rng, 60), false),
	}
}

func todos(i int) json.RawMessage {
	b, _ := json.Marshal([]map[string]string{
		{"content": "Read the existing code and list the packages", "status": "completed"},
		{"content": fmt.Sprintf("Implement step %d of the plan", i), "status": "in_progress"},
		{"content": "Run the tests and fix what fails", "status": "pending"},
	})
	return b
}
