package otlp

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func TestEndpoint(t *testing.T) {
	tests := []struct {
		name string
		grpc bool
		env  map[string]string
		want string
	}{
		{"http default", false, nil, "http://localhost:4318/v1/traces"},
		{"http base", false, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://col:4318"}, "https://col:4318/v1/traces"},
		{"http base with a path", false, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://col/otlp/"}, "http://col/otlp/v1/traces"},
		{"http signal endpoint as it is", false, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b/custom"}, "http://b/custom"},
		{"grpc default is TLS", true, nil, "https://localhost:4317" + grpcExportPath},
		{"grpc insecure", true, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "col:4317", "OTEL_EXPORTER_OTLP_INSECURE": "true"}, "http://col:4317" + grpcExportPath},
		{"grpc scheme decides", true, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://col:4317/ignored"}, "http://col:4317" + grpcExportPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := endpoint(tt.grpc, func(k string) string { return tt.env[k] })
			if err != nil || u.String() != tt.want {
				t.Errorf("endpoint = %v, %v; want %s", u, err, tt.want)
			}
		})
	}
}

func TestExporterConfigErrors(t *testing.T) {
	for _, env := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_TIMEOUT": "soon"},
		{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "-1"},
		{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://col"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "col:4318"},
	} {
		if _, err := newExporter("http/protobuf", func(k string) string { return env[k] }); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%v: %v, want ErrUnsupported", env, err)
		}
	}
	if _, err := newExporter("http/protobuf", func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem"}[k]
	}); err == nil {
		t.Error("a missing certificate file was accepted")
	}
	if e, err := newExporter("http/protobuf", func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "0"}[k]
	}); err != nil || e.timeout != 0 {
		t.Errorf("a timeout of 0 (none but the caller's): %v", err)
	}
}

// TestGRPCWithoutTLSGoesDirect checks that gRPC without TLS never goes
// through an HTTP proxy, which would read its HTTP/2 preface as a request.
func TestGRPCWithoutTLSGoesDirect(t *testing.T) {
	for _, tt := range []struct {
		endpoint string
		direct   bool
	}{{"http://col:4317", true}, {"https://col:4317", false}} {
		e, err := newExporter("grpc", func(k string) string {
			return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": tt.endpoint}[k]
		})
		if err != nil {
			t.Fatal(err)
		}
		if direct := e.client.Transport.(*http.Transport).Proxy == nil; direct != tt.direct {
			t.Errorf("%s: direct %v, want %v", tt.endpoint, direct, tt.direct)
		}
	}
}

// TestExporterHTTP checks what a collector receives: the configured
// headers (percent-decoded), a gzipped protobuf body, and a second try
// after it answered 503 with a Retry-After of 0.
func TestExporterHTTP(t *testing.T) {
	var mu sync.Mutex
	var tries int
	var auth, encoding, ctype string
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		tries++
		if tries == 1 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		auth, encoding, ctype = r.Header.Get("Authorization"), r.Header.Get("Content-Encoding"), r.Header.Get("Content-Type")
		if r.Header.Get("X-Other") != "2" || r.Header.Get("X-Bad") != "" {
			auth = "headers: " + r.Header.Get("X-Other") + "|" + r.Header.Get("X-Bad")
		}
		zr, err := gzip.NewReader(r.Body)
		if err == nil {
			body, err = io.ReadAll(zr)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": srv.URL + "/v1/traces",
		"OTEL_EXPORTER_OTLP_HEADERS":         "api key=x,Authorization=Bearer%20k1, x-other = 2,x-bad=%zz",
		"OTEL_EXPORTER_OTLP_COMPRESSION":     "gzip",
	}
	e, err := newExporter("http/protobuf", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	stubs := tracetest.SpanStubs{{Name: "one", SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}})}}
	if err := e.ExportSpans(context.Background(), stubs.Snapshots()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if tries != 2 || auth != "Bearer k1" || encoding != "gzip" || ctype != "application/x-protobuf" {
		t.Errorf("tries %d, Authorization %q, Content-Encoding %q, Content-Type %q", tries, auth, encoding, ctype)
	}
	if got := decode(t, body); len(got) != 1 || got[0].ScopeSpans[0].Spans[0].Name != "one" {
		t.Errorf("the collector decoded %v", got)
	}
	if err := e.Shutdown(context.Background()); err != nil || !errors.Is(e.ExportSpans(context.Background(), stubs.Snapshots()), errStopped) {
		t.Error("an export after Shutdown did not fail")
	}
}

// TestExporterRefusal checks that a refusal not worth retrying fails the
// export at once, quoting the collector.
func TestExporterRefusal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad key", http.StatusUnauthorized)
	}))
	defer srv.Close()
	e, err := newExporter("http/protobuf", func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	stubs := tracetest.SpanStubs{{Name: "one"}}
	start := time.Now()
	err = e.ExportSpans(context.Background(), stubs.Snapshots())
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "bad key") || time.Since(start) > 2*time.Second {
		t.Errorf("export: %v after %v", err, time.Since(start))
	}
}
