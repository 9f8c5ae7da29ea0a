package cli

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// request does a request with headers and returns the status, body and
// headers of the answer.
func request(t *testing.T, method, url, body string, hdr ...string) (int, string, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}

// TestServeNeedsAKeyBeyondLoopback: serve and mcp-serve --http refuse to
// listen beyond loopback without a key (exit 2), unless
// --insecure-no-auth, which they warn about; a key from
// DEEPAGENTS_API_KEY is enough, and GET /ok answers without it. Access
// flags are usage errors where they mean nothing (mcp-serve over stdio)
// or cannot be read. Before, serve --addr 0.0.0.0:PORT started with no
// key and no warning, and mcp-serve had no key option.
func TestServeNeedsAKeyBeyondLoopback(t *testing.T) {
	w := newWorld(t)
	model := "replay:" + w.script(`{"turns":[]}`)
	for _, args := range [][]string{
		{"serve", "--db", w.db, "--model", model, "--addr", "0.0.0.0:0"},
		{"serve", "--db", w.db, "--model", model, "--addr", ":0"},
		{"mcp-serve", "--db", w.db, "--model", model, "--http", "0.0.0.0:0"},
	} {
		code, _, stderr := w.runFor(30*time.Second, args...)
		if code != ExitUsage || !strings.Contains(stderr, "--api-key") || !strings.Contains(stderr, "--insecure-no-auth") {
			t.Errorf("%v: %d %s", args, code, stderr)
		}
	}
	for _, args := range [][]string{
		{"mcp-serve", "--db", w.db, "--model", model, "--api-key", "k"},
		{"serve", "--db", w.db, "--model", model, "--addr", "127.0.0.1:0", "--allow-origin", "localhost:3000"},
		{"mcp-serve", "--db", w.db, "--model", model, "--http", "127.0.0.1:0", "--allow-origin", "ftp://x"},
	} {
		if code, _, stderr := w.runFor(30*time.Second, args...); code != ExitUsage {
			t.Errorf("%v: %d %s", args, code, stderr)
		}
	}

	p := w.startListeningWith(nil, "server stopped", "serve", "--db", w.db, "--model", model, "--addr", "0.0.0.0:0", "--insecure-no-auth")
	if !strings.Contains(p.before, "warning") || !strings.Contains(p.before, "without a key") {
		t.Errorf("--insecure-no-auth: no warning in %q", p.before)
	}
	url := loopbackURL(t, p.url)
	if code, body, _ := request(t, "POST", url+"/threads", "{}", "Content-Type", "application/json"); code != http.StatusOK {
		t.Errorf("--insecure-no-auth: %d %s", code, body)
	}

	p = w.startListeningWith([]string{"DEEPAGENTS_API_KEY=s3cret"}, "server stopped", "serve", "--db", w.db, "--model", model, "--addr", "0.0.0.0:0")
	if p.before != "" && strings.Contains(p.before, "warning") {
		t.Errorf("a warning with a key: %q", p.before)
	}
	url = loopbackURL(t, p.url)
	for _, tt := range []struct {
		path string
		hdr  []string
		want int
	}{
		{"/ok", nil, 200},
		{"/info", nil, 401},
		{"/info", []string{"X-Api-Key", "s3cret"}, 200},
		{"/info", []string{"Authorization", "Bearer s3cret"}, 200},
	} {
		if code, body, _ := request(t, "GET", url+tt.path, "", tt.hdr...); code != tt.want {
			t.Errorf("GET %s %v: %d %s, want %d", tt.path, tt.hdr, code, body, tt.want)
		}
	}
}

// runFor runs the binary for at most d: a server that starts where it
// should have refused to is stopped, and reported as exit status -1.
func (w *world) runFor(d time.Duration, args ...string) (int, string, string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(w.t), args...)
	cmd.Env = w.env()
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		return -1, out.String(), "still running after " + d.String() + ": " + errb.String()
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// loopbackURL is the URL of a server listening on every address, by
// 127.0.0.1.
func loopbackURL(t *testing.T, u string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(strings.TrimPrefix(u, "http://"))
	if err != nil {
		t.Fatalf("%s: %v", u, err)
	}
	return "http://127.0.0.1:" + port
}

// TestServeOrigins checks serve's browser rules: the Deep Agents UI's
// origin is answered with CORS headers, another page's request is refused
// before it runs, --allow-origin replaces the defaults, and a name not
// listened on is refused as the Host unless --allow-host names it.
func TestServeOrigins(t *testing.T) {
	w := newWorld(t)
	p := w.startServer("--model", "replay:inline")
	run := `{"assistant_id":"deepagent","input":{"messages":[{"type":"human","content":"{\"turns\":[{\"content\":\"ran\"}]}"}]},"on_completion":"keep"}`
	code, body, h := request(t, "OPTIONS", p.url+"/runs/wait", "", "Origin", "http://localhost:3000", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type,x-api-key")
	if code != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "http://localhost:3000" {
		t.Errorf("the UI's preflight: %d %s %v", code, body, h)
	}
	code, body, h = request(t, "POST", p.url+"/runs/wait", run, "Origin", "http://localhost:3000", "Content-Type", "application/json", "X-Api-Key", "")
	if code != http.StatusOK || !strings.Contains(body, "ran") || h.Get("Access-Control-Allow-Origin") != "http://localhost:3000" {
		t.Errorf("the UI's run: %d %s %v", code, body, h)
	}
	for _, hdr := range [][]string{
		{"Origin", "http://evil.example", "Content-Type", "text/plain"},
		{"Origin", "http://evil.example", "Content-Type", "application/json"},
	} {
		if code, body, h := request(t, "POST", p.url+"/runs/wait", run, hdr...); code != http.StatusForbidden || h.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%v: %d %s %v", hdr, code, body, h)
		}
	}
	if code, body, _ := request(t, "POST", p.url+"/threads/search", "{}", "Content-Type", "text/plain"); code != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: %d %s", code, body)
	}
	req, _ := http.NewRequest("GET", p.url+"/threads/search", nil)
	req.Host = "evil.example"
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("Host evil.example: %v %v", res, err)
	} else {
		res.Body.Close()
	}

	q := w.startServer("--model", "replay:inline", "--allow-origin", "https://ui.example.com", "--allow-host", "agents.example.com")
	if code, _, _ := request(t, "GET", q.url+"/info", "", "Origin", "https://ui.example.com"); code != http.StatusOK {
		t.Errorf("--allow-origin: %d", code)
	}
	if code, _, _ := request(t, "GET", q.url+"/info", "", "Origin", "http://localhost:3000"); code != http.StatusForbidden {
		t.Errorf("--allow-origin replaces the defaults: %d", code)
	}
	req, _ = http.NewRequest("GET", q.url+"/info", nil)
	req.Host = "agents.example.com"
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("--allow-host: %v %v", res, err)
	} else {
		res.Body.Close()
	}
}

// TestServeProtectsThreadSettings: a thread run by `deepagents run` keeps
// how it was run (its cli_settings: sandbox, approvals, rules,
// workspace); the server refuses to write them (422), so a client cannot
// make the next `deepagents run --thread` run unsandboxed without
// approvals. Before, the write was accepted and adopted.
func TestServeProtectsThreadSettings(t *testing.T) {
	w := newWorld(t)
	code, _, stderr := w.run(w.runArgs(w.script(`{"turns":[{"content":"hi"}]}`), "--thread", "t1", "--shell", "--interrupt-on", "execute", "hi")...)
	if code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	p := w.startServer("--model", "replay:inline")
	for _, body := range []string{
		`{"values":{"cli_settings":{"dir":"/","shell":true,"sandbox":"none","interrupt_on":[],"rules":{}}}}`,
		`{"values":{"files":{"/a":"x"},"cli_settings":{"sandbox":"none"}}}`,
	} {
		code, out, _ := request(t, "POST", p.url+"/threads/t1/state", body, "Content-Type", "application/json")
		if code != http.StatusUnprocessableEntity || !strings.Contains(out, "cli_settings") {
			t.Errorf("POST /threads/t1/state %s: %d %s", body, code, out)
		}
	}
	// Nor the permission mode, which the next deepagents run --thread
	// adopts too: auto would run its commands without asking.
	for _, body := range []string{`{"values":{"permission_mode":"auto"}}`} {
		code, out, _ := request(t, "POST", p.url+"/threads/t1/state", body, "Content-Type", "application/json")
		if code != http.StatusUnprocessableEntity || !strings.Contains(out, "permission_mode is protected") {
			t.Errorf("POST /threads/t1/state %s: %d %s", body, code, out)
		}
	}
	for _, input := range []string{`"cli_settings":{"sandbox":"none"}`, `"permission_mode":"auto"`} {
		code, out, _ := request(t, "POST", p.url+"/threads/t1/runs/wait", `{"assistant_id":"deepagent","input":{"messages":[],`+input+`}}`, "Content-Type", "application/json")
		if code != http.StatusUnprocessableEntity {
			t.Errorf("a run's input %s: %d %s", input, code, out)
		}
	}
	var st struct {
		Values map[string]json.RawMessage `json:"values"`
	}
	code, out, _ := request(t, "GET", p.url+"/threads/t1/state", "")
	if json.Unmarshal([]byte(out), &st); code != http.StatusOK || !strings.Contains(string(st.Values["cli_settings"]), `"sandbox":"bwrap"`) || !strings.Contains(string(st.Values["cli_settings"]), `"execute"`) {
		t.Errorf("the thread's settings: %d %s", code, st.Values["cli_settings"])
	}
	if mode := string(st.Values["permission_mode"]); mode == `"auto"` {
		t.Errorf("the thread's mode: %s", mode)
	}
}

// TestMCPServeHTTPAccess: mcp-serve --http with --api-key refuses a
// client without the key and serves one with it (X-Api-Key or a bearer
// token, as MCP hosts send headers); a page of another origin and a body
// that is not JSON are refused; GET /ok is open.
func TestMCPServeHTTPAccess(t *testing.T) {
	w := newWorld(t)
	p := w.startListening("MCP server stopped", "mcp-serve", "--db", w.db, "--model", "replay:inline", "--http", "127.0.0.1:0", "--api-key", "k3y")
	ctx := context.Background()
	connect := func(hdr ...string) (*sdk.ClientSession, error) {
		client := sdk.NewClient(&sdk.Implementation{Name: "test-host", Version: "1"}, nil)
		hc := &http.Client{Transport: headerTransport{hdr}}
		return client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: p.url + "/mcp", HTTPClient: hc}, nil)
	}
	if sess, err := connect(); err == nil {
		sess.Close()
		t.Error("a client without the key connected")
	}
	for _, hdr := range [][]string{{"X-Api-Key", "k3y"}, {"Authorization", "Bearer k3y"}} {
		sess, err := connect(hdr...)
		if err != nil {
			t.Fatalf("%v: %v", hdr, err)
		}
		res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "run_task", Arguments: map[string]any{"task": `{"turns":[{"content":"With a key."}]}`}})
		if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "With a key.") {
			t.Errorf("%v: run_task: %v %+v", hdr, err, res)
		}
		sess.Close()
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tt := range []struct {
		hdr  []string
		want int
	}{
		{[]string{"Origin", "http://evil.example", "X-Api-Key", "k3y", "Content-Type", "application/json", "Accept", "application/json, text/event-stream"}, 403},
		{[]string{"X-Api-Key", "k3y", "Content-Type", "text/plain", "Accept", "application/json, text/event-stream"}, 415},
		{[]string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}, 401},
	} {
		if code, body, _ := request(t, "POST", p.url+"/mcp", init, tt.hdr...); code != tt.want {
			t.Errorf("%v: %d %s, want %d", tt.hdr, code, body, tt.want)
		}
	}
	if code, body, _ := request(t, "GET", p.url+"/ok", ""); code != http.StatusOK {
		t.Errorf("/ok: %d %s", code, body)
	}
}

// headerTransport adds headers to every request.
type headerTransport struct{ kv []string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for i := 0; i+1 < len(h.kv); i += 2 {
		r.Header.Set(h.kv[i], h.kv[i+1])
	}
	return http.DefaultTransport.RoundTrip(r)
}
