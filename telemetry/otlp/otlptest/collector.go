// Package otlptest is an in-process OTLP trace collector for tests: an
// httptest server that decodes what exporters POST to /v1/traces (Start),
// or a gRPC server of the trace service (StartGRPC), which keeps the spans
// so that a test can check the tree a program exported.
package otlptest

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
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
	grpc bool

	mu       sync.Mutex
	spans    []Span
	requests int
	arrived  chan struct{}
	fail     bool
}

// Start starts a collector of OTLP over HTTP on the loopback interface.
// Close it when done.
func Start() *Collector {
	c := &Collector{arrived: make(chan struct{}, 1)}
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve))
	return c
}

// StartGRPC starts a collector serving the OTLP trace service over gRPC,
// without TLS, on the loopback interface. Close it when done.
func StartGRPC() (*Collector, error) {
	c := &Collector{arrived: make(chan struct{}, 1), grpc: true}
	c.srv = httptest.NewUnstartedServer(http.HandlerFunc(c.serveGRPC))
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	c.srv.Config.Protocols = &p
	c.srv.Start()
	return c, nil
}

// URL is the collector's base URL, for OTEL_EXPORTER_OTLP_ENDPOINT: an
// http:// URL, which tells a gRPC exporter to do without TLS.
func (c *Collector) URL() string { return c.srv.URL }

// Close stops the server.
func (c *Collector) Close() { c.srv.Close() }

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
	req, err := decodeRequest(raw)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.record(req)
	w.Header().Set("Content-Type", "application/x-protobuf")
	// The ExportTraceServiceResponse of a full success has no field set.
}

// serveGRPC is the trace service's Export method: a framed request
// message, a framed response, and the status in the trailers.
func (c *Collector) serveGRPC(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/grpc")
	w.Header().Set("Trailer", "Grpc-Status, Grpc-Message")
	status := func(code int, msg string) {
		w.Header().Set("Grpc-Status", strconv.Itoa(code))
		w.Header().Set("Grpc-Message", msg)
	}
	if r.Method != http.MethodPost || r.URL.Path != "/opentelemetry.proto.collector.trace.v1.TraceService/Export" {
		status(12, "unimplemented")
		return
	}
	if !c.accept() {
		status(14, "collector unavailable")
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil || len(raw) < 5 || int(binary.BigEndian.Uint32(raw[1:5])) != len(raw)-5 {
		status(13, "malformed frame")
		return
	}
	msg := raw[5:]
	if raw[0] == 1 {
		zr, err := gzip.NewReader(bytes.NewReader(msg))
		if err == nil {
			msg, err = io.ReadAll(zr)
		}
		if err != nil {
			status(13, err.Error())
			return
		}
	}
	req, err := decodeRequest(msg)
	if err != nil {
		status(13, err.Error())
		return
	}
	c.record(req)
	w.Write([]byte{0, 0, 0, 0, 0}) //nolint:errcheck // an empty response message
	status(0, "")
}

// decodeRequest reads an ExportTraceServiceRequest: its only field,
// numbered 1, repeats a ResourceSpans. (The generated type of the request
// lives in a package with the gRPC service, which this one keeps out.)
func decodeRequest(raw []byte) ([]*tracepb.ResourceSpans, error) {
	var out []*tracepb.ResourceSpans
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		raw = raw[n:]
		if num != 1 || typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, raw); n < 0 {
				return nil, protowire.ParseError(n)
			}
			raw = raw[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(raw)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		raw = raw[n:]
		rs := new(tracepb.ResourceSpans)
		if err := proto.Unmarshal(v, rs); err != nil {
			return nil, err
		}
		out = append(out, rs)
	}
	return out, nil
}

// record keeps the spans of an export request.
func (c *Collector) record(req []*tracepb.ResourceSpans) {
	var got []Span
	for _, rs := range req {
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
