package langgraph_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/langgraph"
)

func TestPath(t *testing.T) {
	for _, c := range []struct {
		pattern string
		ids     []string
		want    string
	}{
		{langgraph.PathThreads, nil, "/threads"},
		{langgraph.PathThread, []string{"t1"}, "/threads/t1"},
		{langgraph.PathRun, []string{"t1", "r1"}, "/threads/t1/runs/r1"},
		{langgraph.PathRunCancel, []string{"t1", "r1"}, "/threads/t1/runs/r1/cancel"},
		{langgraph.PathRunStream, []string{"t1"}, "/threads/t1/runs/{run_id}/stream"},
		{langgraph.PathThreadStateAt, []string{"{x}", "c"}, "/threads/{x}/state/c"},
		{langgraph.PathOK, []string{"extra"}, "/ok"},
	} {
		if got := langgraph.Path(c.pattern, c.ids...); got != c.want {
			t.Errorf("Path(%q, %q) = %q, want %q", c.pattern, c.ids, got, c.want)
		}
	}
}

// request is what a fake server received.
type request struct {
	method, uri, body string
	header            http.Header
}

// fake serves answer and records the requests.
func fake(t *testing.T, answer http.HandlerFunc) (*langgraph.Client, func() []request) {
	t.Helper()
	var mu sync.Mutex
	var got []request
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, request{r.Method, r.URL.RequestURI(), string(b), r.Header.Clone()})
		mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(hs.Close)
	c := &langgraph.Client{URL: hs.URL, Headers: map[string]string{langgraph.HeaderAPIKey: "k"}, HTTP: hs.Client(), Timeout: 5 * time.Second}
	return c, func() []request {
		mu.Lock()
		defer mu.Unlock()
		return got
	}
}

func answerJSON(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// The calls send what the LangGraph API takes: paths with escaped IDs,
// JSON bodies with only what is set, the client's headers.
func TestClientRequests(t *testing.T) {
	ctx := context.Background()
	c, got := fake(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		case strings.Contains(r.URL.Path, "/cancel"):
			w.WriteHeader(http.StatusAccepted)
		case strings.HasSuffix(r.URL.Path, "/runs") || strings.Contains(r.URL.Path, "/runs/"):
			answerJSON(200, `{"run_id":"r 1","thread_id":"t/1","status":"pending","multitask_strategy":"interrupt"}`)(w, r)
		default:
			answerJSON(200, `{"thread_id":"t/1","status":"idle","values":null}`)(w, r)
		}
	})
	if _, err := c.CreateThread(ctx, langgraph.ThreadCreate{Metadata: json.RawMessage(`{"graph_id":"g"}`)}); err != nil {
		t.Fatal(err)
	}
	msg := json.RawMessage(`{"role":"user","content":"hi <there>"}`)
	rn, err := c.CreateRun(ctx, "t/1", langgraph.RunCreate{AssistantID: "g", Input: &langgraph.Input{Messages: []json.RawMessage{msg}}, MultitaskStrategy: langgraph.MultitaskInterrupt})
	if err != nil {
		t.Fatal(err)
	}
	if rn.RunID != "r 1" || rn.Status != langgraph.RunPending || rn.MultitaskStrategy != langgraph.MultitaskInterrupt {
		t.Errorf("run = %+v", rn)
	}
	if _, err := c.GetRun(ctx, "t/1", "r 1"); err != nil {
		t.Fatal(err)
	}
	if err := c.CancelRun(ctx, "t/1", "r 1", false, langgraph.CancelInterrupt); err != nil {
		t.Fatal(err)
	}
	if err := c.CancelRun(ctx, "t/1", "r 1", true, ""); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteThread(ctx, "t/1"); err != nil {
		t.Fatal(err)
	}
	want := []request{
		{"POST", "/threads", `{"metadata":{"graph_id":"g"}}`, nil},
		{"POST", "/threads/t%2F1/runs", `{"assistant_id":"g","input":{"messages":[{"role":"user","content":"hi \u003cthere\u003e"}]},"multitask_strategy":"interrupt"}`, nil},
		{"GET", "/threads/t%2F1/runs/r%201", "", nil},
		{"POST", "/threads/t%2F1/runs/r%201/cancel?wait=0&action=interrupt", "", nil},
		{"POST", "/threads/t%2F1/runs/r%201/cancel?wait=1", "", nil},
		{"DELETE", "/threads/t%2F1", "", nil},
	}
	reqs := got()
	if len(reqs) != len(want) {
		t.Fatalf("%d requests, want %d: %+v", len(reqs), len(want), reqs)
	}
	for i, w := range want {
		r := reqs[i]
		if r.method != w.method || r.uri != w.uri || r.body != w.body {
			t.Errorf("request %d = %s %s %s, want %s %s %s", i, r.method, r.uri, r.body, w.method, w.uri, w.body)
		}
		if r.header.Get("X-Api-Key") != "k" || r.header.Get("Content-Type") != "application/json" || r.header.Get("Accept") != "application/json" {
			t.Errorf("request %d headers %v", i, r.header)
		}
	}
}

// A thread's values come as they were sent, for the caller to decode.
func TestClientThreadValues(t *testing.T) {
	ctx := context.Background()
	body := `{"thread_id":"t","created_at":"2026-01-02T03:04:05.5+00:00","metadata":{"a":1},"status":"error","values":{"messages":[{"content":"x"}]},"interrupts":{"i":[{"id":"1","value":{"v":true}}]},"error":"boom"}`
	c, _ := fake(t, answerJSON(200, body))
	th, err := c.GetThread(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if raw, ok := th.Values.(json.RawMessage); !ok || string(raw) != `{"messages":[{"content":"x"}]}` {
		t.Errorf("values = %#v", th.Values)
	}
	if th.Status != langgraph.ThreadError || th.Error == nil || *th.Error != "boom" || th.Metadata["a"] != 1.0 || len(th.Interrupts["i"]) != 1 || th.CreatedAt.Year() != 2026 {
		t.Errorf("thread = %+v", th)
	}
	c, _ = fake(t, answerJSON(200, `{"thread_id":"t","values":null}`))
	if th, err = c.GetThread(ctx, "t"); err != nil || th.Values != nil {
		t.Errorf("null values = %#v, %v", th.Values, err)
	}
}

// What a server answers that cannot be used is an *Error saying what the
// server said; a connection that fails is not.
func TestClientErrors(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		answer http.HandlerFunc
		want   string
		status int
	}{
		{"Python's detail", answerJSON(500, `{"detail":"the database is down"}`), "GET /threads/t: 500 Internal Server Error: the database is down", 500},
		{"message", answerJSON(409, `{"message":"busy"}`), "GET /threads/t: 409 Conflict: busy", 409},
		{"error", answerJSON(422, `{"error":"bad"}`), "GET /threads/t: 422 Unprocessable Entity: bad", 422},
		{"text", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "Thread with ID t not found", 404) }, "GET /threads/t: 404 Not Found: Thread with ID t not found", 404},
		{"nothing", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) }, "GET /threads/t: 401 Unauthorized", 401},
		{"long", func(w http.ResponseWriter, r *http.Request) { http.Error(w, strings.Repeat("é", 200), 400) }, "GET /threads/t: 400 Bad Request: " + strings.Repeat("é", 150) + "... (400 bytes)", 400},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>") }, "GET /threads/t: the answer is not the JSON expected: invalid character '<' looking for beginning of value", 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl, _ := fake(t, c.answer)
			_, err := cl.GetThread(ctx, "t")
			var e *langgraph.Error
			if !errors.As(err, &e) || err.Error() != c.want || e.StatusCode != c.status {
				t.Errorf("error = %v (%T), want %q", err, err, c.want)
			}
		})
	}
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	_, err := (&langgraph.Client{URL: gone.URL}).GetThread(ctx, "t")
	var e *langgraph.Error
	if err == nil || errors.As(err, &e) {
		t.Errorf("a server gone: %v (%T), want a connection error", err, err)
	}
}

// A run's input: its messages, and its other values by name.
func TestInputJSON(t *testing.T) {
	var q langgraph.RunCreate
	if err := json.Unmarshal([]byte(`{"input":{"messages":[{"type":"human","content":"hi"}],"files":{},"todos":[]},"stream_mode":["values","messages-tuple"]}`), &q); err != nil {
		t.Fatal(err)
	}
	if len(q.Input.Messages) != 1 || len(q.Input.Values) != 2 || string(q.Input.Values["todos"]) != "[]" {
		t.Errorf("input = %+v", q.Input)
	}
	b, err := json.Marshal(q.Input)
	if err != nil || string(b) != `{"files":{},"messages":[{"type":"human","content":"hi"}],"todos":[]}` {
		t.Errorf("input encodes as %s, %v", b, err)
	}
	if err := json.Unmarshal([]byte(`{"input":{"messages":"x"}}`), &q); err == nil {
		t.Error("messages that are not a list were taken")
	}
	b, _ = json.Marshal(langgraph.RunCreate{AssistantID: "a"})
	if string(b) != `{"assistant_id":"a"}` {
		t.Errorf("an empty run request encodes as %s", b)
	}
}

func TestStreamModes(t *testing.T) {
	for _, c := range []struct {
		mode, want, err string
	}{
		{"", "[values]", ""},
		{"null", "[values]", ""},
		{`"updates"`, "[updates]", ""},
		{`["values","messages-tuple"]`, "[values messages-tuple]", ""},
		{`["values","bogus"]`, "", `unknown stream_mode "bogus"`},
		{`3`, "", "stream_mode must be a string or a list of strings"},
	} {
		q := langgraph.RunCreate{StreamMode: json.RawMessage(c.mode)}
		modes, err := q.StreamModes()
		got := ""
		if err == nil {
			got = "[" + joinModes(modes) + "]"
		}
		if got != c.want || (err == nil) != (c.err == "") || err != nil && err.Error() != c.err {
			t.Errorf("StreamModes(%s) = %s, %v", c.mode, got, err)
		}
	}
}

func joinModes(ms []langgraph.StreamMode) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = string(m)
	}
	return strings.Join(s, " ")
}

func TestFailureOf(t *testing.T) {
	if f := langgraph.FailureOf(json.RawMessage(`{"messages":[],"__error__":{"error":"AgentError","message":"down"}}`)); f == nil || f.Error != "AgentError" || f.Message != "down" {
		t.Errorf("FailureOf = %+v", f)
	}
	for _, v := range []string{`{"messages":[]}`, `[]`, `{"__error__":3}`, ``} {
		if f := langgraph.FailureOf(json.RawMessage(v)); f != nil {
			t.Errorf("FailureOf(%s) = %+v", v, f)
		}
	}
	b, _ := json.Marshal(langgraph.Failure{Error: "E", Message: "m"})
	if string(b) != `{"error":"E","message":"m"}` {
		t.Errorf("Failure encodes as %s", b)
	}
}

func TestRunStatusDone(t *testing.T) {
	for s, want := range map[langgraph.RunStatus]bool{
		langgraph.RunPending: false, langgraph.RunRunning: false, langgraph.RunSuccess: true,
		langgraph.RunError: true, langgraph.RunTimeout: true, langgraph.RunInterrupted: true,
	} {
		if s.Done() != want {
			t.Errorf("%s.Done() = %v", s, !want)
		}
	}
}

// TestCheckpointRef reads a checkpoint in each form the SDKs send (an ID,
// a config, a checkpoint object, null) and writes it as a config.
func TestCheckpointRef(t *testing.T) {
	for in, want := range map[string]langgraph.CheckpointRef{
		`"c1"`: {CheckpointID: "c1"},
		`{"configurable":{"checkpoint_id":"c1","checkpoint_ns":"ns","thread_id":"t"}}`:    {CheckpointID: "c1", CheckpointNS: "ns"},
		`{"thread_id":"t","checkpoint_ns":"","checkpoint_id":"c1","checkpoint_map":null}`: {CheckpointID: "c1"},
		`{}`:                  {},
		`{"configurable":{}}`: {},
	} {
		var got langgraph.CheckpointRef
		if err := json.Unmarshal([]byte(in), &got); err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", in, got, err, want)
		}
	}
	var q langgraph.HistoryRequest
	if err := json.Unmarshal([]byte(`{"before":null}`), &q); err != nil || q.Before != nil {
		t.Errorf("null: %+v, %v", q.Before, err)
	}
	var bad langgraph.CheckpointRef
	if err := json.Unmarshal([]byte(`3`), &bad); err == nil {
		t.Error("a number read as a checkpoint")
	}
	b, err := json.Marshal(langgraph.HistoryRequest{Before: &langgraph.CheckpointRef{CheckpointID: "c1"}})
	if err != nil || string(b) != `{"before":{"configurable":{"checkpoint_id":"c1","checkpoint_ns":""}}}` {
		t.Errorf("marshal: %s, %v", b, err)
	}
}

// A stream is read as the SSE standard says: data lines joined, CRLF
// lines, comments and unknown fields skipped, an ID lasting until the
// next, an event without data not dispatched, the last one without its
// blank line dropped; what is not a stream of JSON events is an *Error.
func TestStreamEvents(t *testing.T) {
	type ev struct{ id, name, data string }
	for _, tc := range []struct {
		name, contentType, body string
		want                    []ev
		wantErr                 string // in an *Error's message
	}{
		{"events", "text/event-stream", "event: metadata\ndata: {\"run_id\": \"r\"}\nid: 1\n\n: heartbeat\n\nevent: values\ndata: {\"a\":\ndata: 1}\nid: 2\n\n",
			[]ev{{"1", "metadata", `{"run_id": "r"}`}, {"2", "values", "{\"a\":\n1}"}}, ""},
		{"CRLF, no name, the ID kept, other fields", "text/event-stream; charset=utf-8", "id: 7\r\nretry: 10\r\ndata:[1]\r\n\r\ndata: 2\r\n\r\n",
			[]ev{{"7", "message", "[1]"}, {"7", "message", "2"}}, ""},
		{"no data, and a last event cut off", "text/event-stream", "event: ping\n\nevent: values\ndata: {}\n",
			nil, ""},
		{"not JSON", "text/event-stream", "event: values\ndata: {\"a\": 1}\n\nevent: values\ndata: {oops\n\n",
			[]ev{{"", "values", `{"a": 1}`}}, "is not JSON"},
		{"not a stream", "application/json", `{"a": 1}`, nil, "not a stream of events"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, got := fake(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				io.WriteString(w, tc.body)
			})
			var evs []ev
			var err error
			for e, er := range c.JoinStream(context.Background(), "t/1", "r", "5") {
				if er != nil {
					err = er
					continue
				}
				evs = append(evs, ev{e.ID, e.Name, string(e.Data)})
			}
			if len(evs) != len(tc.want) || (len(evs) > 0 && !reflect.DeepEqual(evs, tc.want)) {
				t.Errorf("events %q, want %q", evs, tc.want)
			}
			var lgErr *langgraph.Error
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.wantErr != "" && (!errors.As(err, &lgErr) || !strings.Contains(lgErr.Message, tc.wantErr) || lgErr.StatusCode != http.StatusOK):
				t.Errorf("error %v, want an *Error saying %q", err, tc.wantErr)
			}
			reqs := got()
			if len(reqs) != 1 || reqs[0].method != http.MethodGet || reqs[0].uri != "/threads/t%2F1/runs/r/stream" ||
				reqs[0].header.Get(langgraph.HeaderLastEventID) != "5" || reqs[0].header.Get("Accept") != "text/event-stream" || reqs[0].header.Get(langgraph.HeaderAPIKey) != "k" {
				t.Errorf("requests %+v", reqs)
			}
		})
	}
}

// A stream's Timeout bounds the wait for its answer: a server that never
// answers ends the stream with context.DeadlineExceeded.
func TestStreamTimeout(t *testing.T) {
	stop := make(chan struct{})
	c, _ := fake(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	})
	defer close(stop)
	c.Timeout = time.Millisecond
	n := 0
	for _, err := range c.StreamRun(context.Background(), "", langgraph.RunCreate{AssistantID: "a"}) {
		n++
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v, want context.DeadlineExceeded", err)
		}
	}
	if n != 1 {
		t.Errorf("yielded %d times", n)
	}
}
