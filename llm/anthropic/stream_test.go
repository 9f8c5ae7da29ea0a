package anthropic_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"go.uber.org/goleak"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/anthropic"
)

func TestStreamText(t *testing.T) {
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path != "/v1/messages" {
			http.Error(w, "wrong path "+r.URL.Path, http.StatusNotFound)
			return
		}
		serveSSE(w, fixture(t, "text.sse"))
	})
	m := newModel(t, srv.URL, anthropic.Options{})
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
	if got := text.String(); got != "Hello, wörld!" {
		t.Errorf("streamed text %q", got)
	}
	res := done(t, chunks)
	if got := res.Message.Text(); got != "Hello, wörld!" {
		t.Errorf("message text %q", got)
	}
	if res.Message.Role != llm.RoleAssistant || len(res.Message.ToolCalls) != 0 {
		t.Errorf("message %+v", res.Message)
	}
	want := llm.Usage{InputTokens: 12 + 2048 + 4096, OutputTokens: 15, CacheReadTokens: 4096, CacheWriteTokens: 2048}
	if res.Usage != want {
		t.Errorf("usage %+v, want %+v", res.Usage, want)
	}
	if res.StopReason != llm.StopEnd {
		t.Errorf("stop reason %q", res.StopReason)
	}
	if res.Model != "claude-sonnet-4-5-20250929" {
		t.Errorf("model %q", res.Model)
	}
	h := srv.Header(0)
	if h.Get("X-Api-Key") != "test-key" || h.Get("Anthropic-Version") == "" {
		t.Errorf("headers %v", h)
	}
}

func TestStreamToolCalls(t *testing.T) {
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		serveSSE(w, fixture(t, "tools.sse"))
	})
	m := newModel(t, srv.URL, anthropic.Options{})
	chunks, err := collect(context.Background(), m, userReq("look"))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{
		{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "read_file", Args: []byte(`{"file_path": "/notes.md", "limit": 20}`)},
		{ID: "toolu_01B2", Name: "glob", Args: []byte(`{"pattern": "**/*.go"}`)},
		{ID: "toolu_01C3", Name: "list_todos", Args: []byte(`{}`)},
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
				t.Errorf("%s call %d = %s %s %s, want %s %s %s", name, i,
					got[i].ID, got[i].Name, got[i].Args, want[i].ID, want[i].Name, want[i].Args)
			}
		}
	}
	if res.Message.Text() != "Let me look." {
		t.Errorf("text %q", res.Message.Text())
	}
	if res.StopReason != llm.StopToolUse {
		t.Errorf("stop reason %q", res.StopReason)
	}
	if res.Usage.InputTokens != 472 || res.Usage.OutputTokens != 89 {
		t.Errorf("usage %+v", res.Usage)
	}
}

func TestStreamThinking(t *testing.T) {
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		serveSSE(w, fixture(t, "thinking.sse"))
	})
	m := newModel(t, srv.URL, anthropic.Options{})
	chunks, err := collect(context.Background(), m, userReq("think"))
	if err != nil {
		t.Fatal(err)
	}
	var reasoning strings.Builder
	for _, c := range chunks {
		if c.Type == llm.ChunkReasoning {
			reasoning.WriteString(c.Text)
		}
	}
	if reasoning.String() != "Let me work this out." {
		t.Errorf("reasoning deltas %q", reasoning.String())
	}
	res := done(t, chunks)
	parts := res.Message.Parts
	if len(parts) != 3 {
		t.Fatalf("parts %+v", parts)
	}
	if p := parts[0]; p.Type != llm.PartReasoning || p.Text != "Let me work this out." ||
		p.Signature != "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" || p.Redacted {
		t.Errorf("thinking part %+v", p)
	}
	if p := parts[1]; p.Type != llm.PartReasoning || !p.Redacted ||
		string(p.Data) != "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP" {
		t.Errorf("redacted part %+v", p)
	}
	if p := parts[2]; p.Type != llm.PartText || p.Text != "The answer is 42." {
		t.Errorf("text part %+v", p)
	}
	if res.Message.Text() != "The answer is 42." {
		t.Errorf("Text() = %q", res.Message.Text())
	}
}

func TestStreamBroken(t *testing.T) {
	text := fixture(t, "text.sse")
	cut := strings.Index(text, "event: content_block_stop")
	tests := []struct {
		name    string
		handler func(w http.ResponseWriter)
		want    string // in the error
	}{
		{"ends without message_stop", func(w http.ResponseWriter) {
			serveSSE(w, text[:cut])
		}, "without message_stop"},
		{"empty body", func(w http.ResponseWriter) {
			serveSSE(w, "")
		}, "without message_stop"},
		{"malformed JSON", func(w http.ResponseWriter) {
			serveSSE(w, fixture(t, "malformed.sse"))
		}, "malformed event data after 2 events"},
		{"error event", func(w http.ResponseWriter) {
			serveSSE(w, fixture(t, "error_event.sse"))
		}, "error event after 3 events (message incomplete): overloaded_error: Overloaded"},
		{"events out of order", func(w http.ResponseWriter) {
			serveSSE(w, strings.Replace(text, `"index":0,"delta"`, `"index":3,"delta"`, 1))
		}, "unknown content block 3"},
		{"connection dropped", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, text[:cut])
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		}, "connection lost after 5 events"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) { tt.handler(w) })
			m := newModel(t, srv.URL, anthropic.Options{MaxRetries: -1})
			chunks, err := collect(context.Background(), m, userReq("hi"))
			if !errors.Is(err, llm.ErrIncomplete) {
				t.Fatalf("error %v, want ErrIncomplete", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
			oneLine(t, err)
			t.Log(err)
			noDone(t, chunks)
			if srv.Count() != 1 {
				t.Errorf("%d requests with retries off", srv.Count())
			}
			if _, err := llm.Generate(context.Background(), m, userReq("again")); !errors.Is(err, llm.ErrIncomplete) {
				t.Errorf("Generate: %v", err)
			}
		})
	}
}

func TestRetryBeforeOutput(t *testing.T) {
	text := fixture(t, "text.sse")
	start := text[:strings.Index(text, "event: content_block_start")]
	overloaded := start + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	tests := []struct {
		name     string
		first    func(w http.ResponseWriter)
		requests int // 2: retried, 1: not
	}{
		{"overloaded event before any output", func(w http.ResponseWriter) { serveSSE(w, overloaded) }, 2},
		{"empty stream", func(w http.ResponseWriter) { serveSSE(w, "") }, 2},
		{"connection lost before any output", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, start)
			w.(http.Flusher).Flush()
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = conn.Close()
			}
		}, 2},
		{"malformed data is not retried", func(w http.ResponseWriter) { serveSSE(w, start+"event: content_block_start\ndata: {nope\n\n") }, 1},
		{"invalid request event is not retried", func(w http.ResponseWriter) {
			serveSSE(w, start+"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad\"}}\n\n")
		}, 1},
		{"not after output was yielded", func(w http.ResponseWriter) { serveSSE(w, fixture(t, "error_event.sse")) }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 0 {
					tt.first(w)
					return
				}
				serveSSE(w, text)
			})
			m := newModel(t, srv.URL, anthropic.Options{MaxRetries: 1})
			chunks, err := collect(context.Background(), m, userReq("hi"))
			if srv.Count() != tt.requests {
				t.Fatalf("%d requests, want %d (error %v)", srv.Count(), tt.requests, err)
			}
			if tt.requests == 2 {
				if err != nil {
					t.Fatal(err)
				}
				if res := done(t, chunks); res.Message.Text() != "Hello, wörld!" {
					t.Errorf("text %q", res.Message.Text())
				}
			} else if !errors.Is(err, llm.ErrIncomplete) {
				t.Errorf("error %v", err)
			}
		})
	}
}

func TestStreamErrorEventKeepsAPIError(t *testing.T) {
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		serveSSE(w, fixture(t, "error_event.sse"))
	})
	m := newModel(t, srv.URL, anthropic.Options{})
	_, err := collect(context.Background(), m, userReq("hi"))
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) || apiErr.Type() != "overloaded_error" {
		t.Fatalf("error %v does not unwrap to the SDK's overloaded error", err)
	}
}

func TestContextCancelMidStream(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	text := fixture(t, "text.sse")
	cut := strings.Index(text, "event: content_block_stop")
	release := make(chan struct{})
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, text[:cut])
		w.(http.Flusher).Flush()
		select { // hold the stream open until the client goes away
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	m := newModel(t, srv.URL, anthropic.Options{HTTPClient: hc})

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
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		serveSSE(w, fixture(t, "tools.sse"))
	})
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	m := newModel(t, srv.URL, anthropic.Options{HTTPClient: hc})
	n := 0
	for _, err := range m.Stream(context.Background(), userReq("hi")) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		break
	}
	if n != 1 {
		t.Fatalf("got %d chunks", n)
	}
	srv.Close()
}

func TestStopReasons(t *testing.T) {
	for wire, want := range map[string]llm.StopReason{
		"end_turn":                      llm.StopEnd,
		"stop_sequence":                 llm.StopEnd,
		"tool_use":                      llm.StopToolUse,
		"max_tokens":                    llm.StopMaxTokens,
		"model_context_window_exceeded": llm.StopMaxTokens,
		"refusal":                       llm.StopRefusal,
		"pause_turn":                    llm.StopOther,
	} {
		body := strings.Replace(fixture(t, "text.sse"), `"stop_reason":"end_turn"`, `"stop_reason":"`+wire+`"`, 1)
		srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) { serveSSE(w, body) })
		m := newModel(t, srv.URL, anthropic.Options{})
		res, err := llm.Generate(context.Background(), m, userReq("hi"))
		if err != nil {
			t.Fatal(err)
		}
		if res.StopReason != want {
			t.Errorf("%s → %q, want %q", wire, res.StopReason, want)
		}
	}
}

func TestUsageInMessageDelta(t *testing.T) {
	// Newer API versions repeat the (cumulative) input counts in
	// message_delta; they win over message_start's.
	body := strings.Replace(fixture(t, "text.sse"), `"usage":{"output_tokens":15}`,
		`"usage":{"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":6000,"output_tokens":15}`, 1)
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) { serveSSE(w, body) })
	m := newModel(t, srv.URL, anthropic.Options{})
	res, err := llm.Generate(context.Background(), m, userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Usage{InputTokens: 6020, OutputTokens: 15, CacheReadTokens: 6000}
	if res.Usage != want {
		t.Errorf("usage %+v, want %+v", res.Usage, want)
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
	m := newModel(t, srv.URL, anthropic.Options{HTTPClient: &http.Client{Transport: &http.Transport{}}})
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
	m := newModel(t, srv.URL, anthropic.Options{HTTPClient: hc})
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
