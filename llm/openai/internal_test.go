package openai

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

func TestOllamaURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "http://localhost:11434/v1"},
		{"127.0.0.1", "http://127.0.0.1:11434/v1"},
		{"127.0.0.1:11435", "http://127.0.0.1:11435/v1"},
		{"0.0.0.0", "http://localhost:11434/v1"},
		{"0.0.0.0:8080", "http://localhost:8080/v1"},
		{":11434", "http://localhost:11434/v1"},
		{"gpu-box", "http://gpu-box:11434/v1"},
		{"http://gpu-box", "http://gpu-box:80/v1"},
		{"https://ollama.example.com", "https://ollama.example.com:443/v1"},
		{"https://example.com:8443/ollama", "https://example.com:8443/ollama/v1"},
		{"http://h:1/v1/", "http://h:1/v1"},
		{"[::1]:11434", "http://[::1]:11434/v1"},
		{"::1", "http://[::1]:11434/v1"},
	}
	for _, tt := range tests {
		got, err := ollamaURL(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ollamaURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := ollamaURL("unix:///tmp/sock"); err == nil {
		t.Error("unix socket accepted")
	}
}

func TestDoneSpy(t *testing.T) {
	tests := []struct {
		body string
		done bool
	}{
		{"data: [DONE]\n\n", true},
		{"data:[DONE]\r\n\r\n", true},
		{"data: {\"x\":1}\n\ndata: [DONE]\n", true},
		{"data: {\"x\":\"data: [DONE]\"}\n\n", false},
		{": comment [DONE]\n\n", false},
		{"data: [DONE]", false}, // not terminated: the SDK would not see it either
		{"data: [DON", false},
		{strings.Repeat("x", 100) + "\ndata: [DONE]\n", true},
	}
	for _, tt := range tests {
		// One byte at a time, so the line spans many reads.
		s := &doneSpy{ReadCloser: io.NopCloser(iotest.OneByteReader(strings.NewReader(tt.body)))}
		if _, err := io.ReadAll(s); err != nil {
			t.Fatal(err)
		}
		if s.done != tt.done {
			t.Errorf("%q: done %v", tt.body, s.done)
		}
		s = &doneSpy{ReadCloser: io.NopCloser(strings.NewReader(tt.body))}
		_, _ = io.ReadAll(s)
		if s.done != tt.done {
			t.Errorf("%q (one read): done %v", tt.body, s.done)
		}
	}
}

// FuzzAccumulator feeds arbitrary event streams through the SDK's decoder
// and the accumulator: nothing may panic, and the response must marshal
// (tool arguments are valid JSON).
func FuzzAccumulator(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.sse")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		spy := &doneSpy{ReadCloser: io.NopCloser(bytes.NewReader(data))}
		res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: spy}
		stream := ssestream.NewStream[sdk.ChatCompletionChunk](ssestream.NewDecoder(res), nil)
		defer stream.Close()
		acc := accumulator{provider: "fuzz"}
		for stream.Next() {
			c := stream.Current()
			for range acc.add(&c) {
			}
		}
		r, _ := acc.response()
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("response does not marshal: %v", err)
		}
	})
}
