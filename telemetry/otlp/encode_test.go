package otlp

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// decode reads what encodeRequest wrote with the generated OTLP types:
// field 1 of the request, repeated, is a ResourceSpans.
func decode(t *testing.T, raw []byte) []*tracepb.ResourceSpans {
	t.Helper()
	var out []*tracepb.ResourceSpans
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 || num != 1 || typ != protowire.BytesType {
			t.Fatalf("request field %d of type %d (n=%d), want only ResourceSpans", num, typ, n)
		}
		v, m := protowire.ConsumeBytes(raw[n:])
		if m < 0 {
			t.Fatalf("truncated ResourceSpans")
		}
		raw = raw[n+m:]
		rs := new(tracepb.ResourceSpans)
		if err := proto.Unmarshal(v, rs); err != nil {
			t.Fatal(err)
		}
		out = append(out, rs)
	}
	return out
}

func TestEncodeRequest(t *testing.T) {
	res := resource.NewWithAttributes("https://schema/1", attribute.String("service.name", "svc"))
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	ts, _ := trace.ParseTraceState("k=v")
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{9}, TraceFlags: trace.FlagsSampled, Remote: true})
	start := time.Unix(1700000000, 5)
	long := strings.Repeat("x", 300) // a length that takes two varint bytes
	stubs := tracetest.SpanStubs{
		{
			Name:        "chat model",
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled, TraceState: ts}),
			Parent:      parent,
			SpanKind:    trace.SpanKindClient,
			StartTime:   start,
			EndTime:     start.Add(time.Second),
			Attributes: []attribute.KeyValue{
				attribute.String("s", long),
				attribute.Int64("i", -7),
				attribute.Int64("zero", 0),
				attribute.Bool("f", false),
				attribute.Float64("d", 0.5),
				attribute.StringSlice("ss", []string{"a", ""}),
				attribute.Int64Slice("is", []int64{1, 2}),
				attribute.BoolSlice("bs", []bool{true}),
				attribute.Float64Slice("ds", []float64{1.5}),
			},
			Events:            []sdktrace.Event{{Name: "exception", Time: start, Attributes: []attribute.KeyValue{attribute.String("exception.message", "boom")}}},
			Links:             []sdktrace.Link{{SpanContext: parent, Attributes: []attribute.KeyValue{attribute.String("l", "1")}}},
			Status:            sdktrace.Status{Code: codes.Error, Description: "failed"},
			DroppedAttributes: 3,
			Resource:          res,
			InstrumentationScope: instrumentation.Scope{
				Name: "deepagents", Version: "1", SchemaURL: "https://schema/2",
			},
		},
		{
			Name:                 "other scope",
			SpanContext:          trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled}),
			StartTime:            start,
			EndTime:              start,
			Resource:             res,
			InstrumentationScope: instrumentation.Scope{Name: "other"},
		},
	}
	got := decode(t, encodeRequest(nil, stubs.Snapshots()))
	if len(got) != 1 || len(got[0].ScopeSpans) != 2 {
		t.Fatalf("want one resource with two scopes, got %v", got)
	}
	rs := got[0]
	if rs.SchemaUrl != "https://schema/1" || len(rs.Resource.Attributes) != 1 || rs.Resource.Attributes[0].Value.GetStringValue() != "svc" {
		t.Errorf("resource %v", rs)
	}
	ss := rs.ScopeSpans[0]
	if ss.Scope.Name != "deepagents" || ss.Scope.Version != "1" || ss.SchemaUrl != "https://schema/2" || len(ss.Spans) != 1 {
		t.Fatalf("scope %v", ss)
	}
	s := ss.Spans[0]
	if s.Name != "chat model" || s.Kind != tracepb.Span_SPAN_KIND_CLIENT || s.TraceState != "k=v" ||
		string(s.TraceId) != string(tid[:]) || s.SpanId[0] != 1 || s.ParentSpanId[0] != 9 ||
		s.StartTimeUnixNano != uint64(start.UnixNano()) || s.EndTimeUnixNano != uint64(start.Add(time.Second).UnixNano()) ||
		s.DroppedAttributesCount != 3 {
		t.Errorf("span %v", s)
	}
	if want := uint32(trace.FlagsSampled) | flagHasIsRemote | flagIsRemote; s.Flags != want {
		t.Errorf("flags %#x, want %#x (sampled, parent remote)", s.Flags, want)
	}
	attrs := map[string]*commonpb.AnyValue{}
	for _, kv := range s.Attributes {
		attrs[kv.Key] = kv.Value
	}
	if attrs["s"].GetStringValue() != long || attrs["i"].GetIntValue() != -7 || attrs["d"].GetDoubleValue() != 0.5 {
		t.Errorf("scalar attributes %v", attrs)
	}
	if _, ok := attrs["zero"].Value.(*commonpb.AnyValue_IntValue); !ok {
		t.Errorf("an int attribute of 0 lost its type: %v", attrs["zero"])
	}
	if v, ok := attrs["f"].Value.(*commonpb.AnyValue_BoolValue); !ok || v.BoolValue {
		t.Errorf("a false attribute: %v", attrs["f"])
	}
	if a := attrs["ss"].GetArrayValue().GetValues(); len(a) != 2 || a[0].GetStringValue() != "a" {
		t.Errorf("string slice %v", a)
	}
	if a := attrs["is"].GetArrayValue().GetValues(); len(a) != 2 || a[1].GetIntValue() != 2 {
		t.Errorf("int slice %v", a)
	}
	if a := attrs["bs"].GetArrayValue().GetValues(); len(a) != 1 || !a[0].GetBoolValue() {
		t.Errorf("bool slice %v", a)
	}
	if a := attrs["ds"].GetArrayValue().GetValues(); len(a) != 1 || a[0].GetDoubleValue() != 1.5 {
		t.Errorf("float slice %v", a)
	}
	if len(s.Events) != 1 || s.Events[0].Name != "exception" || s.Events[0].TimeUnixNano != uint64(start.UnixNano()) ||
		s.Events[0].Attributes[0].Value.GetStringValue() != "boom" {
		t.Errorf("events %v", s.Events)
	}
	if len(s.Links) != 1 || s.Links[0].SpanId[0] != 9 || s.Links[0].Attributes[0].Key != "l" {
		t.Errorf("links %v", s.Links)
	}
	if s.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || s.Status.GetMessage() != "failed" {
		t.Errorf("status %v", s.Status)
	}
	other := rs.ScopeSpans[1].Spans[0]
	if rs.ScopeSpans[1].Scope.Name != "other" || other.Name != "other scope" || len(other.ParentSpanId) != 0 || other.Status != nil {
		t.Errorf("second scope %v", rs.ScopeSpans[1])
	}
	if want := uint32(trace.FlagsSampled) | flagHasIsRemote; other.Flags != want {
		t.Errorf("a sampled root span's flags %#x, want %#x (its own flags, no remote parent)", other.Flags, want)
	}
}

// FuzzMessage checks the length written after a message's content,
// whatever the content's size.
func FuzzMessage(f *testing.F) {
	f.Add(0, 3)
	f.Add(127, 0)
	f.Add(128, 1)
	f.Add(20000, 2)
	f.Fuzz(func(t *testing.T, n, prefix int) {
		if n < 0 || n > 1<<20 || prefix < 0 || prefix > 64 {
			return
		}
		b := make([]byte, prefix)
		b = message(b, 7, func(b []byte) []byte { return append(b, make([]byte, n)...) })
		num, typ, tn := protowire.ConsumeTag(b[prefix:])
		v, vn := protowire.ConsumeBytes(b[prefix+tn:])
		if num != 7 || typ != protowire.BytesType || vn < 0 || len(v) != n || prefix+tn+vn != len(b) {
			t.Fatalf("n=%d: field %d type %d, %d bytes of content, %d bytes in all", n, num, typ, len(v), len(b))
		}
	})
}
