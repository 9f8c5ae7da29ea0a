// Command eino is the Eino side of bench/compare: CloudWeGo Eino's prebuilt
// deep agent (github.com/cloudwego/eino/adk/prebuilt/deep) with its
// filesystem middleware over the in-memory backend, driven by a scripted
// ToolCallingChatModel through the workload of bench/workload (the same
// calls, built here: this is its own module and does not import the
// project's).
//
//	eino -n N          run N tool steps, print one JSON result line
//	eino -n N -dump    print the workload's calls, one JSON object per line
//
// The result line: {"impl","n","checkpoint","seconds","steps_per_s","max_rss_mb"};
// seconds covers the run only (the agent is built before). Eino's runner
// saves checkpoints only when a run is interrupted, so there is no
// per-step checkpoint variant.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/adk/filesystem"
	fsmw "github.com/cloudwego/eino/adk/middlewares/filesystem"
	"github.com/cloudwego/eino/adk/prebuilt/deep"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
)

const final = "done"

// filesPerDir is how many files go into one directory (-files-per-dir):
// 10 for bench/compare's workload, effectively unlimited for bench/longrun's
// growing one (see bench/workload).
var filesPerDir = 10

func dir(w int) string  { return "/d" + strconv.Itoa(w/filesPerDir) }
func path(w int) string { return dir(w) + "/f" + strconv.Itoa(w) + ".txt" }
func content(w int) string {
	return "file " + strconv.Itoa(w) + ": the quick brown fox jumps over the lazy dog\n"
}

type call struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// stepCall returns step i's tool call (see bench/workload/workload.go).
func stepCall(i int) call {
	w := i / 3
	var name string
	var args any
	switch i % 3 {
	case 0:
		name, args = "write_file", struct {
			FilePath string `json:"file_path"`
			Content  string `json:"content"`
		}{path(w), content(w)}
	case 1:
		name, args = "read_file", struct {
			FilePath string `json:"file_path"`
		}{path(w)}
	default:
		name, args = "ls", struct {
			Path string `json:"path"`
		}{dir(w)}
	}
	b, _ := json.Marshal(args) // strings only: cannot fail
	return call{ID: "call_" + strconv.Itoa(i), Name: name, Args: b}
}

// scripted is a ToolCallingChatModel that answers each call with the next
// precomputed message.
type scripted struct {
	turns []*schema.Message
	next  *int
}

func newScripted(n int) *scripted {
	usage := &schema.ResponseMeta{Usage: &schema.TokenUsage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}}
	turns := make([]*schema.Message, 0, n+1)
	for i := range n {
		c := stepCall(i)
		turns = append(turns, &schema.Message{
			Role: schema.Assistant,
			ToolCalls: []schema.ToolCall{{ID: c.ID, Type: "function",
				Function: schema.FunctionCall{Name: c.Name, Arguments: string(c.Args)}}},
			ResponseMeta: usage,
		})
	}
	turns = append(turns, &schema.Message{Role: schema.Assistant, Content: final, ResponseMeta: usage})
	return &scripted{turns: turns, next: new(int)}
}

func (m *scripted) Generate(_ context.Context, _ []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	if *m.next >= len(m.turns) {
		return nil, fmt.Errorf("scripted model called more than %d times", len(m.turns))
	}
	msg := m.turns[*m.next]
	*m.next++
	return msg, nil
}

func (m *scripted) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

// WithTools returns the model itself: a script ignores the tools offered.
func (m *scripted) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }

func main() {
	n := flag.Int("n", 1000, "tool steps")
	dump := flag.Bool("dump", false, "print the workload's calls and exit")
	flag.IntVar(&filesPerDir, "files-per-dir", filesPerDir, "files written into one directory before the next (a huge number: every ls lists all files written so far)")
	flag.Parse()
	if filesPerDir < 1 {
		fmt.Fprintln(os.Stderr, "eino: -files-per-dir must be >= 1")
		os.Exit(2)
	}
	if *n < 0 {
		fmt.Fprintln(os.Stderr, "eino: -n must be >= 0")
		os.Exit(2)
	}
	if *dump {
		enc := json.NewEncoder(os.Stdout)
		enc.SetEscapeHTML(false)
		for i := range *n {
			_ = enc.Encode(stepCall(i))
		}
		_ = enc.Encode(map[string]string{"content": final})
		return
	}
	if err := run(context.Background(), *n); err != nil {
		fmt.Fprintln(os.Stderr, "eino:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, n int) error {
	fs, err := fsmw.NewMiddleware(ctx, &fsmw.Config{Backend: filesystem.NewInMemoryBackend()})
	if err != nil {
		return err
	}
	m := newScripted(n)
	agent, err := deep.New(ctx, &deep.Config{
		Name:         "bench",
		Description:  "benchmark agent",
		ChatModel:    m,
		MaxIteration: n + 10,
		Middlewares:  []adk.AgentMiddleware{fs},
	})
	if err != nil {
		return err
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent})

	start := time.Now()
	it := runner.Query(ctx, "go")
	results, lastText := 0, ""
	var lastRead, lastLs string
	for {
		ev, ok := it.Next()
		if !ok {
			break
		}
		if ev.Err != nil {
			return ev.Err
		}
		if ev.Output == nil || ev.Output.MessageOutput == nil {
			continue
		}
		mv := ev.Output.MessageOutput
		msg, err := mv.GetMessage()
		if err != nil {
			return err
		}
		switch mv.Role {
		case schema.Tool:
			results++
			switch mv.ToolName {
			case "read_file":
				lastRead = msg.Content
			case "ls":
				lastLs = msg.Content
			}
		case schema.Assistant:
			lastText = msg.Content
		}
	}
	seconds := time.Since(start).Seconds()

	if err := check(n, results, lastRead, lastLs); err != nil {
		return err
	}
	if lastText != final || *m.next != n+1 {
		return fmt.Errorf("run ended with %q after %d model calls, want %q after %d", lastText, *m.next, final, n+1)
	}
	out, _ := json.Marshal(map[string]any{
		"impl": "eino", "n": n, "checkpoint": false, "seconds": seconds,
		"steps_per_s": float64(n) / seconds, "max_rss_mb": float64(peakRSS()) / (1 << 20),
	})
	_, err = fmt.Fprintf(os.Stdout, "%s\n", out)
	return err
}

// check mirrors workload.Check.
func check(n, results int, lastRead, lastLs string) error {
	if results != n {
		return fmt.Errorf("%d tool results, want %d", results, n)
	}
	if n >= 2 {
		if want := "file " + strconv.Itoa((n-2)/3) + ":"; !strings.Contains(lastRead, want) {
			return fmt.Errorf("last read_file result %q does not contain %q", lastRead, want)
		}
	}
	if n >= 3 {
		if want := "f" + strconv.Itoa((n-3)/3) + ".txt"; !strings.Contains(lastLs, want) {
			return fmt.Errorf("last ls result %q does not contain %q", lastLs, want)
		}
	}
	return nil
}

// peakRSS returns the process's peak RSS in bytes: VmHWM on Linux
// (ru_maxrss there includes the address space of the parent that spawned
// us, see bench/internal/rusage in the main module), ru_maxrss (in
// kilobytes on Linux and the BSDs) elsewhere.
func peakRSS() int64 {
	if data, err := os.ReadFile("/proc/self/status"); err == nil {
		for l := range strings.SplitSeq(string(data), "\n") {
			if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
				if kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return int64(ru.Maxrss) * 1024
}
