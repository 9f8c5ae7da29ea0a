package openai

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
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

// TestSSEReader: the line "data: [DONE]" ends a complete stream once
// its line ends, however the body is split into reads, and nothing else
// does.
func TestSSEReader(t *testing.T) {
	tests := []struct {
		body   string
		events []string
		done   bool
	}{
		{"data: [DONE]\n\n", nil, true},
		{"data:[DONE]\r\n\r\n", nil, true},
		{"data: {\"x\":1}\n\ndata: [DONE]\n", []string{`{"x":1}`}, true},
		{"data: {\"x\":\"data: [DONE]\"}\n\n", []string{`{"x":"data: [DONE]"}`}, false},
		{": comment [DONE]\n\n", nil, false},
		{"data: [DONE]", nil, false}, // not terminated
		{"data: [DON", nil, false},
		{strings.Repeat("x", 100) + "\ndata: [DONE]\n", nil, true},
		{"event: ping\n\ndata: a\ndata: b\n\n", []string{"a\nb"}, false},
		{"data: cut off", nil, false}, // an event the body's end cut off
		{"data: " + strings.Repeat("y", 40<<10) + "\n\n", []string{strings.Repeat("y", 40<<10)}, false},
	}
	for _, tt := range tests {
		for _, oneByte := range []bool{true, false} {
			var r io.Reader = strings.NewReader(tt.body)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			s := newSSEReader(r)
			var got []string
			for {
				data, err := s.next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(data))
			}
			if s.done != tt.done || !slices.Equal(got, tt.events) {
				t.Errorf("%.40q (one byte per read %v): events %q, done %v; want %q, %v", tt.body, oneByte, got, s.done, tt.events, tt.done)
			}
		}
	}
}

// FuzzAccumulator feeds arbitrary event streams through the event reader
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
		events := newSSEReader(bytes.NewReader(data))
		acc := accumulator{provider: "fuzz"}
		for {
			d, err := events.next()
			if err != nil {
				break
			}
			var c chatChunk
			if json.Unmarshal(d, &c) != nil || c.Error != nil {
				break
			}
			for range acc.add(&c) {
			}
		}
		r, _ := acc.response()
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("response does not marshal: %v", err)
		}
	})
}
