package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/openai"
)

func TestStreamText(t *testing.T) {
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "wrong path "+r.URL.Path, http.StatusNotFound)
			return
		}
		serveSSE(w, fixture(t, "text.sse"))
	})
	m := newModel(t, srv.URL+"/v1", openai.Options{})
	chunks, err := collect(context.Background(), m, userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, c := range chunks {
		if c.Type == llm.ChunkText {
			text.WriteString(c.Text)
		}
	}
	if text.String() != "Hello, wörld!" {
		t.Errorf("streamed %q", text.String())
	}
	res := done(t, chunks)
	if res.Message.Text() != "Hello, wörld!" || res.Message.Role != llm.RoleAssistant {
		t.Errorf("message %+v", res.Message)
	}
	want := llm.Usage{InputTokens: 2050, OutputTokens: 9, CacheReadTokens: 1920}
	if res.Usage != want {
		t.Errorf("usage %+v, want %+v", res.Usage, want)
	}
	if res.StopReason != llm.StopEnd || res.Model != "gpt-4.1-2025-04-14" {
		t.Errorf("stop %q model %q", res.StopReason, res.Model)
	}
	if got := srv.Header(0).Get("Authorization"); got != "Bearer test-key" {
		t.Errorf("authorization %q", got)
	}
}

func TestStreamParallelToolCalls(t *testing.T) {
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		serveSSE(w, fixture(t, "tools.sse"))
	})
	m := newModel(t, srv.URL+"/v1", openai.Options{})
	chunks, err := collect(context.Background(), m, userReq("look"))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{
		{ID: "call_aaa", Name: "read_file", Args: []byte(`{"file_path": "/notes.md", "limit": 20}`)},
		{ID: "call_bbb", Name: "glob", Args: []byte(`{"pattern": "**/*.go"}`)},
		{ID: "call_ccc", Name: "list_todos", Args: []byte(`{}`)},
	}
	var streamed []llm.ToolCall
	for _, c := range chunks {
		if c.Type == llm.ChunkToolCall {
			streamed = append(streamed, *c.ToolCall)
		}
	}
	res := done(t, chunks)
	for name, got := range map[string][]llm.ToolCall{"streamed": streamed, "message": res.Message.ToolCalls} {
		if len(got) != len(want) {
			t.Fatalf("%s: %d calls, want %d", name, len(got), len(want))
		}
		for i := range want {
			if got[i].ID != want[i].ID || got[i].Name != want[i].Name || string(got[i].Args) != string(want[i].Args) {
				t.Errorf("%s call %d = %s %s %s", name, i, got[i].ID, got[i].Name, got[i].Args)
			}
		}
	}
	if res.StopReason != llm.StopToolUse || res.Message.Text() != "" || len(res.Message.Parts) != 0 {
		t.Errorf("response %+v", res)
	}
	if res.Usage != (llm.Usage{InputTokens: 310, OutputTokens: 64}) {
		t.Errorf("usage %+v", res.Usage)
	}
}

func TestStreamInterleavedFragments(t *testing.T) {
	// Some servers interleave the fragments of parallel calls, and send a
	// call's name only once and its id late; indices keep them apart.
	frames := []string{
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"b","arguments":"{\"y\""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"a","arguments":"{\"x\":"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"id_b","function":{"arguments":":2}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"function":{"name":"c","arguments":"{\"broken"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`[DONE]`,
	}
	var body strings.Builder
	for _, f := range frames {
		body.WriteString("data: " + f + "\n\n")
	}
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) { serveSSE(w, body.String()) })
	m := newModel(t, srv.URL, openai.Options{})
	res, err := llm.Generate(context.Background(), m, userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	calls := res.Message.ToolCalls
	if len(calls) != 3 {
		t.Fatalf("calls %+v", calls)
	}
	if calls[0].Name != "a" || string(calls[0].Args) != `{"x":1}` || !strings.HasPrefix(calls[0].ID, "call_") {
		t.Errorf("call 0 %+v (%s)", calls[0], calls[0].Args)
	}
	if calls[1].Name != "b" || calls[1].ID != "id_b" || string(calls[1].Args) != `{"y":2}` {
		t.Errorf("call 1 %+v (%s)", calls[1], calls[1].Args)
	}
	// Arguments that are not JSON stay valid JSON (a string) so the
	// message can be stored and the tool layer can report the mistake.
	if calls[2].Name != "c" || string(calls[2].Args) != `"{\"broken"` {
		t.Errorf("call 2 %+v (%s)", calls[2], calls[2].Args)
	}
	if _, err := json.Marshal(res); err != nil {
		t.Errorf("response does not marshal: %v", err)
	}
}

func TestStreamReasoningFromCompatibleServers(t *testing.T) {
	tests := []struct {
		fixture   string
		reasoning string
		text      string
		stop      llm.StopReason
		calls     int
		usage     llm.Usage
	}{
		{"ollama_reasoning.sse", "The user wants a file.", "", llm.StopToolUse, 1, llm.Usage{InputTokens: 220, OutputTokens: 31}},
		{"vllm_reasoning.sse", "Two plus two is four.", "4", llm.StopMaxTokens, 0, llm.Usage{InputTokens: 12, OutputTokens: 28}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) { serveSSE(w, fixture(t, tt.fixture)) })
			m := newModel(t, srv.URL, openai.Options{})
			chunks, err := collect(context.Background(), m, userReq("hi"))
			if err != nil {
				t.Fatal(err)
			}
			var reasoning strings.Builder
			for _, c := range chunks {
				if c.Type == llm.ChunkReasoning {
					reasoning.WriteString(c.Text)
				}
			}
			if reasoning.String() != tt.reasoning {
				t.Errorf("reasoning deltas %q", reasoning.String())
			}
			res := done(t, chunks)
			if p := res.Message.Parts; len(p) == 0 || p[0].Type != llm.PartReasoning || p[0].Text != tt.reasoning {
				t.Errorf("parts %+v", p)
			}
			if res.Message.Text() != tt.text || res.StopReason != tt.stop || len(res.Message.ToolCalls) != tt.calls || res.Usage != tt.usage {
				t.Errorf("response %+v", res)
			}
		})
	}
}

func TestStreamBroken(t *testing.T) {
	text := fixture(t, "text.sse")
	beforeDone := strings.Index(text, "data: [DONE]")
	beforeFinish := strings.Index(text, `data: {"id":"chatcmpl-AbC1","object":"chat.completion.chunk","created":1736000000,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{},`)
	tests := []struct {
		name    string
		handler func(w http.ResponseWriter)
		want    string
	}{
		{"ends without [DONE]", func(w http.ResponseWriter) { serveSSE(w, text[:beforeDone]) }, "without [DONE]"},
		{"ends mid-message", func(w http.ResponseWriter) { serveSSE(w, text[:beforeFinish]) }, "without [DONE]"},
		{"[DONE] without a finish reason", func(w http.ResponseWriter) {
			serveSSE(w, text[:beforeFinish]+"data: [DONE]\n\n")
		}, "without a finish reason"},
		{"empty body", func(w http.ResponseWriter) { serveSSE(w, "") }, "after 0 chunks without [DONE]"},
		{"malformed JSON", func(w http.ResponseWriter) { serveSSE(w, fixture(t, "malformed.sse")) }, "malformed chunk data after 1 chunks"},
		{"error payload", func(w http.ResponseWriter) { serveSSE(w, fixture(t, "error_event.sse")) }, "error event after 1 chunks (message incomplete): received error while streaming"},
		{"connection dropped", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, text[:beforeFinish])
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		}, "connection lost after 4 chunks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) { tt.handler(w) })
			m := newModel(t, srv.URL, openai.Options{MaxRetries: -1})
			chunks, err := collect(context.Background(), m, userReq("hi"))
			if !errors.Is(err, llm.ErrIncomplete) {
				t.Fatalf("error %v, want ErrIncomplete", err)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "openai: ") {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
			t.Log(err)
			oneLine(t, err)
			noDone(t, chunks)
			for _, c := range chunks {
				if c.Type == llm.ChunkToolCall {
					t.Error("a tool call was yielded from a broken stream")
				}
			}
			if srv.Count() != 1 {
				t.Errorf("%d requests with retries off", srv.Count())
			}
		})
	}
}

func TestStreamToolCallsHeldUntilComplete(t *testing.T) {
	// A stream cut after a tool call's fragments yields no tool call:
	// its arguments might be unfinished.
	body := fixture(t, "tools.sse")
	cut := strings.Index(body, `"finish_reason":"tool_calls"`)
	cut = strings.LastIndex(body[:cut], "data: ")
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) { serveSSE(w, body[:cut]) })
	m := newModel(t, srv.URL, openai.Options{MaxRetries: -1})
	chunks, err := collect(context.Background(), m, userReq("hi"))
	if !errors.Is(err, llm.ErrIncomplete) || len(chunks) != 0 {
		t.Fatalf("chunks %+v, error %v", chunks, err)
	}
}

func TestRetryBeforeOutput(t *testing.T) {
	text := fixture(t, "text.sse")
	tools := fixture(t, "tools.sse")
	toolsCut := tools[:strings.LastIndex(tools[:strings.Index(tools, `"finish_reason":"tool_calls"`)], "data: ")]
	tests := []struct {
		name     string
		first    string
		requests int
	}{
		{"server error payload first", `data: {"error":{"message":"overloaded","type":"server_error"}}` + "\n\n", 2},
		{"empty stream", "", 2},
		// Tool-call fragments are not yielded until the end, so a stream
		// cut among them has yielded nothing and can be retried.
		{"cut among tool-call fragments", toolsCut, 2},
		{"invalid request payload", `data: {"error":{"message":"bad","type":"invalid_request_error"}}` + "\n\n", 1},
		{"malformed data", "data: {nope\n\n", 1},
		{"after text was yielded", fixture(t, "error_event.sse"), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 0 {
					serveSSE(w, tt.first)
					return
				}
				serveSSE(w, text)
			})
			m := newModel(t, srv.URL, openai.Options{MaxRetries: 1})
			chunks, err := collect(context.Background(), m, userReq("hi"))
			if srv.Count() != tt.requests {
				t.Fatalf("%d requests, want %d (error %v)", srv.Count(), tt.requests, err)
			}
			if tt.requests == 2 {
				if err != nil {
					t.Fatal(err)
				}
				if res := done(t, chunks); res.Message.Text() != "Hello, wörld!" || len(res.Message.ToolCalls) != 0 {
					t.Errorf("response %+v", res)
				}
			} else if !errors.Is(err, llm.ErrIncomplete) {
				t.Errorf("error %v", err)
			}
		})
	}
}

func TestContextCancelMidStream(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	text := fixture(t, "text.sse")
	cut := strings.Index(text, `"delta":{"content":"!"}`)
	release := make(chan struct{})
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, text[:strings.LastIndex(text[:cut], "data: ")])
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	m := newModel(t, srv.URL, openai.Options{HTTPClient: hc})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		got       []llm.Chunk
		err       error
		cancelled time.Time
	)
	for c, e := range m.Stream(ctx, userReq("hi")) {
		if e != nil {
			err = e
			break
		}
		got = append(got, c)
		if c.Type == llm.ChunkText && cancelled.IsZero() {
			cancelled = time.Now()
			cancel()
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	noDone(t, got)
	if d := time.Since(cancelled); d > 5*time.Second {
		t.Errorf("stream took %v to stop after cancel", d)
	}
	srv.Close()
}

func TestBreakEarly(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) { serveSSE(w, fixture(t, "text.sse")) })
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	m := newModel(t, srv.URL, openai.Options{HTTPClient: hc})
	for _, err := range m.Stream(context.Background(), userReq("hi")) {
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	srv.Close()
}

func TestFinishReasons(t *testing.T) {
	for wire, want := range map[string]llm.StopReason{
		"stop":           llm.StopEnd,
		"length":         llm.StopMaxTokens,
		"tool_calls":     llm.StopToolUse,
		"function_call":  llm.StopToolUse,
		"content_filter": llm.StopRefusal,
		"something_new":  llm.StopOther,
	} {
		body := strings.Replace(fixture(t, "text.sse"), `"finish_reason":"stop"`, `"finish_reason":"`+wire+`"`, 1)
		srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) { serveSSE(w, body) })
		m := newModel(t, srv.URL, openai.Options{})
		res, err := llm.Generate(context.Background(), m, userReq("hi"))
		if err != nil {
			t.Fatal(err)
		}
		if res.StopReason != want {
			t.Errorf("%s → %q, want %q", wire, res.StopReason, want)
		}
	}
}

func TestRefusal(t *testing.T) {
	body := "data: " + `{"choices":[{"index":0,"delta":{"role":"assistant","refusal":"I can't help with that."}}]}` + "\n\n" +
		"data: " + `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) { serveSSE(w, body) })
	m := newModel(t, srv.URL, openai.Options{})
	res, err := llm.Generate(context.Background(), m, userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != llm.StopRefusal || res.Message.Text() != "I can't help with that." {
		t.Errorf("response %+v", res)
	}
}
func TestConnectionReused(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		serveSSE(w, fixture(t, "tools.sse"))
		// The end of the chunked body comes a little later, as it can
		// over a real network: a client that closes the body as soon as
		// the message is complete loses the connection.
		w.(http.Flusher).Flush()
		time.Sleep(20 * time.Millisecond)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	m := newModel(t, srv.URL, openai.Options{HTTPClient: &http.Client{Transport: &http.Transport{}}})
	for range 3 {
		if _, err := llm.Generate(context.Background(), m, userReq("hi")); err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 3 sequential requests, want 1", n)
	}
}

func TestBodyHeldOpenAfterMessage(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	release := make(chan struct{})
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		serveSSE(w, fixture(t, "text.sse"))
		w.(http.Flusher).Flush()
		select { // a misbehaving server: the body never ends
		case <-r.Context().Done():
		case <-release:
		}
	})
	hc := &http.Client{Transport: &http.Transport{}}
	m := newModel(t, srv.URL, openai.Options{HTTPClient: hc})
	start := time.Now()
	res, err := llm.Generate(context.Background(), m, userReq("hi"))
	if err != nil || res.Message.Text() != "Hello, wörld!" {
		t.Fatalf("%v %+v", err, res)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v: waited for the end of a complete stream", d)
	}
	close(release)
	hc.CloseIdleConnections()
	srv.Close()
}
