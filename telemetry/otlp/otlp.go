// Package otlp sets up OpenTelemetry tracing from the standard OTEL_*
// environment variables: the official Go SDK records the spans, and a
// small exporter of this package's own sends them over OTLP (HTTP with
// protobuf, or gRPC) on net/http. It is apart from package telemetry so
// that a program linking the deep agent links the SDK only when it sets
// tracing up this way; and its exporter is not the official one, which
// would link the gRPC library and with it html/template, whose reflection
// keeps the linker from dropping unused methods anywhere in the program
// (docs/BENCHMARKS.md, "The binary").
package otlp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ErrUnsupported is returned by FromEnv when the environment asks for an
// exporter or a protocol this package does not offer.
var ErrUnsupported = errors.New("otlp: unsupported")

// Option configures FromEnv.
type Option func(*options)

type options struct {
	log     *slog.Logger
	service string
}

// WithLogger sets the logger that reports, once, that exporting failed
// (slog.Default() by default).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithServiceName sets the service.name of the spans' resource when neither
// OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names one; the SDK's
// default ("unknown_service:" and the program's name) otherwise.
func WithServiceName(name string) Option { return func(o *options) { o.service = name } }

// Enabled reports whether the environment (read with getenv, os.Getenv when
// nil) asks for traces exported over OTLP: OTEL_SDK_DISABLED is not "true",
// and either OTEL_TRACES_EXPORTER lists "otlp", or it is unset and
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set.
// OTEL_TRACES_EXPORTER=none turns tracing off.
func Enabled(getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	if exporters := exporterList(getenv("OTEL_TRACES_EXPORTER")); len(exporters) > 0 {
		return slices.Contains(exporters, "otlp") && !slices.Contains(exporters, "none")
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

func exporterList(v string) []string {
	var out []string
	for _, e := range strings.Split(v, ",") {
		if e = strings.ToLower(strings.TrimSpace(e)); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// FromEnv returns a TracerProvider that exports spans over OTLP (HTTP with
// protobuf, or gRPC), configured by the standard environment variables, and the
// function that flushes what is pending and stops it. When the environment
// asks for no traces (see Enabled) it returns a nil provider, which leaves
// tracing off at no cost, and a shutdown that does nothing.
//
// The exporter reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _HEADERS,
// _TIMEOUT, _COMPRESSION (gzip or none), _CERTIFICATE, _CLIENT_CERTIFICATE
// and _CLIENT_KEY, and _INSECURE for a gRPC endpoint without a scheme; the
// SDK reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES,
// OTEL_TRACES_SAMPLER(_ARG) and OTEL_BSP_*. A value it cannot use is
// ErrUnsupported.
// OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL picks http/protobuf (the default,
// to port 4318) or grpc (to port 4317, with OTEL_EXPORTER_OTLP_INSECURE);
// http/json is ErrUnsupported, as are exporters besides otlp and none in
// OTEL_TRACES_EXPORTER.
//
// Spans are exported in batches in the background: a collector that is down
// or slow never holds a run back. The first failed export is logged as a
// warning; later ones are not. Call shutdown before the program exits, with
// a deadline: it waits for the last batch.
func FromEnv(ctx context.Context, opts ...Option) (trace.TracerProvider, func(context.Context) error, error) {
	noop := func(context.Context) error { return nil }
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, noop, nil
	}
	for _, e := range exporterList(os.Getenv("OTEL_TRACES_EXPORTER")) {
		if e != "otlp" && e != "none" {
			return nil, noop, fmt.Errorf("%w: OTEL_TRACES_EXPORTER=%s: the exporters are otlp and none", ErrUnsupported, e)
		}
	}
	if !Enabled(nil) {
		return nil, noop, nil
	}
	o := options{log: slog.Default()}
	for _, opt := range opts {
		opt(&o)
	}
	protocol := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	p := strings.ToLower(strings.TrimSpace(protocol))
	if p == "" {
		p = "http/protobuf"
	}
	if p != "http/protobuf" && p != "grpc" {
		return nil, noop, fmt.Errorf("%w: OTEL_EXPORTER_OTLP_PROTOCOL=%s: the protocols are http/protobuf and grpc", ErrUnsupported, protocol)
	}
	exp, err := newExporter(p, os.Getenv)
	if err != nil {
		return nil, noop, err
	}
	res, err := newResource(ctx, o.service)
	if err != nil {
		return nil, noop, err
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(&warnOnce{SpanExporter: exp, log: o.log}),
		sdktrace.WithResource(res),
	)
	return tp, tp.Shutdown, nil
}

// newResource describes the program: the environment's attributes, the
// SDK's, and service, when set, as the service.name the environment may
// override.
func newResource(ctx context.Context, service string) (*resource.Resource, error) {
	env, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("otlp: resource: %w", err)
	}
	if _, named := env.Set().Value("service.name"); named || service == "" {
		return resource.Merge(resource.Default(), env)
	}
	return resource.Merge(env, resource.NewSchemaless(attribute.String("service.name", service)))
}

// warnOnce reports the first failed export and none after it: a
// collector that is down would otherwise fill the program's stderr (the
// SDK hands every failure to the global error handler).
type warnOnce struct {
	sdktrace.SpanExporter
	log    *slog.Logger
	warned atomic.Bool
}

// ExportSpans implements sdktrace.SpanExporter.
func (w *warnOnce) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := w.SpanExporter.ExportSpans(ctx, spans)
	if err != nil && w.warned.CompareAndSwap(false, true) {
		w.log.Warn("telemetry: exporting traces failed; spans are dropped, and later failures not reported", "err", err)
	}
	return nil
}
