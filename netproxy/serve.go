package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// headerTimeout bounds how long a command may take to say what it wants
// (a request's head, a SOCKS5 greeting) and to start TLS after a CONNECT.
const headerTimeout = 30 * time.Second

// hopHeaders are the headers of one hop, which a proxy does not forward.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// serve serves one connection of a command: SOCKS5 when it starts with
// version 5, else HTTP.
func (l *Listener) serve(c net.Conn) {
	br := bufio.NewReaderSize(c, maxClientHello)
	c.SetReadDeadline(time.Now().Add(headerTimeout))
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == socksVersion {
		l.serveSOCKS(c, br)
		return
	}
	l.serveHTTP(c, br)
}

// serveHTTP serves HTTP requests through the proxy: a CONNECT tunnel, or
// requests for http:// URLs, each decided, one after another on the same
// connection.
func (l *Listener) serveHTTP(c net.Conn, br *bufio.Reader) {
	var transport *http.Transport
	defer func() {
		if transport != nil {
			transport.CloseIdleConnections()
		}
	}()
	for {
		c.SetReadDeadline(time.Now().Add(headerTimeout))
		req, err := http.ReadRequest(br)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isTimeout(err) {
				writeStatus(c, http.StatusBadRequest, "not an HTTP request this proxy understands: "+oneLine(err.Error()))
			}
			return
		}
		c.SetReadDeadline(time.Time{})
		if req.Method == http.MethodConnect {
			l.connect(c, br, req)
			return
		}
		if req.URL.Scheme != "http" || req.URL.Host == "" {
			req.Body.Close()
			writeStatus(c, http.StatusBadRequest, "this is a proxy: ask for an http:// URL, or CONNECT host:443 for HTTPS")
			return
		}
		host, port, err := splitTarget(req.URL.Host, 80)
		if err == nil {
			err = l.decide(host, port)
		}
		if err != nil {
			req.Body.Close()
			writeRefusal(c, err)
			if req.Close {
				return
			}
			continue
		}
		if transport == nil {
			transport = l.transport()
		}
		if !l.forward(c, req, transport) {
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
			return l.p.dial(ctx, host, port)
		},
		ResponseHeaderTimeout: 5 * time.Minute,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       30 * time.Second,
		DisableCompression:    true,
	}
}

// forward sends req on and writes the response to c; it reports whether
// the connection may carry another request.
func (l *Listener) forward(c net.Conn, req *http.Request, t *http.Transport) bool {
	out := req.Clone(l.ctx)
	out.RequestURI = ""
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	if req.ContentLength == 0 {
		out.Body = nil
	}
	resp, err := t.RoundTrip(out)
	if err != nil {
		var r *refusal
		if errors.As(err, &r) {
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
	resp.Close = req.Close
	if err := resp.Write(c); err != nil {
		return false
	}
	return !req.Close && !resp.Close
}

// connect serves a CONNECT: decided, then a tunnel.
func (l *Listener) connect(c net.Conn, br *bufio.Reader, req *http.Request) {
	host, port, err := splitTarget(req.Host, 443)
	if err == nil {
		err = l.decide(host, port)
	}
	var up net.Conn
	if err == nil {
		up, err = l.p.dial(l.ctx, host, port)
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
	l.tunnel(c, br, up, host, port)
}

// tunnel carries bytes both ways between the command's c (buffered by br)
// and up. On port 443 the command's first bytes must be a TLS ClientHello
// whose server name, if it gives one, is host: a tunnel to an allowed
// name must not carry a request for another (a CDN serves both).
func (l *Listener) tunnel(c net.Conn, br *bufio.Reader, up net.Conn, host string, port int) {
	if port == 443 {
		c.SetReadDeadline(time.Now().Add(headerTimeout))
		name, err := peekServerName(br)
		c.SetReadDeadline(time.Time{})
		if err != nil {
			l.refuse(host, port, "the tunnel to "+host+" does not start with TLS: "+err.Error())
			return
		}
		if name != "" && !strings.EqualFold(strings.TrimSuffix(name, "."), host) {
			l.refuse(host, port, fmt.Sprintf("the tunnel to %s asks TLS for another server, %s", host, name))
			return
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(up, br)
		if cw, ok := up.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		} else if cc, ok := up.(*countedConn); ok {
			if tc, ok := cc.Conn.(interface{ CloseWrite() error }); ok {
				tc.CloseWrite()
			}
		}
	}()
	io.Copy(c, up)
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	c.SetReadDeadline(time.Now()) // ends the copy the other way if the command keeps its side open
	wg.Wait()
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
