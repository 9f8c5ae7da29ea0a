package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/openai"
	"github.com/deepagents-go/deepagents/llm/openai/openaitest"
)

// longConversation is n agent steps: an assistant turn with a tool call
// and its result, after a user question.
func longConversation(n int) *llm.Request {
	req := &llm.Request{
		System:   strings.Repeat("You are a careful agent. ", 200),
		Messages: []llm.Message{llm.UserText("Refactor the package.")},
		Tools:    testTools,
		Cache:    llm.CacheHints{Prefix: true, Tail: true},
	}
	for i := range n {
		id := fmt.Sprintf("call_%d", i)
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("Reading the next file.")},
				ToolCalls: []llm.ToolCall{{ID: id, Name: "ls", Args: json.RawMessage(`{"path":"/src"}`)}}},
			llm.ToolResult(id, "ls", strings.Repeat("file.go\n", 50), false))
	}
	return req
}

// BenchmarkStream measures one streamed request of 200 text deltas end to
// end over loopback HTTP: request encoding, SSE decoding, accumulation.
func BenchmarkStream(b *testing.B) {
	body := strings.Join(openaitest.Events(openaitest.Turn{
		Text: strings.Repeat("word ", 600), Model: "gpt-4.1",
		Usage: openaitest.Usage{PromptTokens: 100, CompletionTokens: 600},
	}, "chatcmpl-bench", true), "")
	srv := newBenchServer(b, body)
	m, err := openai.New("gpt-4.1", openai.Options{APIKey: "k", BaseURL: srv + "/v1"})
	if err != nil {
		b.Fatal(err)
	}
	req := longConversation(10)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := llm.Generate(ctx, m, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamLongConversation is BenchmarkStream with a 100-step
// conversation to encode: the per-step cost an agent pays late in a run.
func BenchmarkStreamLongConversation(b *testing.B) {
	body := strings.Join(openaitest.Events(openaitest.Turn{Text: "ok", Model: "gpt-4.1"}, "chatcmpl-bench", true), "")
	srv := newBenchServer(b, body)
	m, err := openai.New("gpt-4.1", openai.Options{APIKey: "k", BaseURL: srv + "/v1"})
	if err != nil {
		b.Fatal(err)
	}
	req := longConversation(100)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := llm.Generate(ctx, m, req); err != nil {
			b.Fatal(err)
		}
	}
}

// newBenchServer serves body as an event stream to every request.
func newBenchServer(b *testing.B, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}
