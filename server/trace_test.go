package server_test

import (
	"context"
	"net/http"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
	"github.com/deepagents-go/deepagents/telemetry"
)

// With RunContext telemetry.ContinueTrace, a run continues the trace its
// request carries (traceparent): the agent's run span is a child of the
// caller's span.
func TestRunContinuesTheCallersTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background()) //nolint:errcheck
	f := newFixture(t, servertest.Options{Agent: func(c *deepagents.Config) { c.TracerProvider = tp }, RunContext: telemetry.ContinueTrace}, replay.Turn{Content: "hi"}, replay.Turn{Content: "again"})
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	code, body, _ := f.Do(http.MethodPost, "/runs/wait", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("x")}}},
		"traceparent", "00-"+traceID+"-"+parentID+"-01")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	// Without the header, a run starts its own trace.
	f.JSON(http.MethodPost, "/runs/wait", map[string]any{"input": map[string]any{"messages": []any{servertest.Human("y")}}}, http.StatusOK, nil)
	var runs []sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		if sp.Parent().IsRemote() || !sp.Parent().IsValid() {
			runs = append(runs, sp)
		}
	}
	if len(runs) != 2 {
		t.Fatalf("%d root or remote-parented spans, want the two runs'", len(runs))
	}
	first, second := runs[0], runs[1]
	if first.SpanContext().TraceID().String() != traceID || first.Parent().SpanID().String() != parentID || !first.Parent().IsRemote() {
		t.Errorf("the run span %s is in trace %s under %s, want trace %s under the caller's %s", first.Name(),
			first.SpanContext().TraceID(), first.Parent().SpanID(), traceID, parentID)
	}
	if second.SpanContext().TraceID().String() == traceID || second.Parent().IsValid() {
		t.Errorf("a run without traceparent joined trace %s", second.SpanContext().TraceID())
	}
}
