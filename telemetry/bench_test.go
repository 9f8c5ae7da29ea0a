package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/tool"
)

// discard is an exporter that drops what it is given: the SDK's whole
// pipeline (spans, batching) runs, and nothing leaves the process.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

type lookupIn struct {
	Key string `json:"key"`
}

// BenchmarkTracing measures what tracing adds to a step of the deep agent
// (a scripted model call and one small tool call, 100 steps a run): off (no
// provider: no middleware at all), on with every span sampled and batched
// to an exporter that drops them, the same recording content, and on with
// nothing sampled.
func BenchmarkTracing(b *testing.B) {
	lookup := tool.Must(tool.New("lookup", "Look a key up.", func(_ context.Context, in lookupIn) (string, error) {
		return "value of " + in.Key, nil
	}))
	const steps = 100
	turns := make([]replay.Turn, 0, steps)
	for i := range steps - 1 {
		turns = append(turns, replay.Turn{
			Content:   "working",
			ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("c%d", i), Name: "lookup", Args: json.RawMessage(`{"key":"alpha"}`)}},
			Usage:     llm.Usage{InputTokens: 100, OutputTokens: 10},
		})
	}
	turns = append(turns, replay.Turn{Content: "done"})
	script := &replay.Script{Turns: turns}
	for _, tc := range []struct {
		name    string
		sampler sdktrace.Sampler // nil: no provider
		content bool
	}{
		{name: "off"},
		{name: "on", sampler: sdktrace.AlwaysSample()},
		{name: "on+content", sampler: sdktrace.AlwaysSample(), content: true},
		{name: "unsampled", sampler: sdktrace.NeverSample()},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var tp trace.TracerProvider
			if tc.sampler != nil {
				sdk := sdktrace.NewTracerProvider(sdktrace.WithSampler(tc.sampler), sdktrace.WithBatcher(discard{}))
				defer sdk.Shutdown(context.Background()) //nolint:errcheck
				tp = sdk
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				a, err := deepagents.New(deepagents.Config{Model: replay.NewFromScript(script), Tools: []tool.Tool{lookup}, TracerProvider: tp, TraceContent: tc.content})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if res, err := a.Invoke(ctx, deepagents.Prompt("go")); err != nil || res.Steps != steps {
					b.Fatalf("steps %d, err %v", res.Steps, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
		})
	}
}
