package sandbox_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/deepagents-go/deepagents/backend/sandbox"
	"github.com/deepagents-go/deepagents/netproxy"
)

// moduleProxy is a Go module proxy (GOPROXY protocol) serving one module,
// example.test/hello v1.0.0.
func moduleProxy(t *testing.T) *httptest.Server {
	t.Helper()
	const mod, ver = "example.test/hello", "v1.0.0"
	gomod := "module " + mod + "\n\ngo 1.21\n"
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for name, body := range map[string]string{"go.mod": gomod, "hello.go": "package hello\n\nconst Hello = \"hello\"\n"} {
		w, _ := zw.Create(mod + "@" + ver + "/" + name)
		w.Write([]byte(body))
	}
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/" + mod + "/@v/list":
			fmt.Fprintln(w, ver)
		case "/" + mod + "/@v/" + ver + ".info":
			fmt.Fprintf(w, `{"Version":%q,"Time":"2026-01-01T00:00:00Z"}`, ver)
		case "/" + mod + "/@v/" + ver + ".mod":
			w.Write([]byte(gomod))
		case "/" + mod + "/@v/" + ver + ".zip":
			w.Write(zb.Bytes())
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSandboxNetworkByName drives the proxy from inside the sandbox with
// the programs a model runs: curl to an allowed name works and to another
// is refused with the proxy's reason, an IP address or another port
// fails, nc to the host's loopback fails, and go mod download reaches a
// module proxy named as an allowed host.
func TestSandboxNetworkByName(t *testing.T) {
	for _, prog := range []string{"curl", "nc"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is missing (.ci/run installs it)", prog)
		}
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.Host)
	}))
	t.Cleanup(site.Close)
	mods := moduleProxy(t)
	var mu sync.Mutex
	var events []netproxy.Event
	p, err := netproxy.New(netproxy.Config{
		Allow: []string{"allowed.test", "mods.test"},
		Deny:  []string{"denied.test"},
		Hosts: map[string]string{
			"allowed.test:80":   site.Listener.Addr().String(),
			"allowed.test:8080": site.Listener.Addr().String(),
			"denied.test:80":    site.Listener.Addr().String(),
			"other.test:80":     site.Listener.Addr().String(),
			"mods.test:80":      mods.Listener.Addr().String(),
		},
		Logger: slog.New(slog.DiscardHandler),
		OnEvent: func(_ context.Context, e netproxy.Event) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	s := sandboxShell(t, t.TempDir(), sandbox.Bubblewrap{Proxy: p})
	_, sitePort, _ := net.SplitHostPort(site.Listener.Addr().String())

	for _, c := range []struct {
		name, command string
		ok            bool
		want          string
	}{
		{"allowed", "curl -sS http://allowed.test/", true, "hello from allowed.test"},
		{"allowed, in the environment", "echo $HTTP_PROXY $ALL_PROXY", true, "http://127.0.0.1:3128 socks5h://127.0.0.1:1080"},
		{"allowed through SOCKS5", "curl -sS --proxy socks5h://127.0.0.1:1080 http://allowed.test/", true, "hello from allowed.test"},
		{"unlisted", "curl -sS -i http://other.test/", true, "403 Forbidden: other.test is not an allowed host"},
		{"denied", "curl -sS -i http://denied.test/", true, "denied by the rule"},
		{"unlisted over https", "curl -sS https://other.test/", false, "403"},
		{"an IP address", "curl -sS -i http://93.184.216.34/", true, "is an IP address"},
		{"another port", "curl -sS -i http://allowed.test:8080/", true, "port 8080"},
		{"the host's loopback", "nc -z -w 2 127.0.0.1 " + sitePort, false, ""},
		{"the host's loopback, no proxy", "curl -sS --noproxy '*' http://127.0.0.1:" + sitePort + "/", false, ""},
		{"DNS", "curl -sS --noproxy '*' http://allowed.test/", false, ""},
		{"go mod download", "cd $(mktemp -d) && GOPROXY=http://mods.test GOSUMDB=off GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod download -json example.test/hello@v1.0.0", true, `"Version": "v1.0.0"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, s, c.command)
			t.Logf("%s:\n%s", c.command, r.Output)
			if (r.ExitCode == 0) != c.ok || !strings.Contains(r.Output, c.want) {
				t.Errorf("%s: exit %d, output:\n%s\nwant ok=%v and %q", c.command, r.ExitCode, r.Output, c.ok, c.want)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	var refused int
	for _, e := range events {
		if !e.Allowed {
			refused++
		}
	}
	if refused < 5 {
		t.Errorf("%d refusals among the events: %+v", refused, events)
	}
	var sawMods bool
	for _, u := range p.Usage() {
		if u.Host == "mods.test:80" && u.BytesIn > 0 {
			sawMods = true
		}
	}
	if !sawMods {
		t.Errorf("usage: %+v", p.Usage())
	}
}

// Without a proxy the sandbox has no network at all: nothing listens at
// the proxy's address.
func TestSandboxNetworkOff(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is missing")
	}
	s := sandboxShell(t, t.TempDir(), sandbox.Bubblewrap{})
	r := run(t, s, "echo proxy=$HTTP_PROXY; curl -sS --max-time 5 --proxy http://127.0.0.1:3128 http://allowed.test/")
	if r.ExitCode == 0 || !strings.Contains(r.Output, "proxy=\n") {
		t.Errorf("exit %d: %s", r.ExitCode, r.Output)
	}
}
