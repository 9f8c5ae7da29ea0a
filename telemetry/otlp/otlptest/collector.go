// Package otlptest is an in-process OTLP trace collector for tests: an
// httptest server that decodes what exporters POST to /v1/traces (Start),
// or a gRPC server of the trace service (StartGRPC), which keeps the spans
// so that a test can check the tree a program exported.
package otlptest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Span is a received span, flattened for tests.
type Span struct {
	Name    string
	TraceID string
	SpanID  string
	// ParentID is "" for a root span.
	ParentID string
	Kind     string // "internal", "client", ...
	// Attributes hold the span's attributes as strings (a list as its
	// elements joined by ",").
	Attributes map[string]string
	// StatusError is set when the span's status is Error; StatusMessage
	// is its description.
	StatusError   bool
	StatusMessage string
	// Events are the names of the span's events.
	Events []string
	// Resource holds the attributes of the resource the span came with.
	Resource map[string]string
	// Scope is the instrumentation scope's name.
	Scope string
	// Start is when the span started.
	Start time.Time
}

// Collector is the server. Its zero value is not usable; call Start or
// StartGRPC.
type Collector struct {
	srv  *httptest.Server
	gsrv *grpc.Server
	addr string // the gRPC server's

	mu       sync.Mutex
	spans    []Span
	requests int
	arrived  chan struct{}
	fail     bool
}

// Start starts a collector on the loopback interface. Close it when done.
func Start() *Collector {
	c := &Collector{arrived: make(chan struct{}, 1)}
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve))
	return c
}

// StartGRPC starts a collector serving the OTLP trace service over gRPC,
// without TLS, on the loopback interface. Close it when done.
func StartGRPC() (*Collector, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &Collector{arrived: make(chan struct{}, 1), gsrv: grpc.NewServer(), addr: ln.Addr().String()}
	coltracepb.RegisterTraceServiceServer(c.gsrv, traceService{c: c})
	go c.gsrv.Serve(ln) //nolint:errcheck // ends with Close
	return c, nil
}

// traceService is the gRPC trace service.
type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	c *Collector
}

// Export implements coltracepb.TraceServiceServer.
func (s traceService) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	if !s.c.accept() {
		return nil, status.Error(codes.Unavailable, "collector unavailable")
	}
	s.c.record(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// URL is the collector's base URL, for OTEL_EXPORTER_OTLP_ENDPOINT: an
// http:// URL, which tells a gRPC exporter to do without TLS.
func (c *Collector) URL() string {
	if c.gsrv != nil {
		return "http://" + c.addr
	}
	return c.srv.URL
}

// Close stops the server.
func (c *Collector) Close() {
	if c.gsrv != nil {
		c.gsrv.Stop()
		return
	}
	c.srv.Close()
}

// accept counts a request and says whether to take it.
func (c *Collector) accept() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests++
	return !c.fail
}

// Fail makes the collector answer every later request with 503 (true) or
// accept them again (false).
func (c *Collector) Fail(fail bool) {
	c.mu.Lock()
	c.fail = fail
	c.mu.Unlock()
}

// Requests counts the export requests received.
func (c *Collector) Requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests
}

// Spans returns the spans received so far, ordered by name and span id.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := append([]Span(nil), c.spans...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].SpanID < out[j].SpanID
	})
	return out
}

// Wait waits until at least n spans arrived or the timeout passed, and
// returns the spans received.
func (c *Collector) Wait(n int, timeout time.Duration) []Span {
	deadline := time.After(timeout)
	for {
		if s := c.Spans(); len(s) >= n {
			return s
		}
		select {
		case <-c.arrived:
		case <-deadline:
			return c.Spans()
		}
	}
}

func (c *Collector) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
		http.NotFound(w, r)
		return
	}
	if !c.accept() {
		http.Error(w, "collector unavailable", http.StatusServiceUnavailable)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.record(&req)
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Write(out) //nolint:errcheck // the exporter's problem if it left
}

// record keeps the spans of an export request.
func (c *Collector) record(req *coltracepb.ExportTraceServiceRequest) {
	var got []Span
	for _, rs := range req.GetResourceSpans() {
		res := attrMap(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{
					Name:          s.GetName(),
					TraceID:       hex.EncodeToString(s.GetTraceId()),
					SpanID:        hex.EncodeToString(s.GetSpanId()),
					Kind:          strings.ToLower(strings.TrimPrefix(s.GetKind().String(), "SPAN_KIND_")),
					Attributes:    attrMap(s.GetAttributes()),
					StatusError:   s.GetStatus().GetCode().String() == "STATUS_CODE_ERROR",
					StatusMessage: s.GetStatus().GetMessage(),
					Resource:      res,
					Scope:         ss.GetScope().GetName(),
					Start:         time.Unix(0, int64(s.GetStartTimeUnixNano())),
				}
				if p := s.GetParentSpanId(); len(p) > 0 && !bytes.Equal(p, make([]byte, len(p))) {
					sp.ParentID = hex.EncodeToString(p)
				}
				for _, e := range s.GetEvents() {
					sp.Events = append(sp.Events, e.GetName())
				}
				got = append(got, sp)
			}
		}
	}
	c.mu.Lock()
	c.spans = append(c.spans, got...)
	c.mu.Unlock()
	select {
	case c.arrived <- struct{}{}:
	default:
	}
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = valueString(kv.GetValue())
	}
	return m
}

func valueString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_ArrayValue:
		parts := make([]string, 0, len(x.ArrayValue.GetValues()))
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, valueString(e))
		}
		return strings.Join(parts, ",")
	}
	return ""
}

// Tree draws spans as the tree their parent ids make, one span a line,
// indented two spaces a level; siblings in the order they started. A span
// whose parent is not among spans is drawn as a root.
func Tree(spans []Span) string {
	ids := make(map[string]bool, len(spans))
	for _, s := range spans {
		ids[s.SpanID] = true
	}
	children := make(map[string][]Span)
	for _, s := range spans {
		parent := s.ParentID
		if !ids[parent] {
			parent = ""
		}
		children[parent] = append(children[parent], s)
	}
	for _, c := range children {
		sort.SliceStable(c, func(i, j int) bool { return c[i].Start.Before(c[j].Start) })
	}
	var b strings.Builder
	var draw func(parent string, depth int)
	draw = func(parent string, depth int) {
		for _, s := range children[parent] {
			b.WriteString(strings.Repeat("  ", depth))
			b.WriteString(s.Name)
			b.WriteByte('\n')
			draw(s.SpanID, depth+1)
		}
	}
	draw("", 0)
	return b.String()
}
