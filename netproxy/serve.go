package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// headerTimeout bounds how long a command may take to say what it wants
// (a request's head, a SOCKS5 greeting, a TLS ClientHello).
const headerTimeout = 30 * time.Second

// maxHead bounds the bytes of a request's head (its line and headers),
// as net/http's server bounds them by default.
const maxHead = 1 << 20

// maxConns bounds the connections one command may have open at once
// through the proxy; more are closed as they come.
const maxConns = 256

// hopHeaders are the headers of one hop, which a proxy does not forward.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// headLimit reads from a connection, failing once more than its budget
// is read: set to maxHead while a head is read, unlimited after.
type headLimit struct {
	r    io.Reader
	left atomic.Int64
}

// errHeadTooLarge is what a head beyond maxHead reads as.
var errHeadTooLarge = errors.New("the request's head is larger than 1 MiB")

func (h *headLimit) Read(b []byte) (int, error) {
	left := h.left.Load()
	if left <= 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(b)) > left {
		b = b[:left]
	}
	n, err := h.r.Read(b)
	h.left.Add(-int64(n))
	return n, err
}

func (h *headLimit) limit()   { h.left.Store(maxHead) }
func (h *headLimit) unlimit() { h.left.Store(math.MaxInt64) }

// conn is one of a command's connections as the proxy reads it.
type conn struct {
	net.Conn
	br   *bufio.Reader
	head *headLimit
}

// serve serves one connection of a command: SOCKS5 when it starts with
// version 5, else HTTP.
func (l *Listener) serve(nc net.Conn) {
	h := &headLimit{r: nc}
	h.limit()
	c := &conn{Conn: nc, br: bufio.NewReader(h), head: h}
	nc.SetReadDeadline(time.Now().Add(headerTimeout))
	first, err := c.br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == socksVersion {
		l.serveSOCKS(c)
		return
	}
	l.serveHTTP(c, "")
}

// readRequest reads a request's head, bounded in size and time.
func (c *conn) readRequest() (*http.Request, error) {
	c.head.limit()
	c.SetReadDeadline(time.Now().Add(headerTimeout))
	req, err := http.ReadRequest(c.br)
	c.SetReadDeadline(time.Time{})
	c.head.unlimit()
	return req, err
}

// serveHTTP serves HTTP requests on c, each decided, one after another:
// requests for http:// URLs and CONNECTs through the proxy, or, with
// tunnelHost set, the requests of a tunnel to tunnelHost's port 80
// (CONNECT or SOCKS5), each of which must name that host.
func (l *Listener) serveHTTP(c *conn, tunnelHost string) {
	var transport *http.Transport
	defer func() {
		if transport != nil {
			transport.CloseIdleConnections()
		}
	}()
	for {
		req, err := c.readRequest()
		if err != nil {
			if errors.Is(err, errHeadTooLarge) {
				writeStatus(c, http.StatusRequestHeaderFieldsTooLarge, err.Error())
			} else if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isTimeout(err) {
				writeStatus(c, http.StatusBadRequest, "not an HTTP request this proxy understands: "+oneLine(err.Error()))
			}
			return
		}
		if req.Method == http.MethodConnect && tunnelHost == "" {
			l.connect(c, req)
			return
		}
		target, port := "", 80
		switch {
		case tunnelHost != "":
			target = tunnelHost
			named, _, _ := splitTarget(req.Host, 80)
			if req.Method == http.MethodConnect || named != "" && normalizeHost(named) != tunnelHost || req.URL.Host != "" && req.URL.Host != req.Host {
				req.Body.Close()
				writeRefusal(c, l.refuse(tunnelHost, 80, fmt.Sprintf("a request in the tunnel to %s names another host, %q", tunnelHost, req.Host)))
				return
			}
		case req.URL.Scheme != "http" || req.URL.Host == "":
			req.Body.Close()
			writeStatus(c, http.StatusBadRequest, "this is a proxy: ask for an http:// URL, or CONNECT host:443 for HTTPS")
			return
		default:
			var host string
			host, port, err = splitTarget(req.URL.Host, 80)
			if err == nil {
				target, err = l.decide(host, port)
			}
			if err != nil {
				req.Body.Close()
				writeRefusal(c, err)
				if req.Close {
					return
				}
				continue
			}
		}
		if transport == nil {
			transport = l.transport()
		}
		if !l.forward(c, req, transport, target, port) {
			return
		}
	}
}

// transport is the HTTP client side of plain requests: it dials through
// the proxy's rules and never through another proxy.
func (l *Listener) transport() *http.Transport {
	return &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			host, port, err := splitTarget(addr, 80)
			if err != nil {
				return nil, err
			}
			return l.p.dial(ctx, host, port, l.meter)
		},
		ResponseHeaderTimeout: 5 * time.Minute,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       30 * time.Second,
		DisableCompression:    true,
	}
}

// forward sends req on to host (decided) on port and writes the response
// to c; it reports whether the connection may carry another request.
func (l *Listener) forward(c *conn, req *http.Request, t *http.Transport, host string, port int) bool {
	out := req.Clone(l.ctx)
	out.RequestURI = ""
	out.URL.Scheme, out.URL.Host, out.Host = "http", hostPort(host, port), ""
	if port == 80 {
		out.URL.Host = host
	}
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	var body *trackedBody
	if req.ContentLength == 0 {
		out.Body = nil
	} else {
		body = &trackedBody{ReadCloser: req.Body}
		out.Body = body
	}
	resp, err := t.RoundTrip(out)
	if err != nil {
		var r *refusal
		if l.meter.spent() {
			writeRefusal(c, l.meter.refusal())
		} else if errors.As(err, &r) {
			writeRefusal(c, r)
		} else {
			writeStatus(c, http.StatusBadGateway, oneLine(err.Error()))
		}
		return false
	}
	defer resp.Body.Close()
	for _, h := range hopHeaders {
		if h != "Transfer-Encoding" {
			resp.Header.Del(h)
		}
	}
	resp.Close = resp.Close || req.Close
	if err := resp.Write(c); err != nil {
		return false
	}
	// The next request is read only once this one's body has been read
	// to its end: a host that answers before reading it all leaves the
	// transport reading it still, and the connection's framing unknown. A
	// response without a length ends with its connection.
	unframed := resp.ContentLength < 0 && !slices.Contains(resp.TransferEncoding, "chunked")
	return !resp.Close && !unframed && (body == nil || body.eof.Load())
}

// trackedBody is a request's body that says when it was read to its end.
type trackedBody struct {
	io.ReadCloser
	eof atomic.Bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof.Store(true)
	}
	return n, err
}

// connect serves a CONNECT: decided, then a tunnel (port 80's read as
// requests, each naming the host).
func (l *Listener) connect(c *conn, req *http.Request) {
	host, port, err := splitTarget(req.Host, 443)
	if err == nil {
		host, err = l.decide(host, port)
	}
	if err == nil && port == 80 {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err == nil {
			l.serveHTTP(c, host)
		}
		return
	}
	var up net.Conn
	if err == nil {
		up, err = l.p.dial(l.ctx, host, port, l.meter)
	}
	if err != nil {
		var r *refusal
		if errors.As(err, &r) {
			writeRefusal(c, r)
		} else {
			writeStatus(c, http.StatusBadGateway, oneLine(err.Error()))
		}
		return
	}
	defer up.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	l.tunnel(c, up, host, port)
}

// tunnel carries bytes both ways between the command's c and up, until
// either side ends or the command does. On port 443 the command's first
// bytes must be a TLS ClientHello whose server name is host: a tunnel to
// an allowed name must not carry a handshake for another (a CDN serves
// both). A tunnel to a port a rule names is not looked into.
func (l *Listener) tunnel(c *conn, up net.Conn, host string, port int) {
	stop := context.AfterFunc(l.ctx, func() { up.Close(); c.Close() })
	defer stop()
	if port == 443 {
		c.SetReadDeadline(time.Now().Add(headerTimeout))
		hello, name, err := readClientHello(c.br)
		c.SetReadDeadline(time.Time{})
		switch {
		case err != nil:
			l.refuse(host, port, "the tunnel to "+host+" does not start as TLS for it: "+err.Error())
			return
		case normalizeHost(name) != host:
			l.refuse(host, port, fmt.Sprintf("the tunnel to %s asks TLS for another server, %s", host, oneLine(name)))
			return
		}
		if _, err := up.Write(hello); err != nil {
			return
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(up, c.br)
		closeWrite(up)
	}()
	io.Copy(c, up)
	closeWrite(c.Conn)
	c.SetReadDeadline(time.Now()) // ends the copy the other way if the command keeps its side open
	wg.Wait()
}

// closeWrite half-closes c where it can (TCP and Unix connections, as
// counted).
func closeWrite(c net.Conn) {
	if cc, ok := c.(*countedConn); ok {
		c = cc.Conn
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
}

// normalizeHost is a name as the rules match it: lower case, without a
// final dot.
func normalizeHost(h string) string {
	return strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
}

// splitTarget splits "host:port" (or a bare host, on defPort) and checks
// the port.
func splitTarget(s string, defPort int) (string, int, error) {
	host, portText, err := net.SplitHostPort(s)
	if err != nil {
		if strings.Contains(err.Error(), "missing port") {
			return strings.Trim(s, "[]"), defPort, nil
		}
		return "", 0, &refusal{fmt.Sprintf("%q is not host:port", s)}
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, &refusal{fmt.Sprintf("%q has no valid port", s)}
	}
	return host, port, nil
}

// writeRefusal writes a 403 saying why, in the status line (what Go's and
// curl's errors show of a failed CONNECT) and in the body.
func writeRefusal(w io.Writer, err error) {
	writeStatus(w, http.StatusForbidden, oneLine(err.Error()))
}

func writeStatus(w io.Writer, code int, reason string) {
	body := "deepagents sandbox proxy: " + reason + "\n"
	fmt.Fprintf(w, "HTTP/1.1 %d %s: %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nX-Deepagents-Proxy: refused\r\n\r\n%s",
		code, http.StatusText(code), reason, len(body), body)
}

// oneLine keeps s to one line of printable text, for a status line.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:300], "") + "..."
	}
	return s
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
