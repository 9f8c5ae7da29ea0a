package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/openai"
)

// rawServer serves hand-written responses and records request bodies.
type rawServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	hdrs   []http.Header
}

// newRawServer starts a server whose handler gets the 0-based number of
// each messages request.
func newRawServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request, n int)) *rawServer {
	t.Helper()
	s := &rawServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, body)
		s.hdrs = append(s.hdrs, r.Header.Clone())
		s.mu.Unlock()
		h(w, r, n)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *rawServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

func (s *rawServer) header(i int) http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hdrs[i]
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// serveSSE writes body as an event stream.
func serveSSE(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, body)
}

func newModel(t *testing.T, baseURL string, opts openai.Options) *openai.Model {
	t.Helper()
	if opts.APIKey == "" {
		opts.APIKey = "test-key"
	}
	opts.BaseURL = baseURL
	m, err := openai.New("gpt-4.1", opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// collect runs a stream to its end.
func collect(ctx context.Context, m llm.Model, req *llm.Request) (chunks []llm.Chunk, err error) {
	for c, e := range m.Stream(ctx, req) {
		if e != nil {
			return chunks, e
		}
		chunks = append(chunks, c)
	}
	return chunks, nil
}

func done(t *testing.T, chunks []llm.Chunk) *llm.Response {
	t.Helper()
	if len(chunks) == 0 || chunks[len(chunks)-1].Type != llm.ChunkDone {
		t.Fatalf("stream did not end with ChunkDone: %+v", chunks)
	}
	for _, c := range chunks[:len(chunks)-1] {
		if c.Type == llm.ChunkDone {
			t.Fatal("ChunkDone before the end")
		}
	}
	return chunks[len(chunks)-1].Response
}

func noDone(t *testing.T, chunks []llm.Chunk) {
	t.Helper()
	for _, c := range chunks {
		if c.Type == llm.ChunkDone {
			t.Fatalf("got ChunkDone from a broken stream: %+v", c.Response)
		}
	}
}

func userReq(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{llm.UserText(text)}}
}

// field returns the raw JSON of a top-level field of body.
func field(t *testing.T, body []byte, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("request body is not a JSON object: %v\n%s", err, body)
	}
	return m[name]
}

func decode(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func oneLine(t *testing.T, err error) {
	t.Helper()
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error message spans several lines: %q", err)
	}
}
