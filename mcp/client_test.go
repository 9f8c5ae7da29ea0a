package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepagents-go/deepagents/tool"
)

// npmServer returns the path of an MCP server installed by
// `cd mcp/testdata/npm && npm ci` (which .ci/run does), skipping the test
// without it, except in CI.
func npmServer(t *testing.T, bin string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "npm", "node_modules", ".bin", bin))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing in CI: %v", bin, err)
		}
		t.Skipf("needs the npm MCP servers: cd mcp/testdata/npm && npm ci")
	}
	return p
}

// connect connects configs and closes them when the test ends.
func connect(t *testing.T, configs map[string]ServerConfig, opts Options) *Servers {
	t.Helper()
	s, err := Connect(context.Background(), configs, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// toolNamed returns the tool with the given name.
func toolNamed(t *testing.T, s *Servers, name string) tool.Tool {
	t.Helper()
	for _, tl := range s.Tools() {
		if tl.Spec().Name == name {
			return tl
		}
	}
	var names []string
	for _, tl := range s.Tools() {
		names = append(names, tl.Spec().Name)
	}
	t.Fatalf("no tool %s among %v (status %+v)", name, names, s.Status())
	return nil
}

// call calls a tool through tool.ResultCaller, as the agent does.
func call(t *testing.T, tl tool.Tool, args string) tool.Result {
	t.Helper()
	rc, ok := tl.(tool.ResultCaller)
	if !ok {
		text, err := tl.Call(context.Background(), json.RawMessage(args))
		if err != nil {
			return tool.Result{Text: err.Error(), IsError: true}
		}
		return tool.Result{Text: text}
	}
	r, err := rc.CallResult(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s(%s): %v", tl.Spec().Name, args, err)
	}
	return r
}

func TestEverythingServer(t *testing.T) {
	t.Setenv("DEEPAGENTS_SECRET_FOR_TEST", "must-not-leak")
	s := connect(t, map[string]ServerConfig{
		"everything": {Command: npmServer(t, "mcp-server-everything"), Env: map[string]string{"FROM_CONFIG": "passed-on"}},
	}, Options{})
	if st := s.Status(); len(st) != 1 || st[0].Err != nil || !st[0].Resources || !st[0].Prompts {
		t.Fatalf("status %+v", st)
	}

	// The server's schema reaches the model as it is.
	sum := toolNamed(t, s, "mcp__everything__get-sum")
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(sum.Spec().Parameters, &schema); err != nil || schema.Type != "object" || schema.Properties["a"] == nil || schema.Properties["b"] == nil {
		t.Fatalf("get-sum schema %s (%v)", sum.Spec().Parameters, err)
	}
	if r := call(t, sum, `{"a": 2, "b": 40}`); r.IsError || !strings.Contains(r.Text, "42") {
		t.Errorf("get-sum: %+v", r)
	}
	if r := call(t, toolNamed(t, s, "mcp__everything__echo"), `{"message": "hello there"}`); r.IsError || !strings.Contains(r.Text, "hello there") {
		t.Errorf("echo: %+v", r)
	}

	// An image reaches the model as an image.
	r := call(t, toolNamed(t, s, "mcp__everything__get-tiny-image"), `{}`)
	if len(r.Parts) != 1 || r.Parts[0].MIMEType != "image/png" || !bytes.HasPrefix(r.Parts[0].Data, []byte("\x89PNG")) {
		t.Errorf("get-tiny-image: text %q, parts %d", r.Text, len(r.Parts))
	}
	if !strings.Contains(r.Text, "image 1: image/png") {
		t.Errorf("get-tiny-image text %q does not mention the image", r.Text)
	}

	// The server's environment holds its entry's variables and none of
	// ours but the few it needs.
	env := call(t, toolNamed(t, s, "mcp__everything__get-env"), `{}`).Text
	if !strings.Contains(env, "passed-on") || strings.Contains(env, "must-not-leak") || !strings.Contains(env, `"PATH"`) {
		t.Errorf("the server's environment:\n%s", env)
	}

	// Structured content and embedded resources.
	if r := call(t, toolNamed(t, s, "mcp__everything__get-structured-content"), `{"location": "Chicago"}`); r.IsError || !strings.Contains(r.Text, "temperature") {
		t.Errorf("get-structured-content: %+v", r)
	}
	if r := call(t, toolNamed(t, s, "mcp__everything__get-resource-reference"), `{"resourceType": "Text", "resourceId": 1}`); r.IsError || !strings.Contains(r.Text, "[resource ") {
		t.Errorf("get-resource-reference: %+v", r)
	}

	// Resources and prompts are listed; a resource can be read.
	list := call(t, toolNamed(t, s, ListResourcesTool), `{}`)
	if list.IsError || !strings.Contains(list.Text, "everything: ") {
		t.Fatalf("list_mcp_resources: %+v", list)
	}
	uri := strings.Fields(strings.SplitN(list.Text, "\n", 2)[0])[1]
	if r := call(t, toolNamed(t, s, ReadResourceTool), `{"server": "everything", "uri": "`+uri+`"}`); r.IsError || r.Text == "" {
		t.Errorf("read_mcp_resource %s: %+v", uri, r)
	}
	if r := call(t, toolNamed(t, s, ReadResourceTool), `{"server": "nope", "uri": "x"}`); !r.IsError {
		t.Errorf("reading from an unknown server: %+v", r)
	}
	prompts, err := s.Prompts(context.Background())
	if err != nil || len(prompts) == 0 {
		t.Fatalf("prompts: %v %v", prompts, err)
	}
	msgs, err := s.GetPrompt(context.Background(), "everything", prompts[0].Name, map[string]string{})
	if err != nil && !strings.Contains(err.Error(), "argument") {
		t.Errorf("GetPrompt %s: %v", prompts[0].Name, err)
	}
	_ = msgs
}

func TestServerKilledMidCall(t *testing.T) {
	s := connect(t, map[string]ServerConfig{"everything": {Command: npmServer(t, "mcp-server-everything")}}, Options{})
	srv, _ := s.server("everything")
	long := toolNamed(t, s, "mcp__everything__trigger-long-running-operation")
	done := make(chan tool.Result)
	go func() { done <- call(t, long, `{"duration": 60, "steps": 60}`) }()
	time.Sleep(500 * time.Millisecond)
	srv.mu.Lock()
	proc := srv.proc.cmd.Process
	srv.mu.Unlock()
	_ = proc.Kill()
	select {
	case r := <-done:
		if !r.IsError || !strings.Contains(r.Text, "stopped during the call") {
			t.Fatalf("the interrupted call: %+v", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call did not end when its server was killed")
	}
	// The next call starts the server again.
	if r := call(t, toolNamed(t, s, "mcp__everything__echo"), `{"message": "again"}`); r.IsError || !strings.Contains(r.Text, "again") {
		t.Fatalf("after the restart: %+v", r)
	}
}

func TestFilesystemServer(t *testing.T) {
	allowed, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(allowed, "notes.txt"), []byte("inside the allowed folder"), 0o600)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("outside"), 0o600)
	png := []byte("\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 16))
	os.WriteFile(filepath.Join(allowed, "pixel.png"), png, 0o600)
	s := connect(t, map[string]ServerConfig{"fs": {Command: npmServer(t, "mcp-server-filesystem"), Args: []string{allowed}}}, Options{})
	read := toolNamed(t, s, "mcp__fs__read_text_file")
	if r := call(t, read, `{"path": "`+filepath.Join(allowed, "notes.txt")+`"}`); r.IsError || !strings.Contains(r.Text, "inside the allowed folder") {
		t.Errorf("reading inside: %+v", r)
	}
	// The server refuses: an error result, which the model sees as one.
	if r := call(t, read, `{"path": "`+filepath.Join(outside, "secret.txt")+`"}`); !r.IsError || strings.Contains(r.Text, "outside\n") {
		t.Errorf("reading outside the allowed folder: %+v", r)
	}
	if _, err := read.Call(context.Background(), json.RawMessage(`{"path": "`+filepath.Join(outside, "secret.txt")+`"}`)); err == nil {
		t.Error("Call: an error result is not an error")
	}
	if r := call(t, toolNamed(t, s, "mcp__fs__read_media_file"), `{"path": "`+filepath.Join(allowed, "pixel.png")+`"}`); r.IsError || len(r.Parts) != 1 || !bytes.Equal(r.Parts[0].Data, png) {
		t.Errorf("read_media_file: %+v", r)
	}
}

func TestHostileServers(t *testing.T) {
	spawned := filepath.Join(t.TempDir(), "child.pid")
	hang, garbage, exit, spawn := fake(t, "tools"), fake(t, "tools"), fake(t, "tools"), fake(t, "spawn")
	hang.Timeout = 500
	spawn.Env["CHILD_PID_FILE"] = spawned
	start := time.Now()
	s := connect(t, map[string]ServerConfig{
		"silent":   fake(t, "silent"),
		"missing":  {Command: "/nonexistent/mcp-server"},
		"hang":     hang,
		"garbage":  garbage,
		"exit":     exit,
		"spawn":    spawn,
		"refusing": {URL: "http://127.0.0.1:1/mcp"},
	}, Options{ConnectTimeout: 2 * time.Second, MaxRestarts: 2})
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Connect took %s with a silent server", d)
	}
	status := map[string]Status{}
	for _, st := range s.Status() {
		status[st.Name] = st
	}
	for _, name := range []string{"silent", "missing", "refusing"} {
		if st := status[name]; st.Err == nil || len(st.Tools) != 0 {
			t.Errorf("%s: %+v, want a start error", name, st)
		}
	}
	if err := status["silent"].Err; err == nil || !strings.Contains(err.Error(), "no answer within 2s") {
		t.Errorf("silent server: %v", err)
	}
	if got := s.Failed(); len(got) != 3 {
		t.Errorf("Failed() = %v", got)
	}

	// A call that is never answered ends at its timeout; the server,
	// which still answers pings, keeps running.
	r := call(t, toolNamed(t, s, "mcp__hang__hang"), `{}`)
	if !r.IsError || !strings.Contains(r.Text, "did not answer hang within 500ms") {
		t.Errorf("hang: %+v", r)
	}
	if r := call(t, toolNamed(t, s, "mcp__hang__ok"), `{"x": 1}`); r.IsError || r.Text != `fine: {"x":1}` {
		t.Errorf("after a hung call: %+v", r)
	}

	// Garbage on the wire ends the session; the next call starts anew.
	if r := call(t, toolNamed(t, s, "mcp__garbage__garbage"), `{}`); !r.IsError {
		t.Errorf("garbage: %+v", r)
	}
	if r := call(t, toolNamed(t, s, "mcp__garbage__ok"), `{}`); r.IsError {
		t.Errorf("after garbage: %+v", r)
	}

	// A crash is an error result that says what the server last said; it
	// is started again until MaxRestarts is used up.
	for i := range 3 {
		r := call(t, toolNamed(t, s, "mcp__exit__exit"), `{}`)
		if !r.IsError || !strings.Contains(r.Text, "stopped during the call") || !strings.Contains(r.Text, "fatal: the fake server exits") {
			t.Errorf("exit %d: %+v", i, r)
		}
	}
	if r := call(t, toolNamed(t, s, "mcp__exit__ok"), `{}`); !r.IsError || !strings.Contains(r.Text, "started again 2 times already") {
		t.Errorf("past MaxRestarts: %+v", r)
	}

	// Arguments that are not an object never reach the server.
	if r := call(t, toolNamed(t, s, "mcp__hang__ok"), `[1]`); !r.IsError || !strings.Contains(r.Text, "must be a JSON object") {
		t.Errorf("array arguments: %+v", r)
	}
	// An error result.
	if r := call(t, toolNamed(t, s, "mcp__hang__fail"), `{}`); !r.IsError || !strings.Contains(r.Text, "it went wrong") {
		t.Errorf("fail: %+v", r)
	}

	// Close ends every server and whatever it started.
	if _, err := os.ReadFile(spawned); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" && len(processesWith(childEnv+"="+spawned)) == 0 {
		t.Fatal("the server's child is not found")
	}
	s.Close()
	waitNone(t, 5*time.Second, childEnv+"="+spawned)
	if r := call(t, toolNamed(t, s, "mcp__hang__ok"), `{}`); !r.IsError || !errors.Is(ErrUnavailable, ErrUnavailable) {
		t.Errorf("after Close: %+v", r)
	}
}

func TestRemoteServers(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "whoami", Description: "says who asks", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "remote answer"}}}, nil
		})
	var auth []string
	var mu sync.Mutex
	check := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			auth = append(auth, r.Header.Get("Authorization"))
			mu.Unlock()
			if r.Header.Get("Authorization") != "Bearer s3cret" {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	// Closed after the client (cleanups run last first), which holds a
	// stream open.
	streamable := httptest.NewServer(check(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)))
	t.Cleanup(streamable.Close)
	sse := httptest.NewServer(check(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)))
	t.Cleanup(sse.Close)
	t.Setenv("REMOTE_TOKEN", "s3cret")
	configs, err := Parse([]byte(`{"mcpServers": {
		"streamable": {"url": "`+streamable.URL+`", "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"}},
		"sse": {"type": "sse", "url": "`+sse.URL+`", "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"}},
		"nokey": {"type": "http", "url": "`+streamable.URL+`"}
	}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := connect(t, configs, Options{ConnectTimeout: 5 * time.Second})
	for _, name := range []string{"streamable", "sse"} {
		if r := call(t, toolNamed(t, s, "mcp__"+name+"__whoami"), `{}`); r.IsError || r.Text != "remote answer" {
			t.Errorf("%s: %+v", name, r)
		}
	}
	if st := s.Status(); st[0].Name != "nokey" || st[0].Err == nil {
		t.Errorf("a server that refuses us: %+v", st[0])
	}
}

// Tools whose names become the same once sanitized are all offered: the
// one named exactly keeps its name, whatever the order they are listed
// in, and the other is renamed, with a note.
func TestCollidingToolNames(t *testing.T) {
	s := connect(t, map[string]ServerConfig{"f": fake(t, "tools")}, Options{})
	if got := call(t, toolNamed(t, s, "mcp__f__a_b"), `{}`); got.Text != "I am a_b" {
		t.Errorf("mcp__f__a_b reaches %q", got.Text)
	}
	if got := call(t, toolNamed(t, s, "mcp__f__x_y"), `{}`); got.Text != "I am x.y" {
		t.Errorf("mcp__f__x_y reaches %q", got.Text)
	}
	renamed := withHash("mcp__f__a_b", "a.b")
	if got := call(t, toolNamed(t, s, renamed), `{}`); got.Text != "I am a.b" {
		t.Errorf("%s reaches %q", renamed, got.Text)
	}
	st := s.Status()[0]
	if len(st.Notes) != 1 || !strings.Contains(st.Notes[0], "renamed") || !strings.Contains(st.Notes[0], renamed) {
		t.Errorf("notes: %q", st.Notes)
	}
}

// taskRequired makes the server's tool named name say that it runs only
// as a task (execution.taskSupport "required"), which the Go SDK's server
// cannot say, in what the handler writes.
func taskRequired(h http.Handler, name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(rewriter{w, []byte(`"name":"` + name + `"`)}, r)
	})
}

type rewriter struct {
	http.ResponseWriter
	name []byte
}

func (w rewriter) Write(p []byte) (int, error) {
	q := bytes.ReplaceAll(p, w.name, append([]byte(`"execution":{"taskSupport":"required"},`), w.name...))
	if _, err := w.ResponseWriter.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w rewriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// A tool that runs only as a task (which this client does not do) is not
// offered, over each transport, with a note; the server's others are.
func TestTaskOnlyToolsLeftOut(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1"}, nil)
	for _, name := range []string{"plain", "tasky"} {
		srv.AddTool(&sdk.Tool{Name: name, Description: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name}}}, nil
			})
	}
	streamable := httptest.NewServer(taskRequired(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil), "tasky"))
	t.Cleanup(streamable.Close)
	jsonBody := httptest.NewServer(taskRequired(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{JSONResponse: true}), "tasky"))
	t.Cleanup(jsonBody.Close)
	sse := httptest.NewServer(taskRequired(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil), "tasky"))
	t.Cleanup(sse.Close)
	configs := map[string]ServerConfig{
		"streamable": {URL: streamable.URL},
		"json":       {URL: jsonBody.URL},
		"sse":        {Type: TypeSSE, URL: sse.URL},
	}
	stdio := false
	if bin, err := filepath.Abs("testdata/npm/node_modules/.bin/mcp-server-everything"); err == nil {
		if _, err := os.Stat(bin); err == nil {
			// Its simulate-research-query requires tasks.
			configs["everything"] = ServerConfig{Command: bin}
			stdio = true
		}
	}
	if !stdio && os.Getenv("CI") != "" {
		t.Fatal("mcp-server-everything is missing in CI")
	}
	s := connect(t, configs, Options{ConnectTimeout: 10 * time.Second})
	for _, st := range s.Status() {
		if st.Err != nil {
			t.Errorf("%s: %v", st.Name, st.Err)
			continue
		}
		left := "tasky"
		if st.Name == "everything" {
			left = "simulate-research-query"
		}
		if slices.Contains(st.Tools, "mcp__"+st.Name+"__"+left) {
			t.Errorf("%s offers %s, which runs only as a task: %v", st.Name, left, st.Tools)
		}
		if len(st.Notes) != 1 || !strings.Contains(st.Notes[0], "tool="+left) || !strings.Contains(st.Notes[0], "only as a task") {
			t.Errorf("%s: notes %q", st.Name, st.Notes)
		}
	}
	for _, name := range []string{"streamable", "json", "sse"} {
		if r := call(t, toolNamed(t, s, "mcp__"+name+"__plain"), `{}`); r.IsError || r.Text != "plain" {
			t.Errorf("%s: %+v", name, r)
		}
	}
	if stdio {
		toolNamed(t, s, "mcp__everything__echo")
	}
}
