// Package modeltest is the conformance suite of the llm.Model contract.
// Every provider of this module and the scripted model run it; so can a
// Model of your own:
//
//	func TestConformance(t *testing.T) {
//		modeltest.Run(t, func(t *testing.T, answers []modeltest.Answer) llm.Model {
//			// a model whose successive calls give these answers, for
//			// example a client of a test server that speaks your API
//		})
//	}
//
// It checks what the agent loop relies on: a stream's pieces add up to the
// response it ends with, in one final ChunkDone; tool calls have ids,
// names and JSON arguments; usage and stop reasons are mapped; calls are
// answered in order; stopping the iteration early stops the call; a
// cancelled context is an error that wraps context.Canceled; and the model
// is safe for concurrent use.
package modeltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
)

// Answer is one scripted model answer: reasoning is not part of the
// contract (not every API streams it), so an Answer has none.
type Answer struct {
	Text      string
	ToolCalls []ToolCall
	// InputTokens and OutputTokens are the usage the answer reports.
	InputTokens, OutputTokens int
}

// ToolCall is a scripted tool call; Args is a JSON object's text.
type ToolCall struct {
	Name string
	Args string
}

// Factory returns a model whose successive calls give answers, in order.
// It must release what it starts (a test server) with t.Cleanup.
type Factory func(t *testing.T, answers []Answer) llm.Model

// Run runs the suite against the models f makes.
func Run(t *testing.T, f Factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, f Factory)
	}{
		{"Text", testText},
		{"StreamAddsUp", testStreamAddsUp},
		{"ToolCalls", testToolCalls},
		{"InOrder", testInOrder},
		{"StopEarly", testStopEarly},
		{"Cancelled", testCancelled},
		{"Concurrent", testConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, f) })
	}
}

func request(text string) *llm.Request {
	return &llm.Request{
		System:   "You are terse.",
		Messages: []llm.Message{llm.UserText(text)},
		Tools: []llm.ToolSpec{{Name: "lookup", Description: "Look a word up.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`)}},
	}
}

func generate(t *testing.T, m llm.Model, text string) *llm.Response {
	t.Helper()
	resp, err := llm.Generate(t.Context(), m, request(text))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return resp
}

func testText(t *testing.T, f Factory) {
	m := f(t, []Answer{{Text: "Hello there, how are you?", InputTokens: 12, OutputTokens: 7}})
	resp := generate(t, m, "hi")
	if resp.Message.Role != llm.RoleAssistant {
		t.Errorf("role %q, want assistant", resp.Message.Role)
	}
	if got := resp.Message.Text(); got != "Hello there, how are you?" {
		t.Errorf("text %q", got)
	}
	if len(resp.Message.ToolCalls) != 0 {
		t.Errorf("tool calls in a text answer: %+v", resp.Message.ToolCalls)
	}
	if resp.StopReason != llm.StopEnd {
		t.Errorf("stop reason %q, want %q", resp.StopReason, llm.StopEnd)
	}
	if resp.Usage.InputTokens != 12 || resp.Usage.OutputTokens != 7 {
		t.Errorf("usage %+v, want 12 in and 7 out", resp.Usage)
	}
}

// collect runs one streamed call and checks the stream's shape: text and
// tool-call chunks, then exactly one ChunkDone, last.
func collect(t *testing.T, m llm.Model, text string) (chunks []llm.Chunk, resp *llm.Response) {
	t.Helper()
	for c, err := range m.Stream(t.Context(), request(text)) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		if resp != nil {
			t.Fatalf("a %v chunk after ChunkDone", c.Type)
		}
		if c.Type == llm.ChunkDone {
			if c.Response == nil {
				t.Fatal("ChunkDone without a Response")
			}
			resp = c.Response
			continue
		}
		chunks = append(chunks, c)
	}
	if resp == nil {
		t.Fatal("the stream ended without ChunkDone")
	}
	return chunks, resp
}

func testStreamAddsUp(t *testing.T, f Factory) {
	want := "A longer answer, so that it streams in several pieces: one, two, three, four, five."
	m := f(t, []Answer{{Text: want, InputTokens: 3, OutputTokens: 20}})
	chunks, resp := collect(t, m, "count")
	var text strings.Builder
	for _, c := range chunks {
		if c.Type == llm.ChunkText {
			text.WriteString(c.Text)
		}
	}
	if text.String() != want || resp.Message.Text() != want {
		t.Errorf("text chunks %q, response %q, want %q", text.String(), resp.Message.Text(), want)
	}
}

func testToolCalls(t *testing.T, f Factory) {
	m := f(t, []Answer{{Text: "Looking both up.", ToolCalls: []ToolCall{
		{Name: "lookup", Args: `{"word":"glob"}`},
		{Name: "lookup", Args: `{"word":"grep \"literal\" ü"}`},
	}, InputTokens: 30, OutputTokens: 40}})
	chunks, resp := collect(t, m, "look up glob and grep")
	calls := resp.Message.ToolCalls
	if len(calls) != 2 {
		t.Fatalf("%d tool calls, want 2: %+v", len(calls), calls)
	}
	if resp.StopReason != llm.StopToolUse {
		t.Errorf("stop reason %q, want %q", resp.StopReason, llm.StopToolUse)
	}
	if calls[0].ID == "" || calls[0].ID == calls[1].ID {
		t.Errorf("tool call ids %q and %q: want distinct and set", calls[0].ID, calls[1].ID)
	}
	for i, want := range []string{`{"word":"glob"}`, `{"word":"grep \"literal\" ü"}`} {
		if calls[i].Name != "lookup" || !sameJSON(calls[i].Args, want) {
			t.Errorf("call %d: %s %s, want lookup %s", i, calls[i].Name, calls[i].Args, want)
		}
	}
	var streamed []llm.ToolCall
	for _, c := range chunks {
		if c.Type == llm.ChunkToolCall {
			streamed = append(streamed, *c.ToolCall)
		}
	}
	if len(streamed) != 2 || streamed[0].ID != calls[0].ID || streamed[1].ID != calls[1].ID ||
		!sameJSON(streamed[1].Args, string(calls[1].Args)) {
		t.Errorf("streamed tool calls %+v differ from the response's %+v", streamed, calls)
	}
}

func sameJSON(a json.RawMessage, b string) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal([]byte(b), &y) == nil && fmt.Sprint(x) == fmt.Sprint(y)
}

func testInOrder(t *testing.T, f Factory) {
	m := f(t, []Answer{{Text: "first", InputTokens: 1, OutputTokens: 1}, {Text: "second", InputTokens: 1, OutputTokens: 1}})
	for _, want := range []string{"first", "second"} {
		if got := generate(t, m, "next").Message.Text(); got != want {
			t.Errorf("answer %q, want %q", got, want)
		}
	}
}

func testStopEarly(t *testing.T, f Factory) {
	m := f(t, []Answer{
		{Text: "an answer that is cut off after its first piece by the caller", InputTokens: 1, OutputTokens: 12},
		{Text: "and the model still answers", InputTokens: 1, OutputTokens: 5},
	})
	for _, err := range m.Stream(t.Context(), request("go")) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		break
	}
	if got := generate(t, m, "again").Message.Text(); got != "and the model still answers" {
		t.Errorf("after a stream stopped early: %q", got)
	}
}

func testCancelled(t *testing.T, f Factory) {
	m := f(t, []Answer{{Text: "never seen", InputTokens: 1, OutputTokens: 1}})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := llm.Generate(ctx, m, request("go"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Generate with a cancelled context: %v, want an error wrapping context.Canceled", err)
	}
}

func testConcurrent(t *testing.T, f Factory) {
	const n = 8
	answers := make([]Answer, n)
	for i := range answers {
		answers[i] = Answer{Text: "same answer", InputTokens: 2, OutputTokens: 2}
	}
	m := f(t, answers)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			resp, err := llm.Generate(t.Context(), m, request("together"))
			if err == nil && resp.Message.Text() != "same answer" {
				err = fmt.Errorf("answer %q", resp.Message.Text())
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
