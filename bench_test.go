package deepagents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/tool"
)

// loopScript returns n-1 turns that each call a tool, then a final answer,
// so a run makes exactly n model calls.
func loopScript(n int, name string, args string) []replay.Turn {
	turns := make([]replay.Turn, 0, n)
	for i := range n - 1 {
		turns = append(turns, replay.Turn{
			Content:   "working",
			ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("c%d", i), Name: name, Args: json.RawMessage(args)}},
			Usage:     llm.Usage{InputTokens: 100, OutputTokens: 10},
		})
	}
	return append(turns, replay.Turn{Content: "done", Usage: llm.Usage{InputTokens: 100, OutputTokens: 5}})
}

type lookupIn struct {
	Key   string `json:"key" jsonschema:"what to look up"`
	Limit int    `json:"limit,omitempty"`
}

// BenchmarkLoop measures the harness's overhead per step: a scripted model
// (which costs almost nothing) and a small typed tool, through the default
// deep agent stack. ns/step and allocs/step are the numbers that matter;
// they must stay flat as runs grow.
func BenchmarkLoop(b *testing.B) {
	lookup := tool.Must(tool.New("lookup", "Look a key up.", func(_ context.Context, in lookupIn) (string, error) {
		return "value of " + in.Key, nil
	}))
	for _, tc := range []struct {
		name, tool, args string
	}{
		{"tool=lookup", "lookup", `{"key":"alpha","limit":3}`},
		{"tool=write_todos", "write_todos", `{"todos":[{"content":"step one","status":"completed"},{"content":"step two","status":"in_progress"}]}`},
	} {
		for _, steps := range []int{1, 100, 1000} {
			b.Run(fmt.Sprintf("%s/steps=%d", tc.name, steps), func(b *testing.B) {
				script := &replay.Script{Turns: loopScript(steps, tc.tool, tc.args)}
				ctx := context.Background()
				b.ReportAllocs()

				for b.Loop() {
					b.StopTimer()
					m := replay.NewFromScript(script)
					a, err := deepagents.New(deepagents.Config{Model: m, Tools: []tool.Tool{lookup}, MaxSteps: steps + 1})
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					res, err := a.Invoke(ctx, deepagents.Prompt("go"))
					if err != nil || res.Steps != steps {
						b.Fatalf("steps %d, err %v", res.Steps, err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
				// allocs/op counts only the timed run; divide by the
				// steps for allocations per step.
			})
		}
	}
}
