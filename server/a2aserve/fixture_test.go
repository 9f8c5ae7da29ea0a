package a2aserve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server"
	"github.com/deepagents-go/deepagents/server/a2aserve"
	"github.com/deepagents-go/deepagents/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The fixture is server_test.go's (package server), serving A2A.

// fixture is a server over an in-memory saver with one assistant,
// "deepagent", whose model plays the given turns.
type fixture struct {
	t     *testing.T
	srv   *httptest.Server
	saver checkpoint.Saver
}

type options struct {
	interruptOn []string
	apiKey      string
	model       llm.Model
	middleware  []deepagents.Middleware
	// The server's MaxRuns, Heartbeat and RunContext, the agent's
	// TracerProvider.
	maxRuns    int
	heartbeat  time.Duration
	runContext func(context.Context, *http.Request) context.Context
	tracer     trace.TracerProvider
	// The server's AllowedOrigins, AllowedHosts and ProtectedValues.
	origins, hosts, protected []string
	// graphs are the assistants, each described as "the G assistant";
	// nil is one, deepagent, without a description.
	graphs []string
}

func newFixture(t *testing.T, o options, turns ...replay.Turn) *fixture {
	t.Helper()
	saver := checkpoint.NewMemorySaver()
	model := o.model
	if model == nil {
		model = replay.New(turns...)
	}
	on := map[string]deepagents.InterruptOn{}
	for _, n := range o.interruptOn {
		on[n] = deepagents.InterruptOn{}
	}
	graphs := o.graphs
	if graphs == nil {
		graphs = []string{"deepagent"}
	}
	var as []server.Assistant
	for _, g := range graphs {
		a, err := deepagents.New(deepagents.Config{Model: model, Checkpointer: saver, InterruptOn: on, Middleware: o.middleware, TracerProvider: o.tracer})
		if err != nil {
			t.Fatal(err)
		}
		as = append(as, server.Assistant{GraphID: g, Agent: a})
		if o.graphs != nil {
			as[len(as)-1].Description = "the " + g + " assistant"
		}
	}
	s, err := server.New(server.Config{Assistants: as, Saver: saver, APIKey: o.apiKey,
		MaxRuns: o.maxRuns, Heartbeat: o.heartbeat, RunContext: o.runContext, AllowedOrigins: o.origins, AllowedHosts: o.hosts, ProtectedValues: o.protected,
		Protocols: []server.Protocol{a2aserve.Protocol{}}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		s.Close()
		hs.Close()
	})
	return &fixture{t: t, srv: hs, saver: saver}
}

// do sends a request with a JSON body (nil for none) and returns the
// status and body.
func (f *fixture) do(method, path string, body any, hdr ...string) (int, []byte, http.Header) {
	f.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			f.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, f.srv.URL+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return res.StatusCode, b, res.Header
}

// json does a request that must answer want, and decodes the answer into v.
func (f *fixture) json(method, path string, body any, want int, v any) http.Header {
	f.t.Helper()
	code, b, h := f.do(method, path, body)
	if code != want {
		f.t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			f.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
	return h
}

// event is one server-sent event.
type event struct {
	Name string
	Data json.RawMessage
	ID   string
}

// parseSSE reads a stream as the SDK does: data lines joined, comments
// skipped; each event's data must be valid JSON.
func parseSSE(t *testing.T, body []byte) []event {
	t.Helper()
	var out []event
	var cur event
	var data strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Name != "" {
				cur.Data = json.RawMessage(data.String())
				if !json.Valid(cur.Data) {
					t.Fatalf("event %s: data is not JSON: %s", cur.Name, cur.Data)
				}
				out = append(out, cur)
			}
			cur, data = event{}, strings.Builder{}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data.WriteString(strings.TrimPrefix(line, "data: "))
		case strings.HasPrefix(line, "id: "):
			cur.ID = strings.TrimPrefix(line, "id: ")
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	return out
}

// stream posts a streaming run and returns its events and headers.
func (f *fixture) stream(path string, body any) ([]event, http.Header) {
	f.t.Helper()
	code, b, h := f.do(http.MethodPost, path, body)
	if code != http.StatusOK {
		f.t.Fatalf("POST %s: %d %s", path, code, b)
	}
	if ct := h.Get("Content-Type"); ct != "text/event-stream" {
		f.t.Fatalf("Content-Type %q", ct)
	}
	return parseSSE(f.t, b), h
}

type wireMsg struct {
	Type       string `json:"type"`
	ID         string `json:"id"`
	Content    any    `json:"content"`
	ToolCallID string `json:"tool_call_id"`
	Name       string `json:"name"`
	Status     string `json:"status"`
	ToolCalls  []struct {
		ID   string         `json:"id"`
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
		Type string         `json:"type"`
	} `json:"tool_calls"`
	ToolCallChunks []struct {
		Args string `json:"args"`
	} `json:"tool_call_chunks"`
}

type wireValues struct {
	Messages  []wireMsg                  `json:"messages"`
	Todos     []map[string]any           `json:"todos"`
	Files     map[string]json.RawMessage `json:"files"`
	Interrupt []struct {
		ID    string `json:"id"`
		Value struct {
			ActionRequests []struct {
				Name string         `json:"name"`
				Args map[string]any `json:"args"`
			} `json:"action_requests"`
			ReviewConfigs       []map[string]any  `json:"review_configs"`
			ActionRequestsCamel []json.RawMessage `json:"actionRequests"`
			ReviewConfigsCamel  []json.RawMessage `json:"reviewConfigs"`
		} `json:"value"`
	} `json:"__interrupt__"`
}

func decode[T any](t *testing.T, raw []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%v in %s", err, raw)
	}
	return v
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

func human(text string) map[string]any {
	return map[string]any{"id": "h-" + text, "type": "human", "content": text}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// replayTurns is a script of text answers.
func replayTurns(texts ...string) []replay.Turn {
	out := make([]replay.Turn, len(texts))
	for i, s := range texts {
		out[i] = replay.Turn{Content: s}
	}
	return out
}

// blockingModel says "working" and then waits until released or
// cancelled; once released, it answers "done" (runs_test.go's).
type blockingModel struct {
	release chan struct{}
	calls   atomic.Int32
}

func newBlockingModel() *blockingModel { return &blockingModel{release: make(chan struct{})} }

func (m *blockingModel) Stream(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		m.calls.Add(1)
		if !yield(llm.Chunk{Type: llm.ChunkText, Text: "working"}, nil) {
			return
		}
		select {
		case <-m.release:
		case <-ctx.Done():
			yield(llm.Chunk{}, ctx.Err())
			return
		}
		msg := llm.AssistantText("workingdone")
		yield(llm.Chunk{Type: llm.ChunkDone, Response: &llm.Response{Message: msg}}, nil)
	}
}

// replica is one server of several on one saver and store.
type replica struct {
	*fixture
	s  *server.Server
	st store.Store // the store the replicas share
}

// newReplicas starts n servers sharing a saver and a store, each with an
// agent on model, serving A2A (replicas_test.go's).
func newReplicas(t *testing.T, n int, saver checkpoint.Saver, st store.Store, model func() llm.Model) []*replica {
	t.Helper()
	var out []*replica
	for range n {
		a, err := deepagents.New(deepagents.Config{Model: model(), Checkpointer: saver})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewUnstartedServer(nil)
		url := "http://" + hs.Listener.Addr().String()
		s, err := server.New(server.Config{Assistants: []server.Assistant{{GraphID: "deepagent", Agent: a}}, Saver: saver, Store: st, URL: url,
			Protocols: []server.Protocol{a2aserve.Protocol{}}})
		if err != nil {
			t.Fatal(err)
		}
		hs.Config.Handler = s
		hs.Start()
		r := &replica{fixture: &fixture{t: t, srv: hs}, s: s, st: st}
		t.Cleanup(func() {
			hs.CloseClientConnections()
			s.Close()
			hs.Close()
		})
		out = append(out, r)
	}
	return out
}

// threadCount is the number of threads the saver holds (access_test.go's).
func (f *fixture) threadCount() int {
	f.t.Helper()
	ths, err := f.saver.Threads(context.Background(), checkpoint.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return len(ths)
}

// foreignRun starts a replica beside the record of another, "gone" at
// 127.0.0.1:1, last seen at seen, running r1 on thread t (which exists); replicas_test.go's.
func foreignRun(t *testing.T, seen time.Time) []*replica {
	t.Helper()
	saver, st := checkpoint.NewMemorySaver(), store.NewMemoryStore()
	rs := newReplicas(t, 1, saver, st, func() llm.Model { return newBlockingModel() })
	ctx := context.Background()
	lease, err := saver.Acquire(ctx, "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	lease.Release(ctx, checkpoint.StatusIdle)
	at := seen.UTC().Format(time.RFC3339Nano)
	st.Put(ctx, []string{"deepagents", "server", "replicas"}, "gone", map[string]any{"url": "http://127.0.0.1:1", "seen": at})
	st.Put(ctx, []string{"deepagents", "server", "runs"}, "r1", map[string]any{"thread_id": "t", "status": "running", "replica": "gone", "created_at": at, "updated_at": at})
	return rs
}
