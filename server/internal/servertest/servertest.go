// Package servertest is the test fixture of the server and of the
// protocols mounted on it (server/a2aserve, server/mcpserve): a server
// over an in-memory saver whose agents play scripted turns, requests and
// streams against it, and replicas sharing a saver and a store.
package servertest

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

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server"
	"github.com/deepagents-go/deepagents/store"
)

// Fixture is a server over an in-memory saver with one assistant,
// "deepagent" (or Options.Graphs), whose model plays the given turns.
type Fixture struct {
	T     *testing.T
	Srv   *httptest.Server
	Saver checkpoint.Saver
}

// Options configure a [Fixture]; the zero value is the defaults.
type Options struct {
	InterruptOn []string
	APIKey      string
	Model       llm.Model
	Middleware  []deepagents.Middleware
	// Agent, when set, completes each assistant's configuration (its
	// TracerProvider, say) before the agent is built.
	Agent func(*deepagents.Config)
	// The server's MaxRuns, Heartbeat and RunContext.
	MaxRuns    int
	Heartbeat  time.Duration
	RunContext func(context.Context, *http.Request) context.Context
	// The server's AllowedOrigins, AllowedHosts and ProtectedValues.
	Origins, Hosts, Protected []string
	// Graphs are the assistants, each described as "the G assistant";
	// nil is one, deepagent, without a description.
	Graphs []string
	// Protocols are mounted beside the LangGraph API.
	Protocols []server.Protocol
}

// New starts the server; it closes when the test ends.
func New(t *testing.T, o Options, turns ...replay.Turn) *Fixture {
	t.Helper()
	saver := checkpoint.NewMemorySaver()
	model := o.Model
	if model == nil {
		model = replay.New(turns...)
	}
	on := map[string]deepagents.InterruptOn{}
	for _, n := range o.InterruptOn {
		on[n] = deepagents.InterruptOn{}
	}
	graphs := o.Graphs
	if graphs == nil {
		graphs = []string{"deepagent"}
	}
	var as []server.Assistant
	for _, g := range graphs {
		cfg := deepagents.Config{Model: model, Checkpointer: saver, InterruptOn: on, Middleware: o.Middleware}
		if o.Agent != nil {
			o.Agent(&cfg)
		}
		a, err := deepagents.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		as = append(as, server.Assistant{GraphID: g, Agent: a})
		if o.Graphs != nil {
			as[len(as)-1].Description = "the " + g + " assistant"
		}
	}
	s, err := server.New(server.Config{Assistants: as, Saver: saver, APIKey: o.APIKey,
		MaxRuns: o.MaxRuns, Heartbeat: o.Heartbeat, RunContext: o.RunContext, AllowedOrigins: o.Origins, AllowedHosts: o.Hosts, ProtectedValues: o.Protected,
		Protocols: o.Protocols})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		s.Close()
		hs.Close()
	})
	return &Fixture{T: t, Srv: hs, Saver: saver}
}

// do sends a request with a JSON body (nil for none) and returns the
// status and body.
func (f *Fixture) Do(method, path string, body any, hdr ...string) (int, []byte, http.Header) {
	f.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			f.T.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, f.Srv.URL+path, rd)
	if err != nil {
		f.T.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := f.Srv.Client().Do(req)
	if err != nil {
		f.T.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		f.T.Fatal(err)
	}
	return res.StatusCode, b, res.Header
}

// json does a request that must answer want, and decodes the answer into v.
func (f *Fixture) JSON(method, path string, body any, want int, v any) http.Header {
	f.T.Helper()
	code, b, h := f.Do(method, path, body)
	if code != want {
		f.T.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			f.T.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
	return h
}

// Event is one server-sent event.
type Event struct {
	Name string
	Data json.RawMessage
	ID   string
}

// ParseSSE reads a stream as the SDK does: data lines joined, comments
// skipped; each event's data must be valid JSON.
func ParseSSE(t *testing.T, body []byte) []Event {
	t.Helper()
	var out []Event
	var cur Event
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
			cur, data = Event{}, strings.Builder{}
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
func (f *Fixture) Stream(path string, body any) ([]Event, http.Header) {
	f.T.Helper()
	code, b, h := f.Do(http.MethodPost, path, body)
	if code != http.StatusOK {
		f.T.Fatalf("POST %s: %d %s", path, code, b)
	}
	if ct := h.Get("Content-Type"); ct != "text/event-stream" {
		f.T.Fatalf("Content-Type %q", ct)
	}
	return ParseSSE(f.T, b), h
}

// WireMsg is a message as the LangGraph API sends it.
type WireMsg struct {
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

// WireValues is a thread's values as the LangGraph API sends them.
type WireValues struct {
	Messages  []WireMsg                  `json:"messages"`
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

// Decode unmarshals raw into a T, failing the test on error.
func Decode[T any](t *testing.T, raw []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%v in %s", err, raw)
	}
	return v
}

// Call is a tool call with JSON arguments.
func Call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

// Human is a human message as the SDK sends it.
func Human(text string) map[string]any {
	return map[string]any{"id": "h-" + text, "type": "human", "content": text}
}

// WaitFor polls cond until it holds, failing the test after 10 s.
func WaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ReplayTurns is a script of text answers.
func ReplayTurns(texts ...string) []replay.Turn {
	out := make([]replay.Turn, len(texts))
	for i, s := range texts {
		out[i] = replay.Turn{Content: s}
	}
	return out
}

// BlockingModel says "working" and then waits until released or
// cancelled; once released, it answers "done" (runs_test.go's).
type BlockingModel struct {
	Release chan struct{}
	Calls   atomic.Int32
}

// NewBlockingModel is a BlockingModel not yet released.
func NewBlockingModel() *BlockingModel { return &BlockingModel{Release: make(chan struct{})} }

// Stream answers "working", waits for Release or the context, then
// finishes "workingdone".
func (m *BlockingModel) Stream(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		m.Calls.Add(1)
		if !yield(llm.Chunk{Type: llm.ChunkText, Text: "working"}, nil) {
			return
		}
		select {
		case <-m.Release:
		case <-ctx.Done():
			yield(llm.Chunk{}, ctx.Err())
			return
		}
		msg := llm.AssistantText("workingdone")
		yield(llm.Chunk{Type: llm.ChunkDone, Response: &llm.Response{Message: msg}}, nil)
	}
}

// Replica is one server of several on one saver and store.
type Replica struct {
	*Fixture
	S  *server.Server
	St store.Store // the store the replicas share
}

// NewReplicas starts n servers sharing a saver and a store, each with an
// agent on model, serving the LangGraph API and protocols.
func NewReplicas(t *testing.T, n int, saver checkpoint.Saver, st store.Store, model func() llm.Model, protocols ...server.Protocol) []*Replica {
	t.Helper()
	var out []*Replica
	for range n {
		a, err := deepagents.New(deepagents.Config{Model: model(), Checkpointer: saver})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewUnstartedServer(nil)
		url := "http://" + hs.Listener.Addr().String()
		s, err := server.New(server.Config{Assistants: []server.Assistant{{GraphID: "deepagent", Agent: a}}, Saver: saver, Store: st, URL: url,
			Protocols: protocols})
		if err != nil {
			t.Fatal(err)
		}
		hs.Config.Handler = s
		hs.Start()
		r := &Replica{Fixture: &Fixture{T: t, Srv: hs}, S: s, St: st}
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
func (f *Fixture) ThreadCount() int {
	f.T.Helper()
	ths, err := f.Saver.Threads(context.Background(), checkpoint.ListOptions{})
	if err != nil {
		f.T.Fatal(err)
	}
	return len(ths)
}

// ForeignRun starts a Replica beside the record of another, "gone" at
// 127.0.0.1:1, last seen at seen, running r1 on thread t (which exists); replicas_test.go's.
func ForeignRun(t *testing.T, seen time.Time, protocols ...server.Protocol) []*Replica {
	t.Helper()
	saver, st := checkpoint.NewMemorySaver(), store.NewMemoryStore()
	rs := NewReplicas(t, 1, saver, st, func() llm.Model { return NewBlockingModel() }, protocols...)
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
