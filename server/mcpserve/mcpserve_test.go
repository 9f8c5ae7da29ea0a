package mcpserve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
)

// protocolVersions are the MCP versions the tests speak: the Go SDK's
// latest, sessionless one (server/discover, no initialize), and the one
// the TypeScript SDK 1.32.2 and most hosts send.
var protocolVersions = []string{"2026-07-28", "2025-11-25"}

// headerTransport adds headers to every request (the API key).
type headerTransport struct {
	base http.RoundTripper
	hdr  http.Header
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.hdr {
		r.Header[k] = v
	}
	return h.base.RoundTrip(r)
}

// mcpClient is an MCP host's session with the server's /mcp, and the
// progress notifications it received.
type mcpClient struct {
	*sdk.ClientSession
	mu       sync.Mutex
	progress []string
}

func (c *mcpClient) progressMessages() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.progress)
}

// connectMCP connects the Go SDK's client to f's /mcp with a protocol
// version, sending hdr with every request.
func connectMCP(t *testing.T, f *fixture, version string, hdr http.Header) (*mcpClient, error) {
	t.Helper()
	c := &mcpClient{}
	client := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress = append(c.progress, r.Params.Message)
			c.mu.Unlock()
		},
	})
	tr := &sdk.StreamableClientTransport{
		Endpoint:   f.Srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: headerTransport{base: f.Srv.Client().Transport, hdr: hdr}},
		MaxRetries: -1,
	}
	cs, err := client.Connect(context.Background(), tr, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { cs.Close() })
	c.ClientSession = cs
	return c, nil
}

func mustConnectMCP(t *testing.T, f *fixture, version string) *mcpClient {
	t.Helper()
	c, err := connectMCP(t, f, version, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// script is a replay.Inline script: a task whose turns the model plays.
func script(turns ...map[string]any) string {
	b, _ := json.Marshal(map[string]any{"turns": turns})
	return string(b)
}

// taskOutput is a tool's structured result as a host reads it.
type taskOutput struct {
	ThreadID string `json:"thread_id"`
	Status   string `json:"status"`
	Answer   string `json:"answer"`
	Pending  []struct {
		Tool string         `json:"tool"`
		Args map[string]any `json:"args"`
	} `json:"pending"`
}

// callTool calls an assistant's tool (with a progress token) and returns
// its result, its text and its structured output.
func callTool(ctx context.Context, t *testing.T, c *mcpClient, tool string, args map[string]any) (*sdk.CallToolResult, string, taskOutput) {
	t.Helper()
	p := &sdk.CallToolParams{Name: tool, Arguments: args}
	p.SetProgressToken("progress-1")
	res, err := c.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("call %s %v: %v", tool, args, err)
	}
	var text string
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*sdk.TextContent); ok {
			text = tc.Text
		}
	}
	var out taskOutput
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("structured content %s: %v", b, err)
		}
	}
	return res, text, out
}

// threadRuns lists a thread's runs through the LangGraph API.
func threadRuns(f *fixture, tid string) []map[string]any {
	var runs []map[string]any
	f.JSON(http.MethodGet, "/threads/"+tid+"/runs", nil, http.StatusOK, &runs)
	return runs
}

// runStatus is the status of the one run of a thread, "" while there is
// none (the thread is made when the run starts).
func runStatus(f *fixture, tid string) string {
	code, b, _ := f.Do(http.MethodGet, "/threads/"+tid+"/runs", nil)
	var runs []map[string]any
	if code != http.StatusOK || json.Unmarshal(b, &runs) != nil || len(runs) != 1 {
		return ""
	}
	status, _ := runs[0]["status"].(string)
	return status
}

// The tools are the assistants: the configured ones under their graph
// IDs, those clients created under their names, made valid tool names,
// a taken name given a suffix of the assistant's ID, at most 128, the
// same on every request.
func TestMCPListsAssistants(t *testing.T) {
	f := newFixture(t, servertest.Options{Model: replay.Inline{}, Graphs: []string{"deepagent", "a.b", "a_b"}})
	create := func(name, id string, desc any) {
		body := map[string]any{"graph_id": "deepagent", "name": name, "assistant_id": id}
		if desc != nil {
			body["description"] = desc
		}
		f.JSON(http.MethodPost, "/assistants", body, http.StatusOK, nil)
	}
	create("writer", "11111111-1111-4111-8111-111111111111", "Writes reports")
	time.Sleep(2 * time.Millisecond) // created_at orders the created ones
	create("deepagent", "22222222-2222-4222-8222-222222222222", nil)
	time.Sleep(2 * time.Millisecond)
	create("Rapport für 2024!", "not-a-uuid", nil)
	time.Sleep(2 * time.Millisecond)
	create(strings.Repeat("x", 70), "33333333-3333-4333-8333-333333333333", nil)
	time.Sleep(2 * time.Millisecond)
	create("writer", "44444444-4444-4444-8444-444444444444", nil)

	// The configured a.b and a_b both make a_b: the one named so keeps it.
	// not-a-uuid's suffix is a hash of it. (Hosts see the tools sorted by
	// name.)
	want := map[string]string{ // name: the description's start
		"deepagent":                           "the deepagent assistant",
		"a_b_" + assistantID(t, f, "a.b")[:8]: "the a.b assistant",
		"a_b":                                 "the a_b assistant",
		"writer":                              "Writes reports",
		"deepagent_22222222":                  "Hands a task to the deep agent deepagent",
		"Rapport_f_r_2024_":                   "Hands a task to the deep agent Rapport für 2024!",
		strings.Repeat("x", 64):               "Hands a task to the deep agent xxx",
		"writer_44444444":                     "Hands a task to the deep agent writer",
	}
	for _, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			c := mustConnectMCP(t, f, version)
			for range 2 { // the same names on every request
				res, err := c.ListTools(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]string{}
				for _, tl := range res.Tools {
					got[tl.Name] = tl.Description
					// run_task's contract: its arguments and its result.
					in, _ := json.Marshal(tl.InputSchema)
					out, _ := json.Marshal(tl.OutputSchema)
					for _, field := range []string{"task", "thread_id", "decision", "message"} {
						if !strings.Contains(string(in), `"`+field+`"`) {
							t.Errorf("%s: input schema %s lacks %s", tl.Name, in, field)
						}
					}
					for _, field := range []string{"thread_id", "status", "answer", "pending"} {
						if !strings.Contains(string(out), `"`+field+`"`) {
							t.Errorf("%s: output schema %s lacks %s", tl.Name, out, field)
						}
					}
				}
				if len(got) != len(want) {
					t.Errorf("tools %v, want %d", slices.Sorted(maps.Keys(got)), len(want))
				}
				for name, desc := range want {
					if !strings.HasPrefix(got[name], desc) {
						t.Errorf("tool %q: description %q, want %q...", name, got[name], desc)
					}
				}
			}
		})
	}

	// The list is bounded.
	for i := range 130 {
		create(fmt.Sprintf("more-%03d", i), "", nil)
	}
	c := mustConnectMCP(t, f, protocolVersions[0])
	res, err := c.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 128 {
		t.Errorf("%d tools, want the bound, 128", len(res.Tools))
	}
	var info struct {
		Flags map[string]bool `json:"flags"`
	}
	f.JSON(http.MethodGet, "/info", nil, http.StatusOK, &info)
	if !info.Flags["mcp"] {
		t.Errorf("/info flags %v", info.Flags)
	}
}

// assistantID is the ID of a configured assistant.
func assistantID(t *testing.T, f *fixture, graphID string) string {
	t.Helper()
	var a struct {
		AssistantID string `json:"assistant_id"`
	}
	f.JSON(http.MethodGet, "/assistants/"+graphID, nil, http.StatusOK, &a)
	return a.AssistantID
}

// A call runs a task to its answer on a new thread that is kept, with
// progress notifications on the way, as one of the server's runs (listed
// by the LangGraph API); thread_id continues the thread, or makes it.
func TestMCPRunsATask(t *testing.T) {
	for _, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			f := newFixture(t, servertest.Options{Model: replay.Inline{}})
			c := mustConnectMCP(t, f, version)
			task := script(
				map[string]any{"content": "Planning.", "tool_calls": []any{map[string]any{"name": "write_todos", "args": map[string]any{"todos": []any{map[string]any{"content": "Write", "status": "in_progress"}}}}}},
				map[string]any{"content": "Done."},
			)
			res, text, out := callTool(context.Background(), t, c, "deepagent", map[string]any{"task": task})
			if res.IsError || out.Status != "completed" || out.Answer != "Done." || out.ThreadID == "" || len(out.Pending) != 0 {
				t.Fatalf("result %q %+v", text, out)
			}
			if !strings.Contains(text, "Done.") || !strings.Contains(text, "[thread_id: "+out.ThreadID+"]") {
				t.Errorf("text %q", text)
			}
			// Notifications reach a client before the result; its SDK hands
			// them to the handler on a goroutine of its own.
			servertest.WaitFor(t, "the progress notifications", func() bool {
				got := c.progressMessages()
				return slices.Contains(got, "calling write_todos") && slices.Contains(got, "todos: 0 of 1 done")
			})
			runs := threadRuns(f, out.ThreadID)
			if len(runs) != 1 || runs[0]["status"] != "success" || runs[0]["assistant_id"] != assistantID(t, f, "deepagent") {
				t.Errorf("runs %v", runs)
			}
			var th map[string]any
			f.JSON(http.MethodGet, "/threads/"+out.ThreadID, nil, http.StatusOK, &th)

			// Continued: the same thread, a second run.
			_, _, again := callTool(context.Background(), t, c, "deepagent", map[string]any{"task": script(map[string]any{"content": "Again."}), "thread_id": out.ThreadID})
			if again.Status != "completed" || again.Answer != "Again." || again.ThreadID != out.ThreadID {
				t.Errorf("continued: %+v", again)
			}
			if runs := threadRuns(f, out.ThreadID); len(runs) != 2 {
				t.Errorf("runs after the second call: %v", runs)
			}
			// A thread_id no thread has yet is made.
			_, _, named := callTool(context.Background(), t, c, "deepagent", map[string]any{"task": script(map[string]any{"content": "Named."}), "thread_id": "my-thread"})
			if named.Status != "completed" || named.ThreadID != "my-thread" {
				t.Errorf("named thread: %+v", named)
			}
			// A failed run is an error result with its error.
			res, text, failed := callTool(context.Background(), t, c, "deepagent", map[string]any{"task": script(map[string]any{"error": "the model is down"})})
			if !res.IsError || failed.Status != "failed" || !strings.Contains(text, "the model is down") {
				t.Errorf("failed run: %v %q %+v", res.IsError, text, failed)
			}
		})
	}
}

// A run that stops for approval answers the calls that wait (arguments as
// an object); the decision continues it on its thread: approved, the
// file is written; rejected, it is not.
func TestMCPApproval(t *testing.T) {
	for _, version := range protocolVersions {
		for _, decision := range []string{"approve", "reject"} {
			t.Run(version+"/"+decision, func(t *testing.T) {
				f := newFixture(t, servertest.Options{Model: replay.Inline{}, InterruptOn: []string{"write_file"}})
				c := mustConnectMCP(t, f, version)
				task := script(
					map[string]any{"tool_calls": []any{map[string]any{"name": "write_file", "args": map[string]any{"file_path": "/a.txt", "content": "hello"}}}},
					map[string]any{"content": "Done."},
				)
				res, text, out := callTool(context.Background(), t, c, "deepagent", map[string]any{"task": task})
				if res.IsError || out.Status != "interrupted" || len(out.Pending) != 1 {
					t.Fatalf("first call: %q %+v", text, out)
				}
				if p := out.Pending[0]; p.Tool != "write_file" || p.Args["file_path"] != "/a.txt" || p.Args["content"] != "hello" {
					t.Errorf("pending %+v", p)
				}
				if !strings.Contains(text, "call deepagent with the thread_id") {
					t.Errorf("text %q", text)
				}
				_, text, end := callTool(context.Background(), t, c, "deepagent", map[string]any{"thread_id": out.ThreadID, "decision": decision, "message": "not now"})
				if end.Status != "completed" || end.Answer != "Done." || end.ThreadID != out.ThreadID {
					t.Fatalf("after %s: %q %+v", decision, text, end)
				}
				var st struct {
					Values servertest.WireValues `json:"values"`
				}
				f.JSON(http.MethodGet, "/threads/"+out.ThreadID+"/state", nil, http.StatusOK, &st)
				if _, wrote := st.Values.Files["/a.txt"]; wrote != (decision == "approve") {
					t.Errorf("%s: /a.txt written: %v", decision, wrote)
				}
				if runs := threadRuns(f, out.ThreadID); len(runs) != 2 || runs[0]["status"] != "success" || runs[1]["status"] != "interrupted" {
					t.Errorf("runs %v", runs)
				}
			})
		}
	}
}

// What launch refuses is a tool error with its message: nothing to decide
// on, a thread that does not exist, a thread_id no thread can have, a
// busy thread; so are arguments that are neither a task nor a decision.
func TestMCPRefusals(t *testing.T) {
	f := newFixture(t, servertest.Options{Model: replay.Inline{}})
	c := mustConnectMCP(t, f, protocolVersions[1])
	_, _, done := callTool(context.Background(), t, c, "deepagent", map[string]any{"task": script(map[string]any{"content": "Done."})})

	// A run that stays busy until its thread is deleted.
	type answer struct {
		res *sdk.CallToolResult
		err error
	}
	slow := make(chan answer, 1)
	go func() {
		res, err := c.CallTool(context.Background(), &sdk.CallToolParams{Name: "deepagent", Arguments: map[string]any{"task": script(map[string]any{"content": "Slow.", "delay_ms": 60000}), "thread_id": "busy"}})
		slow <- answer{res, err}
	}()
	servertest.WaitFor(t, "the slow run", func() bool { return runStatus(f, "busy") == "running" })

	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"nothing to decide on", map[string]any{"thread_id": done.ThreadID, "decision": "approve"}, "is not waiting for decisions"},
		{"a decision on no thread", map[string]any{"thread_id": "nosuch", "decision": "approve"}, "Thread with ID nosuch not found"},
		{"a thread_id no thread can have", map[string]any{"thread_id": "a/b", "task": "hi"}, "Invalid thread ID: it contains '/'"},
		{"a thread_id too long", map[string]any{"thread_id": strings.Repeat("x", 300), "task": "hi"}, "Invalid thread ID: it is longer than 256 bytes"},
		{"a busy thread", map[string]any{"thread_id": "busy", "task": script(map[string]any{"content": "Too."})}, "Thread is already running a task"},
		{"no task", map[string]any{}, "task is empty"},
		{"an unknown decision", map[string]any{"thread_id": done.ThreadID, "decision": "maybe"}, "decision must be approve or reject"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, text, _ := callTool(context.Background(), t, c, "deepagent", tt.args)
			if !res.IsError || !strings.Contains(text, tt.want) {
				t.Errorf("%v %q, want an error saying %q", res.IsError, text, tt.want)
			}
		})
	}
	// The busy thread's run is cancelled with its thread.
	f.JSON(http.MethodDelete, "/threads/busy", nil, http.StatusNoContent, nil)
	select {
	case a := <-slow:
		if a.err != nil {
			t.Fatal(a.err)
		}
		out, _ := json.Marshal(a.res.StructuredContent)
		if text := a.res.Content[0].(*sdk.TextContent).Text; !a.res.IsError || !strings.Contains(text, "The run on thread busy failed: the run was cancelled") ||
			!strings.Contains(string(out), `"status":"failed"`) {
			t.Errorf("the deleted thread's call: %q %s", text, out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call on the deleted thread did not end")
	}
}

// Calls count against MaxRuns: with one slot taken, the next call's run
// waits, pending, and runs once the slot is free.
func TestMCPCallsCountAgainstMaxRuns(t *testing.T) {
	f := newFixture(t, servertest.Options{Model: replay.Inline{}, MaxRuns: 1})
	c := mustConnectMCP(t, f, protocolVersions[0])
	go c.CallTool(context.Background(), &sdk.CallToolParams{Name: "deepagent", Arguments: map[string]any{"task": script(map[string]any{"content": "Slow.", "delay_ms": 60000}), "thread_id": "first"}})
	servertest.WaitFor(t, "the first run", func() bool { return runStatus(f, "first") == "running" })
	f.JSON(http.MethodPost, "/threads", map[string]any{"thread_id": "second"}, http.StatusOK, nil)
	second := make(chan taskOutput, 1)
	go func() {
		res, err := c.CallTool(context.Background(), &sdk.CallToolParams{Name: "deepagent", Arguments: map[string]any{"task": script(map[string]any{"content": "Second."}), "thread_id": "second"}})
		var out taskOutput
		if err == nil {
			b, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(b, &out)
		}
		second <- out
	}()
	servertest.WaitFor(t, "the second run, pending", func() bool { return runStatus(f, "second") == "pending" })
	f.JSON(http.MethodDelete, "/threads/first", nil, http.StatusNoContent, nil)
	select {
	case out := <-second:
		if out.Status != "completed" || out.Answer != "Second." {
			t.Errorf("the second call: %+v", out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second call did not end")
	}
}

// A call whose host goes away (its request's connection closes, or, in
// the sessionless protocol, the host cancels it) cancels its run.
func TestMCPCallCancelled(t *testing.T) {
	for _, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			f := newFixture(t, servertest.Options{Model: replay.Inline{}})
			c := mustConnectMCP(t, f, version)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				p := &sdk.CallToolParams{Name: "deepagent", Arguments: map[string]any{"task": script(map[string]any{"content": "Slow.", "delay_ms": 60000}), "thread_id": "slow"}}
				_, err := c.CallTool(ctx, p)
				done <- err
			}()
			servertest.WaitFor(t, "the run", func() bool { return runStatus(f, "slow") == "running" })
			cancel()
			if err := <-done; err == nil {
				t.Error("the cancelled call answered")
			}
			servertest.WaitFor(t, "the run cancelled", func() bool { return runStatus(f, "slow") == "interrupted" })
		})
	}
}

// /mcp is behind the server's checks: the key (as X-Api-Key or a bearer
// token) when one is set, no page of another origin, a JSON body; a page
// of an allowed origin may send MCP's headers and read the session's.
// Stateless, it serves POST alone.
func TestMCPAccess(t *testing.T) {
	f := newFixture(t, servertest.Options{Model: replay.Inline{}, APIKey: "secret"})
	tests := []struct {
		name string
		hdr  http.Header
		ok   bool
	}{
		{"no key", nil, false},
		{"a wrong key", http.Header{"X-Api-Key": {"nope"}}, false},
		{"X-Api-Key", http.Header{"X-Api-Key": {"secret"}}, true},
		{"a bearer token", http.Header{"Authorization": {"Bearer secret"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := connectMCP(t, f, protocolVersions[1], tt.hdr)
			if !tt.ok {
				if err == nil || !strings.Contains(err.Error(), "Unauthorized") {
					t.Fatalf("connected without the key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.ListTools(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
		})
	}

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}`
	raw := []struct {
		name   string
		method string
		hdr    []string
		status int
		cors   bool // the answer carries the CORS headers of an allowed page
	}{
		{"without the key", http.MethodPost, []string{"Accept", "application/json, text/event-stream"}, http.StatusUnauthorized, false},
		{"a page of another origin", http.MethodPost, []string{"Accept", "application/json, text/event-stream", "X-Api-Key", "secret", "Origin", "http://evil.example"}, http.StatusForbidden, false},
		{"a page of another site, without Origin", http.MethodPost, []string{"Accept", "application/json, text/event-stream", "X-Api-Key", "secret", "Sec-Fetch-Site", "cross-site"}, http.StatusForbidden, false},
		{"a page of an allowed origin", http.MethodPost, []string{"Accept", "application/json, text/event-stream", "X-Api-Key", "secret", "Origin", "http://localhost:3000"}, http.StatusOK, true},
		{"a preflight of an allowed origin", http.MethodOptions, []string{"Origin", "http://localhost:3000", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "mcp-protocol-version,mcp-session-id"}, http.StatusNoContent, true},
		{"a GET: no session, no stream of its own", http.MethodGet, []string{"Accept", "text/event-stream", "X-Api-Key", "secret"}, http.StatusMethodNotAllowed, false},
		{"a text/plain post", http.MethodPost, []string{"Accept", "application/json, text/event-stream", "X-Api-Key", "secret", "Content-Type", "text/plain"}, http.StatusUnsupportedMediaType, false},
	}
	for _, tt := range raw {
		t.Run(tt.name, func(t *testing.T) {
			code, body, h := f.Do(tt.method, "/mcp", initialize, tt.hdr...)
			if code != tt.status {
				t.Fatalf("%d %s, want %d", code, body, tt.status)
			}
			if !tt.cors {
				return
			}
			if tt.method == http.MethodOptions {
				allowed := h.Get("Access-Control-Allow-Headers")
				for _, name := range []string{"mcp-session-id", "mcp-protocol-version", "last-event-id", "x-api-key", "content-type"} {
					if !strings.Contains(allowed, name) {
						t.Errorf("Access-Control-Allow-Headers %q lacks %s", allowed, name)
					}
				}
				return
			}
			if h.Get("Access-Control-Allow-Origin") != "http://localhost:3000" || !strings.Contains(h.Get("Access-Control-Expose-Headers"), "mcp-session-id") {
				t.Errorf("CORS headers %v", h)
			}
		})
	}
}
