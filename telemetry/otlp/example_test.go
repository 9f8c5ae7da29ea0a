package otlp_test

import (
	"context"
	"log"
	"time"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/telemetry/otlp"
)

// Tracing as the environment says, the way the command line does it: run
// the program with OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 (and,
// to see prompts and answers, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true);
// without it, tp is nil and the agent is not traced.
func ExampleFromEnv() {
	ctx := context.Background()
	tp, shutdown, err := otlp.FromEnv(ctx, otlp.WithServiceName("my-agent"))
	if err != nil {
		log.Printf("tracing is off: %v", err) // a bad OTEL_* value: run untraced
	}
	defer func() {
		// Flush the last spans, but do not wait long for a collector that
		// is down.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		shutdown(ctx) //nolint:errcheck
	}()

	a, err := deepagents.New(deepagents.Config{
		Model:          replay.New(replay.Turn{Content: "Hello!"}),
		TracerProvider: tp, // nil: tracing off
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := a.Invoke(ctx, deepagents.Prompt("Say hello")); err != nil {
		log.Fatal(err)
	}
}
