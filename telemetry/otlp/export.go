package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// This file is the exporter: OTLP over HTTP with protobuf, or over gRPC
// (a unary call is one HTTP/2 POST with a framed message and a status in
// its trailers), both on net/http. The official exporters bring the whole
// gRPC library with them, even the one for HTTP; see encode.go for why
// this program keeps it out.

const (
	// defaultTimeout bounds an export, retries included, when
	// OTEL_EXPORTER_OTLP_TIMEOUT does not (the specification's default).
	defaultTimeout = 10 * time.Second
	// grpcExportPath is the trace service's Export method.
	grpcExportPath = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
	// maxErrorBody bounds what of a refusal's body an error quotes.
	maxErrorBody = 512
)

// exporter sends spans to one collector. It implements
// sdktrace.SpanExporter.
type exporter struct {
	client  *http.Client
	url     string
	grpc    bool
	gzip    bool
	headers http.Header
	timeout time.Duration
	stopped atomic.Bool
}

// errStopped is returned by an export after Shutdown.
var errStopped = errors.New("otlp: exporter is shut down")

// newExporter configures an exporter from the environment (see FromEnv)
// for protocol, "http/protobuf" or "grpc".
func newExporter(protocol string, getenv func(string) string) (*exporter, error) {
	env := func(name string) string {
		if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_" + name)); v != "" {
			return v
		}
		return strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + name))
	}
	e := &exporter{grpc: protocol == "grpc", timeout: defaultTimeout, headers: http.Header{}}
	target, err := endpoint(e.grpc, getenv)
	if err != nil {
		return nil, err
	}
	e.url = target.String()
	if v := env("TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("%w: OTEL_EXPORTER_OTLP_TIMEOUT=%s: want milliseconds", ErrUnsupported, v)
		}
		e.timeout = time.Duration(ms) * time.Millisecond // 0: only the caller's deadline
	}
	switch c := strings.ToLower(env("COMPRESSION")); c {
	case "gzip":
		e.gzip = true
	case "", "none":
	default:
		return nil, fmt.Errorf("%w: OTEL_EXPORTER_OTLP_COMPRESSION=%s: the compressions are gzip and none", ErrUnsupported, c)
	}
	// As the official exporters: an entry whose name is not an HTTP token,
	// or whose value does not percent-decode, is skipped, not sent to fail
	// every export.
	for _, kv := range strings.Split(env("HEADERS"), ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		dec, err := url.PathUnescape(strings.TrimSpace(v))
		if !ok || !isToken(k) || err != nil || strings.ContainsAny(dec, "\r\n\x00") {
			continue
		}
		e.headers.Add(k, strings.TrimSpace(dec))
	}
	tlsConf, err := tlsConfig(env("CERTIFICATE"), env("CLIENT_CERTIFICATE"), env("CLIENT_KEY"))
	if err != nil {
		return nil, err
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsConf
	if e.grpc {
		var p http.Protocols
		if target.Scheme == "http" {
			p.SetUnencryptedHTTP2(true) // gRPC without TLS: HTTP/2 from the first byte
			// which an HTTP proxy would take for a request of its own:
			// gRPC's library goes direct here too.
			transport.Proxy = nil
		} else {
			p.SetHTTP2(true)
		}
		transport.Protocols = &p
	}
	e.client = &http.Client{Transport: transport}
	return e, nil
}

// endpoint is where spans go: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is,
// or OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces added for HTTP; a gRPC
// endpoint's path is the service's. Without a scheme (allowed for gRPC)
// TLS is used unless OTEL_EXPORTER_OTLP_INSECURE is true.
func endpoint(grpc bool, getenv func(string) string) (*url.URL, error) {
	name, raw := "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	signal := raw != ""
	if !signal {
		name, raw = "OTEL_EXPORTER_OTLP_ENDPOINT", strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	}
	switch {
	case raw == "" && grpc:
		raw = "localhost:4317"
	case raw == "":
		raw, signal = "http://localhost:4318/v1/traces", true
	}
	if grpc && !strings.Contains(raw, "://") {
		insecure := getenv("OTEL_EXPORTER_OTLP_TRACES_INSECURE")
		if insecure == "" {
			insecure = getenv("OTEL_EXPORTER_OTLP_INSECURE")
		}
		scheme := "https://"
		if strings.EqualFold(strings.TrimSpace(insecure), "true") {
			scheme = "http://"
		}
		raw = scheme + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %s=%s: want an http:// or https:// URL", ErrUnsupported, name, raw)
	}
	switch {
	case grpc:
		u.Path, u.RawPath = grpcExportPath, ""
	case !signal:
		u = u.JoinPath("v1", "traces")
	}
	return u, nil
}

// tlsConfig trusts the certificate authority in the PEM file ca (the
// system's when ""), and presents the client certificate in certFile and
// keyFile when both are set.
func tlsConfig(ca, certFile, keyFile string) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("otlp: OTEL_EXPORTER_OTLP_CERTIFICATE: %w", err)
		}
		conf.RootCAs = x509.NewCertPool()
		if !conf.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("otlp: OTEL_EXPORTER_OTLP_CERTIFICATE: %s holds no PEM certificate", ca)
		}
	}
	if certFile != "" || keyFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("otlp: OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and _CLIENT_KEY: %w", err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

// ExportSpans implements sdktrace.SpanExporter: it sends spans in one
// request, and again after a pause while the collector answers that it
// is busy, until the export's timeout.
func (e *exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.stopped.Load() {
		return errStopped
	}
	if len(spans) == 0 {
		return nil
	}
	body, err := e.body(encodeRequest(nil, spans))
	if err != nil {
		return err
	}
	if e.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.timeout)
		defer cancel()
	}
	pause := 100 * time.Millisecond
	for {
		retry, after, err := e.send(ctx, body)
		if err == nil || !retry {
			return err
		}
		if after <= 0 {
			after = pause
			pause = min(2*pause, 5*time.Second)
		}
		t := time.NewTimer(after)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (last: %w)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// body is the request's body: the message, gzipped when configured, and
// for gRPC framed (a compressed flag and a length before it).
func (e *exporter) body(msg []byte) ([]byte, error) {
	if e.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(msg); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		msg = buf.Bytes()
	}
	if !e.grpc {
		return msg, nil
	}
	framed := make([]byte, 5, 5+len(msg))
	if e.gzip {
		framed[0] = 1
	}
	binary.BigEndian.PutUint32(framed[1:], uint32(len(msg)))
	return append(framed, msg...), nil
}

// send makes one request. It reports whether a failure is worth another
// try, and how long the collector asked to wait first.
func (e *exporter) send(ctx context.Context, body []byte) (retry bool, after time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return false, 0, fmt.Errorf("otlp: %w", err)
	}
	for k, vs := range e.headers {
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	req.Header.Set("User-Agent", "deepagents-otlp")
	if e.grpc {
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("Te", "trailers")
		if e.gzip {
			req.Header.Set("Grpc-Encoding", "gzip")
		}
		if d, ok := ctx.Deadline(); ok {
			req.Header.Set("Grpc-Timeout", strconv.FormatInt(max(time.Until(d).Milliseconds(), 1), 10)+"m")
		}
	} else {
		req.Header.Set("Content-Type", "application/x-protobuf")
		if e.gzip {
			req.Header.Set("Content-Encoding", "gzip")
		}
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// Over HTTP not tried again, as the official HTTP exporter does
		// not: a collector that is down would hold a program's exit for
		// the whole timeout and hide the failure behind a deadline. Over
		// gRPC, as its library: a connection that fails is UNAVAILABLE,
		// which is tried again.
		return e.grpc && ctx.Err() == nil, 0, fmt.Errorf("otlp: %w", err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	io.Copy(io.Discard, resp.Body) //nolint:errcheck // to reuse the connection; trailers follow the body
	if e.grpc {
		return grpcStatus(resp)
	}
	if resp.StatusCode/100 == 2 {
		return false, 0, nil
	}
	err = fmt.Errorf("otlp: the collector answered %s: %s", resp.Status, strings.TrimSpace(string(text)))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true, retryAfter(resp.Header.Get("Retry-After")), err
	}
	return false, 0, err
}

// grpcStatus reads the outcome of a gRPC call from its trailers (or its
// headers, for a call that failed before any message). The retryable
// codes are the ones the OTLP specification names.
func grpcStatus(resp *http.Response) (retry bool, after time.Duration, err error) {
	if resp.StatusCode != http.StatusOK {
		// gRPC maps these to UNAVAILABLE, which is tried again.
		switch resp.StatusCode {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true, 0, fmt.Errorf("otlp: the collector answered %s", resp.Status)
		}
		return false, 0, fmt.Errorf("otlp: the collector answered %s", resp.Status)
	}
	status := resp.Trailer.Get("Grpc-Status")
	msg := resp.Trailer.Get("Grpc-Message")
	if status == "" {
		status, msg = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	}
	code, convErr := strconv.Atoi(status)
	if convErr != nil {
		return false, 0, fmt.Errorf("otlp: the collector's answer has no gRPC status")
	}
	if code == 0 {
		return false, 0, nil
	}
	if dec, err := url.PathUnescape(msg); err == nil {
		msg = dec
	}
	err = fmt.Errorf("otlp: the collector answered gRPC status %d: %s", code, msg)
	switch code {
	case 1, 4, 10, 11, 14, 15: // cancelled, deadline exceeded, aborted, out of range, unavailable, data loss
		return true, 0, err
	}
	return false, 0, err
}

// isToken reports whether s is an HTTP header name (RFC 9110's token).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// retryAfter is the wait a Retry-After header asks for in seconds, 0 when
// it asks for none or gives a date.
func retryAfter(v string) time.Duration {
	s, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || s < 0 {
		return 0
	}
	return time.Duration(s) * time.Second
}

// Shutdown implements sdktrace.SpanExporter: later exports fail, and the
// idle connections are closed.
func (e *exporter) Shutdown(context.Context) error {
	e.stopped.Store(true)
	e.client.CloseIdleConnections()
	return nil
}
