package otlp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/telemetry/otlp"
	"github.com/deepagents-go/deepagents/telemetry/otlp/otlptest"
)

// otelVars are the variables these tests set; each test starts with all of
// them empty, whatever the environment running the tests holds.
var otelVars = []string{
	"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
	"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
	"OTEL_EXPORTER_OTLP_INSECURE", "OTEL_EXPORTER_OTLP_TRACES_INSECURE",
	"OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
	"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
	"OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG",
	"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
}

func cleanEnv(t *testing.T, set map[string]string) {
	t.Helper()
	for _, k := range otelVars {
		t.Setenv(k, set[k])
	}
}

func TestEnabled(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"nothing set", nil, false},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318"}, true},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://localhost:4318/v1/traces"}, true},
		{"exporter otlp", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{"exporter none", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, false},
		{"exporter console only", map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, false},
		{"sdk disabled", map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, false},
		{"sdk not disabled", map[string]string{"OTEL_SDK_DISABLED": "false", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := otlp.Enabled(func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("Enabled = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFromEnvOff(t *testing.T) {
	for _, env := range []map[string]string{
		nil,
		{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"},
		{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"},
	} {
		cleanEnv(t, env)
		tp, shutdown, err := otlp.FromEnv(context.Background())
		if tp != nil || err != nil || shutdown == nil || shutdown(context.Background()) != nil {
			t.Errorf("%v: provider %v, error %v; want none, and a shutdown that does nothing", env, tp, err)
		}
	}
}

func TestFromEnvUnsupported(t *testing.T) {
	for _, env := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"},
		{"OTEL_TRACES_EXPORTER": "otlp,console"},
		{"OTEL_TRACES_EXPORTER": "console", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"},
	} {
		cleanEnv(t, env)
		tp, shutdown, err := otlp.FromEnv(context.Background())
		if !errors.Is(err, otlp.ErrUnsupported) || tp != nil || shutdown == nil {
			t.Errorf("%v: provider %v, error %v; want ErrUnsupported", env, tp, err)
		}
	}
}

// delegating is a script in which the main agent delegates to the
// general-purpose subagent, which lists files.
func delegating() llm.Model {
	return replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "task", Args: json.RawMessage(`{"description":"list the files","subagent_type":"general-purpose"}`)}}},
		replay.Turn{Agent: "general-purpose", ToolCalls: []llm.ToolCall{{ID: "s1", Name: "ls", Args: json.RawMessage(`{"path":"/"}`)}}},
		replay.Turn{Agent: "general-purpose", Content: "There are no files."},
		replay.Turn{Content: "done"},
	)
}

const delegatingTree = `invoke_agent main
  chat script
  execute_tool task
    invoke_agent general-purpose
      chat script
      execute_tool ls
      chat script
  chat script
`

// TestExportFromEnv is the whole path: a run configured only by OTEL_*
// variables sends its spans to an OTLP collector (over HTTP, or gRPC when
// the protocol says so), which receives the tree of a run delegating to a
// subagent, with the resource the environment describes.
func TestExportFromEnv(t *testing.T) {
	for _, protocol := range []string{"", "http/protobuf", "grpc"} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			var col *otlptest.Collector
			if protocol == "grpc" {
				var err error
				if col, err = otlptest.StartGRPC(); err != nil {
					t.Fatal(err)
				}
			} else {
				col = otlptest.Start()
			}
			defer col.Close()
			cleanEnv(t, map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL(),
				"OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
				"OTEL_SERVICE_NAME":           "otlp-test",
				"OTEL_RESOURCE_ATTRIBUTES":    "deployment.environment.name=test",
			})
			exportAndCheck(t, col)
		})
	}
}

func exportAndCheck(t *testing.T, col *otlptest.Collector) {
	t.Helper()
	ctx := context.Background()
	tp, shutdown, err := otlp.FromEnv(ctx, otlp.WithServiceName("ignored-when-the-env-names-one"))
	if err != nil || tp == nil {
		t.Fatalf("FromEnv: %v, %v", tp, err)
	}
	a, err := deepagents.New(deepagents.Config{Model: delegating(), TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(ctx, agent.Input{ThreadID: "exported", Messages: []llm.Message{llm.UserText("go")}})
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("run: %v %v", res, err)
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := shutdown(sctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	spans := col.Spans()
	if got := otlptest.Tree(spans); got != delegatingTree {
		t.Fatalf("the collector received\n%s\nwant\n%s", got, delegatingTree)
	}
	traceID := spans[0].TraceID
	for _, s := range spans {
		if s.TraceID != traceID {
			t.Errorf("%s is in trace %s, not %s: one run is one trace", s.Name, s.TraceID, traceID)
		}
		if s.Resource["service.name"] != "otlp-test" || s.Resource["deployment.environment.name"] != "test" {
			t.Errorf("%s: resource %v", s.Name, s.Resource)
		}
		if s.Resource["telemetry.sdk.language"] != "go" {
			t.Errorf("%s: resource %v does not describe the SDK", s.Name, s.Resource)
		}
		if s.Name == "invoke_agent main" {
			if s.Attributes["gen_ai.conversation.id"] != "exported" || s.Attributes["gen_ai.operation.name"] != "invoke_agent" || s.Kind != "internal" {
				t.Errorf("run span: kind %s, attributes %v", s.Kind, s.Attributes)
			}
		}
	}
}

// TestServiceNameDefault checks that WithServiceName names the service
// when the environment does not.
func TestServiceNameDefault(t *testing.T) {
	col := otlptest.Start()
	defer col.Close()
	cleanEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": col.URL() + "/v1/traces"})
	tp, shutdown, err := otlp.FromEnv(context.Background(), otlp.WithServiceName("deepagents"))
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer("test").Start(context.Background(), "one")
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := col.Spans()
	if len(spans) != 1 || spans[0].Resource["service.name"] != "deepagents" {
		t.Errorf("spans %+v, want one of service deepagents", spans)
	}
}

// syncBuffer is a log destination safe for the exporter's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCollectorDown checks that a collector that is down (refusing
// connections, or answering 503, which the exporter retries) neither fails
// nor slows a run, that shutdown keeps to its deadline, and that the
// failure is reported once however many exports fail.
func TestCollectorDown(t *testing.T) {
	for _, how := range []string{"refused", "unavailable"} {
		t.Run(how, func(t *testing.T) {
			var endpoint string
			if how == "refused" {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				endpoint = "http://" + ln.Addr().String()
				ln.Close() // nothing listens there now
			} else {
				col := otlptest.Start()
				defer col.Close()
				col.Fail(true)
				endpoint = col.URL()
			}
			cleanEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint})
			var logs syncBuffer
			tp, shutdown, err := otlp.FromEnv(context.Background(), otlp.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			if err != nil {
				t.Fatal(err)
			}
			a, err := deepagents.New(deepagents.Config{Model: delegating(), TracerProvider: tp})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if _, err := a.Invoke(context.Background(), agent.Prompt("go")); err != nil {
				t.Fatalf("the run failed: %v", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("the run took %v with the collector down", d)
			}
			sdk := tp.(*sdktrace.TracerProvider)
			for range 2 {
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				sdk.ForceFlush(ctx) //nolint:errcheck // failing is the point
				cancel()
				_, span := tp.Tracer("test").Start(context.Background(), "more")
				span.End()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			start = time.Now()
			shutdown(ctx) //nolint:errcheck // it may report the deadline
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("shutdown took %v, past its deadline of 500ms", d)
			}
			if n := strings.Count(logs.String(), "exporting traces failed"); n != 1 {
				t.Errorf("the failure was reported %d times, want once:\n%s", n, logs.String())
			}
		})
	}
}
