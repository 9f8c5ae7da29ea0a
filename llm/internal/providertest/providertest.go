// Package providertest holds test helpers shared by the provider packages'
// tests: a server of hand-written responses, stream collectors and JSON
// helpers.
package providertest

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
)

// RawServer serves hand-written responses and records request bodies and
// headers.
type RawServer struct {
	*httptest.Server
	Mu     sync.Mutex
	Bodies [][]byte
	Hdrs   []http.Header
}

// NewRawServer starts a server whose handler gets the 0-based number of
// each request. It is closed when the test ends.
func NewRawServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request, n int)) *RawServer {
	t.Helper()
	s := &RawServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.Mu.Lock()
		n := len(s.Bodies)
		s.Bodies = append(s.Bodies, body)
		s.Hdrs = append(s.Hdrs, r.Header.Clone())
		s.Mu.Unlock()
		h(w, r, n)
	}))
	t.Cleanup(s.Close)
	return s
}

// Count returns the number of requests received.
func (s *RawServer) Count() int {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return len(s.Bodies)
}

// Header returns the headers of request i.
func (s *RawServer) Header(i int) http.Header {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.Hdrs[i]
}

// Fixture reads testdata/name.
func Fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ServeSSE writes body as an event stream.
func ServeSSE(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, body)
}

// Collect runs a stream to its end.
func Collect(ctx context.Context, m llm.Model, req *llm.Request) (chunks []llm.Chunk, err error) {
	for c, e := range m.Stream(ctx, req) {
		if e != nil {
			return chunks, e
		}
		chunks = append(chunks, c)
	}
	return chunks, nil
}

// Done checks that chunks end with one ChunkDone and returns its response.
func Done(t *testing.T, chunks []llm.Chunk) *llm.Response {
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

// NoDone checks that a broken stream yielded no ChunkDone.
func NoDone(t *testing.T, chunks []llm.Chunk) {
	t.Helper()
	for _, c := range chunks {
		if c.Type == llm.ChunkDone {
			t.Fatalf("got ChunkDone from a broken stream: %+v", c.Response)
		}
	}
}

// UserReq returns a request holding one user message.
func UserReq(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{llm.UserText(text)}}
}

// Field returns the raw JSON of a top-level field of body.
func Field(t *testing.T, body []byte, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("request body is not a JSON object: %v\n%s", err, body)
	}
	return m[name]
}

// Decode unmarshals raw into v or fails the test.
func Decode(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

// Compact returns s as compact JSON.
func Compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// OneLine checks that an error message fits on one line.
func OneLine(t *testing.T, err error) {
	t.Helper()
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error message spans several lines: %q", err)
	}
}
