package server

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/deepagents-go/deepagents/langgraph"
)

// DefaultAllowedOrigins are the origins whose pages may call a server when
// Access.AllowedOrigins (Config.AllowedOrigins) is nil: pages served from
// loopback, on any port, as the Deep Agents UI is (http://localhost:3000).
var DefaultAllowedOrigins = []string{"http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"}

// ErrAccess reports access options that cannot be used (an origin pattern
// that is not one).
var ErrAccess = errors.New("server: access")

// Access says who may drive an HTTP handler, so that only its user can: a
// web page the user happens to open must neither start a run nor read a
// thread, whatever it sends. Protect enforces it; a Server applies it to
// every request, built from its Config.
//
// In order, a request is refused:
//
//   - 403 when its Host names neither a loopback name (localhost), an IP
//     address, nor one of AllowedHosts: a page of evil.example whose name
//     resolves to 127.0.0.1 (DNS rebinding) is same-origin with a server
//     it reaches by that name, so only the Host it sends tells it apart;
//   - 403 when it comes from a page of an origin not allowed (its Origin
//     header, or Sec-Fetch-Site saying cross-site or same-site without
//     one), before anything of it is read: CORS headers only stop a page
//     reading an answer, not a simple request (a text/plain POST) from
//     doing what it asks;
//   - 401 without the key, when APIKey is set (X-Api-Key, or
//     Authorization: Bearer);
//   - 415 when a POST, PUT, PATCH or DELETE has a body whose Content-Type
//     is not JSON (application/json or a +json type), or a content type
//     other than JSON: no form or text/plain request does anything.
//
// The Open paths (GET or HEAD) are answered before any of these, for
// health probes. A preflight (OPTIONS) from an allowed origin is answered
// 204 with the CORS headers; the answers to an allowed origin carry
// Access-Control-Allow-Origin with that origin.
type Access struct {
	// APIKey, when set, must come with every request but the Open ones
	// and preflights.
	APIKey string
	// AllowedOrigins are the origins (scheme://host[:port]) whose pages
	// may call the handler from a browser. A port of "*" matches any
	// port, and "*" alone any origin (an explicit opt-in: any page the
	// user opens may then drive the server, unless a key is required).
	// Nil means DefaultAllowedOrigins; empty (non-nil) allows none. A
	// request from the handler's own origin (its Host) is always allowed.
	AllowedOrigins []string
	// AllowedHosts are host names (a port, if given, is ignored) by which
	// clients may reach the handler besides localhost and IP addresses;
	// "*" allows any name (behind a proxy that checks it, say).
	AllowedHosts []string
	// Open are the paths answered to GET and HEAD without any check
	// ("/ok"). They must reveal nothing and change nothing.
	Open []string
	// AllowHeaders and ExposeHeaders are the CORS lists of the request
	// headers an allowed page may send and of the answer's headers its
	// script may read. Nil means the LangGraph SDK's.
	AllowHeaders, ExposeHeaders []string
}

// Header lists of the LangGraph API's clients.
var (
	defaultAllowHeaders  = []string{"content-type", "x-api-key", "x-auth-scheme", "last-event-id", "authorization"}
	defaultExposeHeaders = []string{"content-location", "location", "x-pagination-total", "x-pagination-next"}
)

// guard is an Access ready to check requests.
type guard struct {
	key          []byte
	anyOrigin    bool
	origins      []originPattern
	anyHost      bool
	hosts        map[string]bool
	open         []string
	allowHeaders string
	expose       string
	next         http.Handler
}

// originPattern is an allowed origin; port "*" is any port.
type originPattern struct {
	scheme, host, port string
}

// Protect returns next behind the checks of a (see Access). It fails on
// an origin pattern it cannot read.
func Protect(next http.Handler, a Access) (http.Handler, error) {
	return newGuard(next, a)
}

func newGuard(next http.Handler, a Access) (*guard, error) {
	g := &guard{hosts: map[string]bool{}, open: a.Open, next: next}
	if a.APIKey != "" {
		g.key = []byte(a.APIKey)
	}
	origins := a.AllowedOrigins
	if origins == nil {
		origins = DefaultAllowedOrigins
	}
	for _, o := range origins {
		if o == "*" {
			g.anyOrigin = true
			continue
		}
		p, err := parseOriginPattern(o)
		if err != nil {
			return nil, err
		}
		g.origins = append(g.origins, p)
	}
	for _, h := range a.AllowedHosts {
		if h == "*" {
			g.anyHost = true
			continue
		}
		if name := hostName(h); name != "" {
			g.hosts[name] = true
		}
	}
	allow, expose := a.AllowHeaders, a.ExposeHeaders
	if allow == nil {
		allow = defaultAllowHeaders
	}
	if expose == nil {
		expose = defaultExposeHeaders
	}
	g.allowHeaders, g.expose = strings.Join(allow, ","), strings.Join(expose, ",")
	return g, nil
}

// parseOriginPattern reads scheme://host[:port], the port possibly "*".
func parseOriginPattern(s string) (originPattern, error) {
	bad := func(why string) (originPattern, error) {
		return originPattern{}, fmt.Errorf("%w: allowed origin %q: %s (an origin is scheme://host[:port], such as http://localhost:3000 or https://ui.example.com; a port of * is any port)", ErrAccess, s, why)
	}
	scheme, rest, ok := strings.Cut(strings.TrimSuffix(strings.ToLower(s), "/"), "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return bad("the scheme must be http or https")
	}
	if rest == "" || strings.ContainsAny(rest, "/?#@ ") {
		return bad("only a host and a port may follow the scheme")
	}
	host, port := rest, ""
	if i := strings.LastIndexByte(rest, ':'); i >= 0 && !strings.HasSuffix(rest, "]") {
		host, port = rest[:i], rest[i+1:]
		if port == "" {
			return bad("an empty port")
		}
	}
	if port != "" && port != "*" {
		for _, c := range port {
			if c < '0' || c > '9' {
				return bad("the port must be a number or *")
			}
		}
	}
	if port == "" {
		port = defaultPort(scheme)
	}
	if host == "" || strings.Contains(host, "*") {
		return bad("the host must be a name or an address (no wildcard)")
	}
	return originPattern{scheme: scheme, host: host, port: port}, nil
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// parseOrigin splits an Origin header; ok is false for "null" and
// anything else that is not scheme://host[:port].
func parseOrigin(s string) (scheme, host, port string, ok bool) {
	u, err := url.Parse(strings.ToLower(s))
	if err != nil || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return "", "", "", false
	}
	host, port = u.Hostname(), u.Port()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == "" {
		port = defaultPort(u.Scheme)
	}
	return u.Scheme, host, port, true
}

// hostName is the lower-case name of a Host header or an allowed host,
// without port, brackets or a trailing dot.
func hostName(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(h, ".")
}

// hostAllowed reports whether a request may name host: a loopback name,
// an IP address (a page cannot rebind an address: its origin would be
// that address), or an allowed name.
func (g *guard) hostAllowed(host string) bool {
	if host == "" || g.anyHost {
		return true // HTTP/1.0 sends none; no browser does that
	}
	name := hostName(host)
	if name == "localhost" || g.hosts[name] {
		return true
	}
	_, err := netip.ParseAddr(name)
	return err == nil
}

// originAllowed reports whether a page of origin may call the handler,
// reached as host.
func (g *guard) originAllowed(origin, host string) bool {
	if g.anyOrigin {
		return true
	}
	scheme, oh, op, ok := parseOrigin(origin)
	if !ok {
		return false
	}
	for _, p := range g.origins {
		if p.scheme == scheme && p.host == oh && (p.port == "*" || p.port == op) {
			return true
		}
	}
	// The handler's own origin: its Host was checked first, so this is no
	// rebound name.
	selfName, selfPort := hostName(host), portOf(host)
	if selfPort == "" {
		selfPort = defaultPort(scheme)
	}
	return strings.Trim(oh, "[]") == selfName && op == selfPort
}

// portOf is the port of a Host header, "" for none.
func portOf(hostport string) string {
	if _, p, err := net.SplitHostPort(hostport); err == nil {
		return p
	}
	return ""
}

// isJSON reports whether a Content-Type is JSON.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// hasBody reports whether a request comes with a body.
func hasBody(r *http.Request) bool {
	return r.ContentLength > 0 || (r.ContentLength < 0 && r.Body != nil && r.Body != http.NoBody) || len(r.TransferEncoding) > 0
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && slices.Contains(g.open, r.URL.Path) {
		g.next.ServeHTTP(w, r)
		return
	}
	if !g.hostAllowed(r.Host) {
		httpError(w, http.StatusForbidden, fmt.Sprintf("Host %q is not one this server answers to (DNS rebinding?); allow it with --allow-host", r.Host))
		return
	}
	// Answers are data, never a page to render.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Add("Vary", "Origin")
	origin := r.Header.Get("Origin")
	switch {
	case origin != "":
		if !g.originAllowed(origin, r.Host) {
			httpError(w, http.StatusForbidden, fmt.Sprintf("Origin %q is not allowed to call this server; allow it with --allow-origin", origin))
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Expose-Headers", g.expose)
	default:
		// A page's request without an Origin (a no-cors GET: an image, a
		// script) from another site.
		if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
			httpError(w, http.StatusForbidden, "Requests from other sites' pages are not allowed")
			return
		}
	}
	if r.Method == http.MethodOptions {
		if origin != "" && r.Header.Get("Access-Control-Request-Method") != "" {
			h := w.Header()
			h.Set("Access-Control-Allow-Methods", "GET,POST,PUT,PATCH,DELETE,OPTIONS")
			h.Set("Access-Control-Allow-Headers", g.allowHeaders)
			h.Set("Access-Control-Max-Age", "600")
			h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if g.key != nil && !g.keyOK(r) {
		httpError(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		ct := r.Header.Get("Content-Type")
		if (ct != "" || hasBody(r)) && !isJSON(ct) {
			httpError(w, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// keyOK reports whether a request carries the key, as X-Api-Key or as a
// bearer token.
func (g *guard) keyOK(r *http.Request) bool {
	got := r.Header.Get(langgraph.HeaderAPIKey)
	if got == "" {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			got = strings.TrimSpace(tok)
		}
	}
	return subtle.ConstantTimeCompare([]byte(got), g.key) == 1
}
