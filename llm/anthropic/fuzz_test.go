package anthropic

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"
)

// FuzzAccumulator feeds arbitrary event streams through the SDK's decoder
// and the accumulator: nothing may panic, and a stream that completes must
// give a message that marshals (tool arguments are valid JSON).
func FuzzAccumulator(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.sse")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":-1}\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res := &http.Response{
			StatusCode: 200,
			Header:     http.Header{"Content-Type": {"text/event-stream"}},
			Body:       io.NopCloser(bytes.NewReader(data)),
		}
		stream := ssestream.NewStream[sdk.MessageStreamEventUnion](ssestream.NewDecoder(res), nil)
		defer stream.Close()
		var acc accumulator
		for stream.Next() {
			ev := stream.Current()
			if _, _, err := acc.add(&ev); err != nil {
				return
			}
			if acc.stopped {
				break
			}
		}
		if acc.stopped {
			if _, err := json.Marshal(acc.response()); err != nil {
				t.Fatalf("complete message does not marshal: %v", err)
			}
		}
	})
}

func TestLimitsFor(t *testing.T) {
	tests := []struct {
		model         string
		window, maxTk int
	}{
		{"claude-sonnet-4-5", 200_000, 32_000},
		{"claude-opus-4-1", 200_000, 32_000},
		{"claude-opus-4-20250514", 200_000, 32_000},
		{"claude-3-haiku-20240307", 200_000, 4_096},
		{"claude-3-5-haiku-latest", 200_000, 8_192},
		{"claude-opus-4-6", 1_000_000, 32_000},
		{"CLAUDE-SONNET-4-5", 200_000, 32_000},
		{"claude-next", 200_000, 16_384},
		{"gpt-4o", 0, 8_192},
	}
	for _, tt := range tests {
		w, m := limitsFor(tt.model)
		if w != tt.window || m != tt.maxTk {
			t.Errorf("limitsFor(%q) = %d, %d; want %d, %d", tt.model, w, m, tt.window, tt.maxTk)
		}
	}
}
