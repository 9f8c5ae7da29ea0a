package telemetry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// ContinueTrace returns ctx carrying the trace context of r's W3C
// traceparent and tracestate headers, when they hold a valid one: a run
// started with it is a child of the caller's span. It fits
// server.Config.RunContext. Under the SDK's default (parent-based) sampler
// the caller's sampled flag decides whether the run is traced.
func ContinueTrace(ctx context.Context, r *http.Request) context.Context {
	return propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(r.Header))
}
