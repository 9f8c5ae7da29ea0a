package server_test

import (
	"context"
	"errors"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/server"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
)

// countingModel answers "ok" and counts its calls: a request that made
// the agent run shows in the count.
type countingModel struct{ Calls atomic.Int32 }

func (m *countingModel) Stream(context.Context, *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		m.Calls.Add(1)
		yield(llm.Chunk{Type: llm.ChunkDone, Response: &llm.Response{Message: llm.AssistantText("ok")}}, nil)
	}
}

// raw is a request as a browser (or anyone) may send it.
type raw struct {
	method, path, host, body string
	hdr                      map[string]string
}

// send sends r to the fixture's server exactly as given (no header added).
func (f *fixture) send(r raw) (int, string, http.Header) {
	f.T.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, f.Srv.URL+r.path, body)
	if err != nil {
		f.T.Fatal(err)
	}
	if r.host != "" {
		req.Host = r.host
	}
	for k, v := range r.hdr {
		req.Header.Set(k, v)
	}
	res, err := f.Srv.Client().Do(req)
	if err != nil {
		f.T.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}

// TestAccessRefusesOtherPages sends what a hostile page can make a
// browser send: simple requests (text/plain, a form), JSON requests and
// preflights from a foreign origin, and the same-origin requests of a
// page whose name rebinds to loopback (Host: evil.example). Each is
// refused before it is read: no run starts (the model is never called),
// no thread is created, and no answer carries the thread's messages or a
// CORS grant. Before, the server answered Access-Control-Allow-Origin: *
// to all and ran the text/plain POST.
func TestAccessRefusesOtherPages(t *testing.T) {
	m := &countingModel{}
	f := newFixture(t, servertest.Options{Model: m})
	f.JSON(http.MethodPost, "/threads", map[string]any{"thread_id": "t1"}, http.StatusOK, nil)
	f.JSON(http.MethodPost, "/threads/t1/state", map[string]any{"values": map[string]any{"messages": []any{servertest.Human("my secret plans")}}}, http.StatusOK, nil)
	const run = `{"assistant_id":"deepagent","input":{"messages":[{"type":"human","content":"touch from-web"}]},"on_completion":"keep"}`
	evil := map[string]string{"Origin": "http://evil.example"}
	with := func(base map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	tests := []struct {
		name string
		req  raw
		want int
	}{
		{"text/plain POST /runs/wait from another origin", raw{method: "POST", path: "/runs/wait", body: run, hdr: with(evil, "Content-Type", "text/plain;charset=UTF-8")}, 403},
		{"text/plain POST /threads/t1/runs/wait from another origin", raw{method: "POST", path: "/threads/t1/runs/wait", body: run, hdr: with(evil, "Content-Type", "text/plain")}, 403},
		{"form POST from another origin", raw{method: "POST", path: "/runs/wait", body: "a=b", hdr: with(evil, "Content-Type", "application/x-www-form-urlencoded")}, 403},
		{"JSON POST /runs/wait from another origin", raw{method: "POST", path: "/runs/wait", body: run, hdr: with(evil, "Content-Type", "application/json")}, 403},
		{"JSON POST /threads/search from another origin", raw{method: "POST", path: "/threads/search", body: `{}`, hdr: with(evil, "Content-Type", "application/json")}, 403},
		{"GET /threads/t1 from another origin", raw{method: "GET", path: "/threads/t1", hdr: evil}, 403},
		{"GET /threads/t1/state from another origin", raw{method: "GET", path: "/threads/t1/state", hdr: evil}, 403},
		{"preflight from another origin", raw{method: "OPTIONS", path: "/runs/wait", hdr: with(evil, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")}, 403},
		{"Origin null (a sandboxed frame, a file: page)", raw{method: "POST", path: "/runs/wait", body: run, hdr: map[string]string{"Origin": "null", "Content-Type": "application/json"}}, 403},
		{"another loopback address", raw{method: "POST", path: "/threads/search", body: `{}`, hdr: map[string]string{"Origin": "http://127.0.0.2:3000", "Content-Type": "application/json"}}, 403},
		{"https localhost is not http localhost", raw{method: "GET", path: "/threads/t1", hdr: map[string]string{"Origin": "https://localhost:3000"}}, 403},
		{"a look-alike name", raw{method: "GET", path: "/threads/t1", hdr: map[string]string{"Origin": "http://localhost.evil.example:3000"}}, 403},
		{"a cross-site no-cors GET (no Origin)", raw{method: "GET", path: "/threads/t1", hdr: map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}}, 403},
		{"DNS rebinding: GET by a foreign name", raw{method: "GET", path: "/threads/t1", host: "evil.example:2024"}, 403},
		{"DNS rebinding: same-origin POST by a foreign name", raw{method: "POST", path: "/threads/search", host: "evil.example:2024", body: `{}`, hdr: map[string]string{"Origin": "http://evil.example:2024", "Content-Type": "application/json"}}, 403},
		{"DNS rebinding: text/plain run", raw{method: "POST", path: "/runs/wait", host: "evil.example:2024", body: run, hdr: map[string]string{"Origin": "http://evil.example:2024", "Content-Type": "text/plain"}}, 403},
		{"text/plain POST without Origin", raw{method: "POST", path: "/runs/wait", body: run, hdr: map[string]string{"Content-Type": "text/plain"}}, 415},
		{"form POST without Origin", raw{method: "POST", path: "/threads/t1/runs/wait", body: "a=b", hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 415},
		{"multipart POST without Origin", raw{method: "POST", path: "/runs/wait", body: "--x--", hdr: map[string]string{"Content-Type": "multipart/form-data; boundary=x"}}, 415},
		{"a body without a content type", raw{method: "POST", path: "/runs/wait", body: run}, 415},
		{"text/plain PATCH", raw{method: "PATCH", path: "/threads/t1", body: `{"metadata":{"a":1}}`, hdr: map[string]string{"Content-Type": "text/plain"}}, 415},
		{"text/plain with no body", raw{method: "POST", path: "/threads/t1/copy", hdr: map[string]string{"Content-Type": "text/plain"}}, 415},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, h := f.send(tt.req)
			if code != tt.want {
				t.Errorf("%d %q, want %d", code, body, tt.want)
			}
			if strings.Contains(body, "secret") {
				t.Errorf("the answer holds the thread's messages: %s", body)
			}
			if got := h.Get("Access-Control-Allow-Origin"); got != "" {
				t.Errorf("Access-Control-Allow-Origin: %q", got)
			}
		})
	}
	if n := m.Calls.Load(); n != 0 {
		t.Errorf("the model was called %d times: a refused request ran", n)
	}
	if n := f.ThreadCount(); n != 1 {
		t.Errorf("%d threads, want only t1", n)
	}
}

// TestAccessLetsTheUIIn checks that the Deep Agents UI, from its own
// loopback origin, gets what a browser needs: preflights granted for the
// headers it sends (Content-Type on every request, an empty X-Api-Key),
// the answer readable, Content-Location exposed; and that a client
// without an Origin (the SDK in Node, curl) and the server's own origin
// are served.
func TestAccessLetsTheUIIn(t *testing.T) {
	m := &countingModel{}
	f := newFixture(t, servertest.Options{Model: m})
	for _, origin := range []string{"http://localhost:3000", "http://127.0.0.1:3107", "http://[::1]:3000", f.Srv.URL} {
		t.Run(origin, func(t *testing.T) {
			code, _, h := f.send(raw{method: "OPTIONS", path: "/threads/search", hdr: map[string]string{
				"Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,x-api-key"}})
			if code != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != origin ||
				!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
				!strings.Contains(h.Get("Access-Control-Allow-Headers"), "content-type") ||
				!strings.Contains(h.Get("Access-Control-Allow-Headers"), "x-api-key") {
				t.Errorf("preflight: %d %v", code, h)
			}
			if h.Get("Access-Control-Allow-Private-Network") != "" || h.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("preflight grants more than asked: %v", h)
			}
			ui := map[string]string{"Origin": origin, "Content-Type": "application/json", "X-Api-Key": ""}
			code, body, h := f.send(raw{method: "POST", path: "/threads", body: `{"metadata":{}}`, hdr: ui})
			if code != http.StatusOK || h.Get("Access-Control-Allow-Origin") != origin || !strings.Contains(h.Get("Vary"), "Origin") {
				t.Fatalf("POST /threads: %d %s %v", code, body, h)
			}
			// The UI sends Content-Type on GETs too.
			if code, body, h := f.send(raw{method: "GET", path: "/threads/search", hdr: ui}); code == http.StatusForbidden || h.Get("Access-Control-Allow-Origin") != origin {
				t.Errorf("GET with the UI's headers: %d %s %v", code, body, h)
			}
			code, body, h = f.send(raw{method: "POST", path: "/runs/wait", body: `{"assistant_id":"deepagent","input":{"messages":[{"type":"human","content":"hi"}]}}`, hdr: ui})
			if code != http.StatusOK || !strings.Contains(body, `"ok"`) || !strings.Contains(h.Get("Access-Control-Expose-Headers"), "content-location") {
				t.Errorf("POST /runs/wait: %d %s %v", code, body, h)
			}
		})
	}
	// The SDK's runs.cancel and threads.copy send no body and no content
	// type; Node sends no Origin.
	f.JSON(http.MethodPost, "/threads", map[string]any{"thread_id": "t1"}, http.StatusOK, nil)
	if code, body, _ := f.send(raw{method: "POST", path: "/threads/t1/copy"}); code != http.StatusOK {
		t.Errorf("a bodyless POST: %d %s", code, body)
	}
	if code, body, _ := f.send(raw{method: "DELETE", path: "/threads/t1"}); code != http.StatusNoContent {
		t.Errorf("DELETE: %d %s", code, body)
	}
	if code, body, _ := f.send(raw{method: "GET", path: "/ok", host: "localhost:2024", hdr: map[string]string{"Content-Type": "application/vnd.api+json"}}); code != http.StatusOK {
		t.Errorf("GET /ok by localhost: %d %s", code, body)
	}
	if code, body, _ := f.send(raw{method: "POST", path: "/threads/search", body: `{}`, hdr: map[string]string{"Content-Type": "application/merge-patch+json"}}); code != http.StatusOK {
		t.Errorf("a +json type: %d %s", code, body)
	}
}

// TestAccessKey checks the key: required by every request but GET /ok
// and the preflights (which carry no custom header), as X-Api-Key or a
// bearer token; a foreign page is refused before the key is looked at.
// Before, GET /ok needed the key, so health probes could not reach a
// server that had one.
func TestAccessKey(t *testing.T) {
	f := newFixture(t, servertest.Options{APIKey: "secret"})
	tests := []struct {
		name string
		req  raw
		want int
	}{
		{"/ok without a key", raw{method: "GET", path: "/ok"}, 200},
		{"/ok by any name (a probe)", raw{method: "GET", path: "/ok", host: "pod-1.svc:2024"}, 200},
		{"/info without a key", raw{method: "GET", path: "/info"}, 401},
		{"an empty key", raw{method: "GET", path: "/info", hdr: map[string]string{"X-Api-Key": ""}}, 401},
		{"a wrong key", raw{method: "GET", path: "/info", hdr: map[string]string{"X-Api-Key": "secreT"}}, 401},
		{"the key", raw{method: "GET", path: "/info", hdr: map[string]string{"X-Api-Key": "secret"}}, 200},
		{"a bearer token", raw{method: "GET", path: "/info", hdr: map[string]string{"Authorization": "Bearer secret"}}, 200},
		{"a wrong bearer token", raw{method: "GET", path: "/info", hdr: map[string]string{"Authorization": "Bearer nope"}}, 401},
		{"a UI preflight", raw{method: "OPTIONS", path: "/threads", hdr: map[string]string{"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST"}}, 204},
		{"a foreign page with the key", raw{method: "GET", path: "/info", hdr: map[string]string{"Origin": "http://evil.example", "X-Api-Key": "secret"}}, 403},
		{"a text/plain POST with the key", raw{method: "POST", path: "/threads", body: "{}", hdr: map[string]string{"Content-Type": "text/plain", "X-Api-Key": "secret"}}, 415},
	}
	for _, tt := range tests {
		if code, body, _ := f.send(tt.req); code != tt.want {
			t.Errorf("%s: %d %q, want %d", tt.name, code, body, tt.want)
		}
	}
}

// TestAccessOptions checks Config.AllowedOrigins and AllowedHosts: a
// configured list replaces the loopback defaults, "*" allows any origin,
// a named host is answered, and a pattern that is not an origin is an
// error of New.
func TestAccessOptions(t *testing.T) {
	f := newFixture(t, servertest.Options{Origins: []string{"https://ui.example.com", "http://localhost:5173"}, Hosts: []string{"agents.example.com:443"}})
	tests := []struct {
		origin, host string
		want         int
	}{
		{"https://ui.example.com", "", 200},
		{"https://ui.example.com:443", "", 200},
		{"http://ui.example.com", "", 403},
		{"http://localhost:5173", "", 200},
		{"http://localhost:3000", "", 403}, // the defaults are replaced
		{"", "agents.example.com", 200},
		{"", "AGENTS.example.com.:8443", 200},
		{"", "other.example.com", 403},
		{"https://agents.example.com", "agents.example.com", 200}, // its own origin
		{"", "10.1.2.3:2024", 200},
		{"", "[fe80::1]:2024", 200},
	}
	for _, tt := range tests {
		hdr := map[string]string{}
		if tt.origin != "" {
			hdr["Origin"] = tt.origin
		}
		if code, body, _ := f.send(raw{method: "GET", path: "/info", host: tt.host, hdr: hdr}); code != tt.want {
			t.Errorf("Origin %q Host %q: %d %s, want %d", tt.origin, tt.host, code, body, tt.want)
		}
	}
	anyOrigin := newFixture(t, servertest.Options{Origins: []string{"*"}, Hosts: []string{"*"}})
	if code, _, h := anyOrigin.send(raw{method: "GET", path: "/info", host: "whatever.example", hdr: map[string]string{"Origin": "http://evil.example"}}); code != 200 || h.Get("Access-Control-Allow-Origin") != "http://evil.example" {
		t.Errorf(`"*": %d %v`, code, h)
	}
	for _, bad := range []string{"localhost:3000", "ftp://x", "http://", "http://a/path", "http://*.example.com", "http://a:b", "http://a:"} {
		a, err := deepagents.New(deepagents.Config{Model: &countingModel{}, Checkpointer: f.Saver})
		if err != nil {
			t.Fatal(err)
		}
		_, err = server.New(server.Config{Assistants: []server.Assistant{{GraphID: "a", Agent: a}}, Saver: f.Saver, AllowedOrigins: []string{bad}})
		if !errors.Is(err, server.ErrAccess) {
			t.Errorf("AllowedOrigins %q: %v", bad, err)
		}
	}
}

// TestProtectedValues checks that the values Config.ProtectedValues
// names are never written through the API: not by a state update, not by
// a run's input; that the agent's private values are refused there too;
// and that other values still are written. Before, POST
// /threads/ID/state {"values": {"cli_settings": {"sandbox": "none"}}} was
// accepted, and the CLI ran the thread unsandboxed next time.
func TestProtectedValues(t *testing.T) {
	m := &countingModel{}
	f := newFixture(t, servertest.Options{Model: m, Protected: []string{"cli_settings"}})
	f.JSON(http.MethodPost, "/threads", map[string]any{"thread_id": "t1"}, http.StatusOK, nil)
	settings := map[string]any{"sandbox": "none", "interrupt_on": []string{}}
	for _, tt := range []struct {
		path string
		body map[string]any
	}{
		{"/threads/t1/state", map[string]any{"values": map[string]any{"cli_settings": settings}}},
		{"/threads/t1/state", map[string]any{"values": map[string]any{"files": map[string]any{"/a": "x"}, "cli_settings": settings}}},
		{"/threads/t1/runs/wait", map[string]any{"assistant_id": "deepagent", "input": map[string]any{"messages": []any{servertest.Human("hi")}, "cli_settings": settings}}},
		{"/runs/wait", map[string]any{"assistant_id": "deepagent", "input": map[string]any{"cli_settings": settings}}},
	} {
		code, body, _ := f.Do(http.MethodPost, tt.path, tt.body)
		if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), "cli_settings is protected") {
			t.Errorf("POST %s %v: %d %s, want 422 naming the value", tt.path, tt.body, code, body)
		}
	}
	if n := m.Calls.Load(); n != 0 {
		t.Errorf("a refused run ran (%d model calls)", n)
	}
	th, err := f.Saver.Thread(context.Background(), "t1")
	if err != nil || th.Head != "" {
		t.Errorf("t1 was written: %+v %v", th, err)
	}
	f.JSON(http.MethodPost, "/threads/t1/state", map[string]any{"values": map[string]any{"files": map[string]any{"/a": "x"}, "topic": "ok"}}, http.StatusOK, nil)
	var st map[string]any
	f.JSON(http.MethodGet, "/threads/t1/state", nil, http.StatusOK, &st)
	if v := st["values"].(map[string]any); v["topic"] != "ok" || v["files"].(map[string]any)["/a"] == nil {
		t.Errorf("state %v", v)
	}
}

// FuzzAccess sends arbitrary Origin, Host and Content-Type headers through
// Protect: it never panics, and what it lets through has an allowed Host
// and Origin and, when it has a body, a JSON content type.
func FuzzAccess(f *testing.F) {
	f.Add("POST", "http://localhost:3000", "127.0.0.1:2024", "application/json", "{}")
	f.Add("GET", "http://evil.example", "evil.example:2024", "", "")
	f.Add("POST", "null", "[::1]:80", "text/plain", "x")
	f.Add("OPTIONS", "http://[::1]:3000", "localhost", "", "")
	f.Add("POST", "HTTP://LOCALHOST:1", "LOCALHOST.", "Application/JSON; charset=utf-8", "{}")
	f.Fuzz(func(t *testing.T, method, origin, host, ct, body string) {
		passed := false
		h, err := server.Protect(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { passed = true }), server.Access{})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodGet, "/threads", strings.NewReader(body))
		req.Method, req.Host = method, host
		req.ContentLength = int64(len(body))
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
		if !passed {
			return
		}
		name := strings.ToLower(host)
		if i := strings.LastIndex(name, ":"); i >= 0 && !strings.HasSuffix(name, "]") {
			name = name[:i]
		}
		name = strings.TrimSuffix(strings.Trim(name, "[]"), ".")
		if name != "" && name != "localhost" && !strings.ContainsAny(name, ".:") {
			t.Errorf("Host %q let through", host)
		}
		if o := strings.ToLower(origin); o != "" && !strings.HasPrefix(o, "http://localhost:") && !strings.HasPrefix(o, "http://127.0.0.1:") && !strings.HasPrefix(o, "http://[::1]:") && !strings.Contains(o, name) {
			t.Errorf("Origin %q (Host %q) let through", origin, host)
		}
		if (method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE") && (body != "" || ct != "") && !strings.Contains(strings.ToLower(ct), "json") {
			t.Errorf("%s with Content-Type %q and body %q let through", method, ct, body)
		}
	})
}
