package cli

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/deepagents-go/deepagents/telemetry/otlp"
)

// flushTimeout bounds how long the command waits, before it exits, for the
// last spans to reach the collector.
const flushTimeout = 5 * time.Second

// tracing is the process's OpenTelemetry setup, made from the OTEL_*
// environment when a command first opens an agent (see newSession) and
// flushed when the command ends.
type tracing struct {
	log      *slog.Logger
	once     sync.Once
	provider trace.TracerProvider
	shutdown func(context.Context) error
}

type tracingKey struct{}

// withTracing returns ctx carrying t, for newSession to find.
func withTracing(ctx context.Context, t *tracing) context.Context {
	return context.WithValue(ctx, tracingKey{}, t)
}

// tracerProvider returns the provider to trace agents with: nil (tracing
// off) unless the environment asks for traces and Main set tracing up.
// Setting it up never fails a command: a problem is a warning, and the
// agent runs untraced.
func tracerProvider(ctx context.Context) trace.TracerProvider {
	t, _ := ctx.Value(tracingKey{}).(*tracing)
	if t == nil {
		return nil
	}
	t.once.Do(func() {
		tp, shutdown, err := otlp.FromEnv(context.WithoutCancel(ctx), otlp.WithLogger(t.log), otlp.WithServiceName("deepagents"))
		if err != nil {
			t.log.Warn("telemetry: traces are off", "err", err)
			return
		}
		t.provider, t.shutdown = tp, shutdown
	})
	return t.provider
}

// close flushes the spans not exported yet, waiting flushTimeout at most.
func (t *tracing) close() {
	if t.shutdown == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	if err := t.shutdown(ctx); err != nil {
		t.log.Warn("telemetry: flushing traces", "err", err)
	}
}
