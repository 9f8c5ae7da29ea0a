package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// clientHello returns the first TLS record a client sends for name.
func clientHello(name string) []byte {
	a, b := net.Pipe()
	go func() {
		tls.Client(a, &tls.Config{ServerName: name, InsecureSkipVerify: name == ""}).Handshake()
		a.Close()
	}()
	head := make([]byte, 5)
	io.ReadFull(b, head)
	body := make([]byte, binary.BigEndian.Uint16(head[3:]))
	io.ReadFull(b, body)
	b.Close()
	return body
}

func TestServerName(t *testing.T) {
	for _, name := range []string{"example.com", "a.b.c.test", ""} {
		got, ech, err := parseClientHello(clientHello(name))
		if err != nil || got != name || ech {
			t.Errorf("parseClientHello(hello for %q) = %q, %v, %v", name, got, ech, err)
		}
	}
	if _, _, err := parseClientHello([]byte("GET / HTTP/1.1\r\n")); err == nil {
		t.Error("an HTTP request parsed as a ClientHello")
	}
	hello := clientHello("example.com")
	if _, _, err := parseClientHello(hello[:len(hello)-10]); err == nil {
		t.Error("a ClientHello cut short parsed")
	}
}

// helloWith is a minimal ClientHello with a server_name for name and,
// with ech, an encrypted_client_hello extension.
func helloWith(name string, ech bool) []byte {
	sni := []byte{0, byte(len(name) >> 8), byte(len(name))}
	sni = append(sni, name...)
	sni = append([]byte{byte(len(sni) >> 8), byte(len(sni))}, sni...)
	exts := append([]byte{0, 0, byte(len(sni) >> 8), byte(len(sni))}, sni...)
	if ech {
		exts = append(exts, 0xfe, 0x0d, 0, 1, 0)
	}
	body := []byte{3, 3}
	body = append(body, make([]byte, 32)...)
	body = append(body, 0, 0, 2, 0x13, 0x01, 1, 0)
	body = append(body, byte(len(exts)>>8), byte(len(exts)))
	body = append(body, exts...)
	return append([]byte{1, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}, body...)
}

// Browsers send a placeholder ECH extension in every hello: the outer
// name is the one checked, and the hello passes.
func TestClientHelloECH(t *testing.T) {
	if name, ech, err := parseClientHello(helloWith("a.test", false)); name != "a.test" || ech || err != nil {
		t.Fatalf("plain: %q %v %v", name, ech, err)
	}
	_, name, err := readClientHello(bufio.NewReader(bytes.NewReader(records(helloWith("a.test", true), 100))))
	if err != nil || name != "a.test" {
		t.Errorf("ECH: %q %v", name, err)
	}
}

// records splits a handshake message into TLS records of at most size
// bytes each.
func records(msg []byte, size int) []byte {
	var out []byte
	for len(msg) > 0 {
		n := min(size, len(msg))
		out = append(out, 0x16, 3, 1, byte(n>>8), byte(n))
		out = append(out, msg[:n]...)
		msg = msg[n:]
	}
	return out
}

// A ClientHello split across records is read whole: its server name is
// the one checked, wherever it is.
func TestReadClientHelloAcrossRecords(t *testing.T) {
	msg := clientHello("evil.test")
	for _, size := range []int{1, 7, 40, len(msg)} {
		raw := records(msg, size)
		got, name, err := readClientHello(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil || name != "evil.test" || !bytes.Equal(got, raw) {
			t.Errorf("records of %d: name %q, %v, %d of %d bytes", size, name, err, len(got), len(raw))
		}
	}
	if _, _, err := readClientHello(bufio.NewReader(bytes.NewReader(records(clientHello(""), 100)))); err == nil {
		t.Error("a ClientHello without a server name passed")
	}
}

// rig is a proxy with one command's listener, and stand-in servers the
// name map reaches.
type rig struct {
	t     *testing.T
	p     *Proxy
	l     *Listener
	plain *httptest.Server // http://plain.test
	tls   *httptest.Server // https://example.com
	mu    sync.Mutex
	evs   []Event
}

func newRig(t *testing.T, cfg Config) *rig {
	t.Helper()
	r := &rig{t: t}
	r.plain = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		fmt.Fprintf(w, "plain %s %s %d proxy-auth=%q", req.Method, req.URL.Path, len(body), req.Header.Get("Proxy-Authorization"))
	}))
	r.tls = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		fmt.Fprintf(w, "secure %s", req.Host)
	}))
	t.Cleanup(r.plain.Close)
	t.Cleanup(r.tls.Close)
	cfg.Hosts = map[string]string{
		"plain.test:80":    r.plain.Listener.Addr().String(),
		"example.com:443":  r.tls.Listener.Addr().String(),
		"other.test:443":   r.tls.Listener.Addr().String(),
		"plain.test:8080":  r.plain.Listener.Addr().String(),
		"denied.test:80":   r.plain.Listener.Addr().String(),
		"unlisted.test:80": r.plain.Listener.Addr().String(),
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.OnEvent = func(_ context.Context, e Event) {
		r.mu.Lock()
		r.evs = append(r.evs, e)
		r.mu.Unlock()
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.p = p
	r.l = r.command("cmd")
	t.Cleanup(func() { p.Close() })
	return r
}

func (r *rig) command(label string) *Listener {
	l, err := r.p.Command(context.Background(), label)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { l.Close() })
	return l
}

// client is an HTTP client whose proxy is l's socket, as a command's
// behind the bridge is.
func (r *rig) client(l *Listener) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(r.tls.Certificate())
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy:           http.ProxyURL(&url.URL{Scheme: "http", Host: "proxy"}),
		DialContext:     func(ctx context.Context, _, _ string) (net.Conn, error) { return net.Dial("unix", l.Socket) },
		TLSClientConfig: &tls.Config{RootCAs: pool},
	}}
}

func get(c *http.Client, u string) (int, string, error) {
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

func TestProxyAllowsByName(t *testing.T) {
	r := newRig(t, Config{Allow: []string{"plain.test", "example.com", "plain.test:8080"}, Deny: []string{"denied.test"}})
	c := r.client(r.l)
	if code, body, err := get(c, "http://plain.test/x"); err != nil || code != 200 || body != `plain GET /x 0 proxy-auth=""` {
		t.Errorf("http: %d %q %v", code, body, err)
	}
	if code, body, err := get(c, "https://example.com/"); err != nil || code != 200 || body != "secure example.com" {
		t.Errorf("https: %d %q %v", code, body, err)
	}
	if code, _, err := get(c, "http://plain.test:8080/"); err != nil || code != 200 {
		t.Errorf("a port a rule names: %d %v", code, err)
	}
	for _, c2 := range []struct{ url, want string }{
		{"http://denied.test/", "denied by the rule"},
		{"http://unlisted.test/", "not an allowed host"},
		{"http://127.0.0.1/", "IP address"},
		{"http://[::1]/", "IP address"},
		{"http://plain.test:9999/", "port 9999"},
		{"https://other.test/", "not an allowed host"},
	} {
		code, body, err := get(c, c2.url)
		if err != nil {
			// A refused CONNECT is an error whose text is the status line.
			// (Go's text leaves the code out).
			if !strings.Contains(err.Error(), "Forbidden: ") || !strings.Contains(err.Error(), c2.want) {
				t.Errorf("%s: err %v, want a 403 saying %q", c2.url, err, c2.want)
			}
			continue
		}
		if code != 403 || !strings.Contains(body, c2.want) {
			t.Errorf("%s: %d %q, want a 403 saying %q", c2.url, code, body, c2.want)
		}
	}
	u := r.p.Usage()
	var seen bool
	for _, h := range u {
		if h.Host == "plain.test:80" {
			seen = h.Connections >= 1 && h.BytesIn > 0 && h.BytesOut > 0
		}
	}
	if !seen {
		t.Errorf("usage has no bytes for plain.test:80: %+v", u)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var allowed, refused int
	for _, e := range r.evs {
		if e.Allowed {
			allowed++
		} else {
			refused++
		}
	}
	if allowed < 3 || refused < 6 {
		t.Errorf("events: %d allowed, %d refused: %+v", allowed, refused, r.evs)
	}
}

func TestProxyStripsProxyHeaders(t *testing.T) {
	r := newRig(t, Config{Allow: []string{"plain.test"}})
	req, _ := http.NewRequest("GET", "http://plain.test/", nil)
	req.Header.Set("Proxy-Authorization", "Basic c2VjcmV0")
	resp, err := r.client(r.l).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `proxy-auth=""`) {
		t.Errorf("the proxy passed on Proxy-Authorization: %s", b)
	}
}

// tunnelTo opens a CONNECT tunnel to target through l.
func tunnelTo(t *testing.T, l *Listener, target string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("unix", l.Socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT %s: %v %v", target, resp, err)
	}
	return c, br
}

// A tunnel to an allowed name may not ask TLS for another server, nor
// hide the name it asks for, however the handshake is split.
func TestProxyChecksServerName(t *testing.T) {
	r := newRig(t, Config{Allow: []string{"example.com"}})
	c, br := tunnelTo(t, r.l, "example.com:443")
	tc := tls.Client(&bufConn{c, br}, &tls.Config{ServerName: "evil.test", InsecureSkipVerify: true})
	if err := tc.Handshake(); err == nil {
		t.Fatal("TLS for evil.test went through a tunnel to example.com")
	}
	for _, hello := range [][]byte{records(clientHello("evil.test"), 30), records(clientHello(""), 1000)} {
		c, br := tunnelTo(t, r.l, "example.com:443")
		c.Write(hello)
		if b, _ := io.ReadAll(br); len(b) != 0 {
			t.Errorf("the server answered a hello it should not have seen: %q", b)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var refused []string
	for _, e := range r.evs {
		if !e.Allowed {
			refused = append(refused, e.Reason)
		}
	}
	if len(refused) != 3 || !strings.Contains(refused[0], "evil.test") || !strings.Contains(refused[1], "evil.test") || !strings.Contains(refused[2], "names no server") {
		t.Errorf("refusals %q", refused)
	}
}

// A tunnel to port 80 (CONNECT or SOCKS5) carries requests for its host
// only: another Host is refused, as a request for another URL is.
func TestProxyTunnel80(t *testing.T) {
	r := newRig(t, Config{Allow: []string{"plain.test"}})
	c, br := tunnelTo(t, r.l, "plain.test:80")
	fmt.Fprintf(c, "GET /a HTTP/1.1\r\nHost: plain.test\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the tunnel's own host: %v %v", resp, err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != `plain GET /a 0 proxy-auth=""` {
		t.Errorf("body %q", b)
	}
	fmt.Fprintf(c, "GET /b HTTP/1.1\r\nHost: evil.test\r\n\r\n")
	resp, err = http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 403 || !strings.Contains(resp.Status, "names another host") {
		t.Errorf("another Host in the tunnel: %v %v", resp, err)
	}
}

// rawUpstream is a host that answers each connection with handle.
func rawUpstream(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); handle(c) }()
		}
	}()
	return ln.Addr().String()
}

// readHead reads a request's head off c.
func readHead(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		l, err := br.ReadString('\n')
		if err != nil || l == "\r\n" {
			return
		}
	}
}

// dialThrough connects to a command's socket of a proxy that allows name,
// a stand-in at addr.
func dialThrough(t *testing.T, name, addr string) net.Conn {
	t.Helper()
	p, err := New(Config{Allow: []string{name}, Hosts: map[string]string{name + ":80": addr}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	l, err := p.Command(context.Background(), "cmd")
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("unix", l.Socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// A host that answers before it has read the request's body: the
// connection ends after the answer, rather than the proxy reading the
// body's bytes as the next request while the transport still sends it.
func TestProxyEarlyResponse(t *testing.T) {
	addr := rawUpstream(t, func(c net.Conn) {
		readHead(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		io.Copy(io.Discard, c)
	})
	c := dialThrough(t, "early.test", addr)
	// The head and a little of the body: the host answers before the rest.
	fake := "GET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n" // what a desync would read as a request
	fmt.Fprintf(c, "POST http://early.test/ HTTP/1.1\r\nHost: early.test\r\nContent-Length: %d\r\n\r\n0123456789", 10+len(fake))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("first: %v %v", resp, err)
	}
	io.ReadAll(resp.Body)
	io.WriteString(c, fake)
	if resp, err := http.ReadResponse(br, nil); err == nil {
		t.Errorf("the body's bytes were read as a request: %s", resp.Status)
	}
}

// A response whose end is its connection's end reaches the command at
// once, its connection closed.
func TestProxyUnframedResponse(t *testing.T) {
	addr := rawUpstream(t, func(c net.Conn) {
		readHead(c)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nthe whole body")
	})
	c := dialThrough(t, "eof.test", addr)
	fmt.Fprintf(c, "GET http://eof.test/ HTTP/1.1\r\nHost: eof.test\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(10 * time.Second)) // a hang, not a measure: the proxy waits 30 s for a next request
	b, err := io.ReadAll(c)
	if err != nil || !strings.HasSuffix(string(b), "the whole body") {
		t.Errorf("%q %v", b, err)
	}
}

// A request's head is bounded: a command cannot fill the host's memory
// with one header.
func TestProxyHeadLimit(t *testing.T) {
	r := newRig(t, Config{Allow: []string{"plain.test"}})
	c, err := net.Dial("unix", r.l.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		fmt.Fprintf(c, "GET http://plain.test/ HTTP/1.1\r\nHost: plain.test\r\nX-Big: ")
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for range 64 { // 4 MiB, more than the proxy reads
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 4 MiB header: %v %v", resp, err)
	}
}

// Closing a command's listener ends its tunnels, even one whose host
// keeps quiet: the command's timeout holds.
func TestProxyCloseEndsQuietTunnels(t *testing.T) {
	quiet, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := quiet.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // never read, written or closed
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	p, err := New(Config{Allow: []string{"quiet.test:7000"}, Hosts: map[string]string{"quiet.test:7000": quiet.Addr().String()}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	l, err := p.Command(context.Background(), "cmd")
	if err != nil {
		t.Fatal(err)
	}
	tunnelTo(t, l, "quiet.test:7000")
	closed := make(chan struct{})
	go func() { l.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second): // a hang, not a measure
		t.Fatal("Close waits on a quiet tunnel")
	}
}

type bufConn struct {
	net.Conn
	br *bufio.Reader
}

func (c *bufConn) Read(b []byte) (int, error) { return c.br.Read(b) }

func TestProxyAsks(t *testing.T) {
	var asked atomic.Int32
	answers := make(chan Answer, 10)
	var mu sync.Mutex
	remembered := map[string]bool{} // what an asker keeps of AllowThread
	r := newRig(t, Config{Ask: func(ctx context.Context, q Question) (Answer, error) {
		if q.Host != "unlisted.test" || q.Port != 80 {
			t.Errorf("question %+v", q)
		}
		mu.Lock()
		kept := remembered[q.Host]
		mu.Unlock()
		if kept {
			return AllowThread, nil
		}
		asked.Add(1)
		select {
		case a := <-answers:
			if a == AllowThread {
				mu.Lock()
				remembered[q.Host] = true
				mu.Unlock()
			}
			return a, nil
		case <-ctx.Done():
			return Deny, ctx.Err()
		}
	}})
	c := r.client(r.l)
	answers <- AllowOnce
	if code, _, err := get(c, "http://unlisted.test/"); err != nil || code != 200 {
		t.Fatalf("allowed once: %d %v", code, err)
	}
	if code, _, _ := get(c, "http://unlisted.test/"); code != 200 || asked.Load() != 1 {
		t.Fatalf("the same command asked again: %d, %d questions", code, asked.Load())
	}
	// Another command is asked again; it is refused, and not asked twice.
	l2 := r.command("cmd2")
	c2 := r.client(l2)
	answers <- Deny
	if code, body, _ := get(c2, "http://unlisted.test/"); code != 403 || !strings.Contains(body, "refused when asked") {
		t.Fatalf("denied: %d %q", code, body)
	}
	if code, _, _ := get(c2, "http://unlisted.test/"); code != 403 || asked.Load() != 2 {
		t.Fatalf("a denied host was asked again: %d, %d questions", code, asked.Load())
	}
	// For the thread: the asker answers a later command itself.
	answers <- AllowThread
	if code, _, _ := get(r.client(r.command("cmd3")), "http://unlisted.test/"); code != 200 {
		t.Fatalf("allowed for the thread: %d", code)
	}
	if code, _, _ := get(r.client(r.command("cmd4")), "http://unlisted.test/"); code != 200 || asked.Load() != 3 {
		t.Fatalf("a thread's host was asked again: %d, %d", code, asked.Load())
	}
	// Grant allows for the proxy's life; ErrUnlisted refuses with the hint.
	r.p.Grant("plain.test", 0)
	if code, _, _ := get(r.client(r.command("cmd5")), "http://plain.test/"); code != 200 || asked.Load() != 3 {
		t.Fatalf("granted: %d, %d", code, asked.Load())
	}
}

func TestProxyUnlistedHint(t *testing.T) {
	r := newRig(t, Config{
		Ask:  func(context.Context, Question) (Answer, error) { return Deny, ErrUnlisted },
		Hint: func(hp string) string { return "try --allow-domain " + hp },
	})
	code, body, _ := get(r.client(r.l), "http://unlisted.test/")
	if code != 403 || !strings.Contains(body, "unlisted.test is not an allowed host (try --allow-domain unlisted.test)") {
		t.Errorf("%d %q", code, body)
	}
}

// Connections to one host while its question waits share that question.
func TestProxyAsksOnce(t *testing.T) {
	release := make(chan struct{})
	var asked atomic.Int32
	started := make(chan struct{}, 1)
	r := newRig(t, Config{Ask: func(ctx context.Context, q Question) (Answer, error) {
		asked.Add(1)
		started <- struct{}{}
		<-release
		return AllowOnce, nil
	}})
	c := r.client(r.l)
	var wg sync.WaitGroup
	codes := make([]int, 4)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, _ = get(c, "http://unlisted.test/")
		}()
		if i == 0 {
			<-started
		}
	}
	// The others are on their way; wait until each is waiting.
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.l.mu.Lock()
		w := r.l.asking["unlisted.test:80"]
		r.l.mu.Unlock()
		if w != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if asked.Load() != 1 {
		t.Errorf("asked %d times", asked.Load())
	}
	for i, c := range codes {
		if c != 200 {
			t.Errorf("connection %d: %d", i, c)
		}
	}
}

// A question ends with its command.
func TestProxyQuestionEndsWithCommand(t *testing.T) {
	asking := make(chan struct{})
	r := newRig(t, Config{Ask: func(ctx context.Context, q Question) (Answer, error) {
		close(asking)
		<-ctx.Done()
		return Deny, ctx.Err()
	}})
	done := make(chan error, 1)
	go func() {
		_, _, err := get(r.client(r.l), "http://unlisted.test/")
		done <- err
	}()
	<-asking
	r.l.Close()
	<-done
}

func TestProxyMaxBytesOut(t *testing.T) {
	r := newRig(t, Config{Allow: []string{"plain.test"}, MaxBytesOut: 4096})
	c := r.client(r.l)
	resp, err := c.Post("http://plain.test/", "text/plain", strings.NewReader(strings.Repeat("x", 10000)))
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 403 || !strings.Contains(string(b), "4096 bytes in all") {
			t.Errorf("10,000 bytes past a cap of 4,096: %d %s", resp.StatusCode, b)
		}
	}
	if got := r.p.BytesOut(); got > 4096 {
		t.Errorf("%d bytes out, cap 4096", got)
	}
	// Past the cap nothing goes, on this connection or a new one.
	for _, cl := range []*http.Client{c, r.client(r.command("next"))} {
		if code, body, _ := get(cl, "http://plain.test/"); code != 403 || !strings.Contains(body, "4096 bytes in all") {
			t.Errorf("after the cap: %d %q", code, body)
		}
	}
}

// Each run has its own cap: one run that spent its bytes leaves another
// its own.
func TestProxyMeterPerRun(t *testing.T) {
	type runKey struct{}
	meters := map[string]*Meter{"a": NewMeter(4096), "b": NewMeter(4096)}
	r := newRig(t, Config{Allow: []string{"plain.test"}, MeterOf: func(ctx context.Context) *Meter {
		run, _ := ctx.Value(runKey{}).(string)
		return meters[run]
	}})
	command := func(run string) *http.Client {
		l, err := r.p.Command(context.WithValue(context.Background(), runKey{}, run), "cmd")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return r.client(l)
	}
	a := command("a")
	a.Post("http://plain.test/", "text/plain", strings.NewReader(strings.Repeat("x", 10000)))
	if code, _, _ := get(command("a"), "http://plain.test/"); code != 403 {
		t.Errorf("run a after its cap: %d", code)
	}
	if code, _, _ := get(command("b"), "http://plain.test/"); code != 200 {
		t.Errorf("run b: %d", code)
	}
	if meters["a"].Sent() > 4096 || meters["b"].Sent() == 0 || r.p.BytesOut() < meters["b"].Sent() {
		t.Errorf("sent: a %d, b %d, all %d", meters["a"].Sent(), meters["b"].Sent(), r.p.BytesOut())
	}
}

func TestProxyRefusesPrivateAddresses(t *testing.T) {
	var dialed []string
	p, err := New(Config{
		Allow: []string{"inside.test", "outside.test"},
		LookupIP: func(_ context.Context, host string) ([]netip.Addr, error) {
			if host == "inside.test" {
				return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("::ffff:192.168.0.1")}, nil
			}
			return []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("93.184.216.34")}, nil
		},
		Dial: func(_ context.Context, _, addr string) (net.Conn, error) {
			dialed = append(dialed, addr)
			return nil, errors.New("no network in tests")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.dial(context.Background(), "inside.test", 443, nil); err == nil || !strings.Contains(err.Error(), "private network") {
		t.Errorf("inside.test: %v", err)
	}
	p.dial(context.Background(), "outside.test", 443, nil)
	if len(dialed) != 1 || dialed[0] != "93.184.216.34:443" {
		t.Errorf("dialed %v, want only the public address", dialed)
	}
}

// socksDo runs a SOCKS5 CONNECT over c; it returns the reply code.
func socksDo(t *testing.T, c net.Conn, atyp byte, addr []byte, port int) byte {
	t.Helper()
	c.Write([]byte{5, 1, 0})
	var m [2]byte
	if _, err := io.ReadFull(c, m[:]); err != nil || m != [2]byte{5, 0} {
		t.Fatalf("greeting: %v %v", m, err)
	}
	req := []byte{5, 1, 0, atyp}
	if atyp == socksAtypName {
		req = append(req, byte(len(addr)))
	}
	req = append(req, addr...)
	req = binary.BigEndian.AppendUint16(req, uint16(port))
	c.Write(req)
	var rep [10]byte
	if _, err := io.ReadFull(c, rep[:]); err != nil {
		t.Fatalf("reply: %v", err)
	}
	return rep[1]
}

func TestProxySOCKS(t *testing.T) {
	r := newRig(t, Config{Allow: []string{"plain.test"}})
	dial := func() net.Conn {
		c, err := net.Dial("unix", r.l.Socket)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	c := dial()
	if code := socksDo(t, c, socksAtypName, []byte("plain.test"), 80); code != socksOK {
		t.Fatalf("allowed: reply %d", code)
	}
	fmt.Fprintf(c, "GET /s HTTP/1.1\r\nHost: plain.test\r\nConnection: close\r\n\r\n")
	b, _ := io.ReadAll(c)
	if !strings.Contains(string(b), "plain GET /s") {
		t.Errorf("through SOCKS: %q", b)
	}
	if code := socksDo(t, dial(), socksAtypName, []byte("unlisted.test"), 80); code != socksNotAllowed {
		t.Errorf("unlisted: reply %d", code)
	}
	if code := socksDo(t, dial(), socksAtypIPv4, []byte{127, 0, 0, 1}, 80); code != socksNotAllowed {
		t.Errorf("an IP: reply %d", code)
	}
}

func TestProxyClose(t *testing.T) {
	r := newRig(t, Config{})
	dir := r.l.Dir
	r.p.Close()
	if _, err := net.Dial("unix", r.l.Socket); err == nil {
		t.Error("the socket answers after Close")
	}
	if _, err := r.p.Command(context.Background(), "x"); !errors.Is(err, ErrClosed) {
		t.Errorf("Command after Close: %v", err)
	}
	if _, err := net.Dial("unix", dir+"/"+SocketName); err == nil {
		t.Error("the folder is still there")
	}
}
