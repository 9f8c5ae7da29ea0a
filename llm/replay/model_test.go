package replay_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string
		turns   int
	}{
		{"full", `{"context_window":1000,"turns":[{"content":"hi","tool_calls":[{"id":"c","name":"ls","args":{"path":"/"}}],"usage":{"input_tokens":1,"output_tokens":2},"agent":"sub","expect":{"system_contains":["x"]}}]}`, "", 1},
		{"empty", `{"turns":[]}`, "", 0},
		{"unknown field", `{"turns":[{"contents":"typo"}]}`, `unknown field "contents"`, 0},
		{"tool call without name", `{"turns":[{"tool_calls":[{"id":"c"}]}]}`, "turn 1, tool call 1: missing name", 0},
		{"not JSON", `turns:`, "parsing script", 0},
		{"unknown expectation", `{"turns":[{"expect":{"system_has":["x"]}}]}`, `unknown field "system_has"`, 0},
		{"defaults", `{"turns":[{"content":"hi"}],"defaults":{"summarizer":{"content":"a summary"}}}`, "", 1},
		{"default tool call without name", `{"turns":[],"defaults":{"sub":{"tool_calls":[{"id":"c"}]}}}`, `default reply of "sub", tool call 1: missing name`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := replay.Parse([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Turns) != tt.turns {
				t.Errorf("turns = %d", len(s.Turns))
			}
		})
	}
}

func generate(ctx context.Context, m llm.Model, req *llm.Request) (*llm.Response, error) {
	return llm.Generate(ctx, m, req)
}

func TestTurnsPerAgentInOrder(t *testing.T) {
	m := replay.New(
		replay.Turn{Content: "main 1"},
		replay.Turn{Agent: "researcher", Content: "research 1"},
		replay.Turn{Agent: "main", Content: "main 2"},
		replay.Turn{Agent: "researcher", Content: "research 2"},
	)
	ctx := context.Background()
	sub := llm.WithAgent(ctx, "researcher")
	for _, c := range []struct {
		ctx  context.Context
		want string
	}{{sub, "research 1"}, {ctx, "main 1"}, {sub, "research 2"}, {llm.WithAgent(ctx, "main"), "main 2"}} {
		resp, err := generate(c.ctx, m, &llm.Request{})
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Message.Text(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	if m.Remaining() != 0 {
		t.Errorf("remaining = %d", m.Remaining())
	}
	_, err := generate(sub, m, &llm.Request{})
	if !errors.Is(err, replay.ErrExhausted) || !strings.Contains(err.Error(), `agent "researcher" made call 3`) {
		t.Errorf("err = %v", err)
	}
}

func TestExpectations(t *testing.T) {
	req := &llm.Request{
		System:   "You are a careful agent.",
		Messages: []llm.Message{llm.UserText("fix the bug"), {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "1", Name: "read_file", Args: []byte(`{"file_path":"/main.go"}`)}}}, llm.ToolResult("1", "read_file", "package main", false)},
		Tools:    []llm.ToolSpec{{Name: "read_file"}},
	}
	tests := []struct {
		name   string
		expect replay.Expect
		fail   string
	}{
		{"all met", replay.Expect{SystemContains: []string{"careful"}, SystemExclude: []string{"reckless"}, MessagesContain: []string{"fix the bug", "/main.go"}, MessagesExclude: []string{"secret"}, LastMessageContains: []string{"package main"}, ToolsInclude: []string{"read_file"}, ToolsExclude: []string{"execute"}}, ""},
		{"system", replay.Expect{SystemContains: []string{"reckless"}}, `system prompt does not contain "reckless"`},
		{"system exclude", replay.Expect{SystemExclude: []string{"careful"}}, `system prompt contains "careful"`},
		{"messages", replay.Expect{MessagesContain: []string{"nothing"}}, `no message contains "nothing"`},
		{"messages exclude", replay.Expect{MessagesExclude: []string{"bug"}}, `a message contains "bug"`},
		{"last", replay.Expect{LastMessageContains: []string{"fix"}}, `the last message does not contain "fix"`},
		{"tools", replay.Expect{ToolsInclude: []string{"grep"}}, `tool "grep" is not offered`},
		{"tools exclude", replay.Expect{ToolsExclude: []string{"read_file"}}, `tool "read_file" is offered`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.expect
			m := replay.New(replay.Turn{Content: "ok", Expect: &e})
			_, err := generate(context.Background(), m, req)
			if tt.fail == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, replay.ErrExpectation) || !strings.Contains(err.Error(), tt.fail) {
				t.Errorf("err = %v, want %q", err, tt.fail)
			}
		})
	}
}

func TestStreamChunksAndConcurrency(t *testing.T) {
	var turns []replay.Turn
	for range 50 {
		turns = append(turns, replay.Turn{Reasoning: "hmm", Content: "text", ToolCalls: []llm.ToolCall{{Name: "ls"}}, Usage: llm.Usage{InputTokens: 3}})
	}
	m := replay.New(turns...).Record()
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var kinds []llm.ChunkType
			for c, err := range m.Stream(context.Background(), &llm.Request{}) {
				if err != nil {
					t.Error(err)
					return
				}
				kinds = append(kinds, c.Type)
				if c.Type == llm.ChunkDone {
					if c.Response.StopReason != llm.StopToolUse || c.Response.Usage.InputTokens != 3 || string(c.Response.Message.ToolCalls[0].Args) != "{}" {
						t.Errorf("response = %+v", c.Response)
					}
				}
			}
			want := []llm.ChunkType{llm.ChunkReasoning, llm.ChunkText, llm.ChunkToolCall, llm.ChunkDone}
			if len(kinds) != len(want) {
				t.Errorf("chunks = %v", kinds)
			}
		}()
	}
	wg.Wait()
	if m.Remaining() != 0 || len(m.Requests()) != 50 {
		t.Errorf("remaining %d, recorded %d", m.Remaining(), len(m.Requests()))
	}
}

func TestRegistry(t *testing.T) {
	r := &llm.Registry{}
	replay.Register(r)
	if _, err := r.New(context.Background(), "replay:/does/not/exist.json"); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("err = %v", err)
	}
	if _, err := r.New(context.Background(), "other:x"); !errors.Is(err, llm.ErrUnknownProvider) {
		t.Errorf("err = %v", err)
	}
	if _, err := r.New(context.Background(), "replay:"); !errors.Is(err, llm.ErrBadSpec) {
		t.Errorf("err = %v", err)
	}
}

func TestDefaultReplies(t *testing.T) {
	s, err := replay.Parse([]byte(`{"turns":[{"agent":"summarizer","content":"first"},{"content":"main 1"}],
		"defaults":{"summarizer":{"content":"again"},"worker":{"tool_calls":[{"name":"ls"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	m := replay.NewFromScript(s)
	call := func(agent string) (*llm.Response, error) {
		return llm.Generate(llm.WithAgent(context.Background(), agent), m, &llm.Request{Messages: []llm.Message{llm.UserText("x")}})
	}
	// The scripted turn comes first, then the default, as often as asked.
	for i, want := range []string{"first", "again", "again", "again"} {
		resp, err := call("summarizer")
		if err != nil || resp.Message.Text() != want {
			t.Fatalf("summarizer call %d = %v, %v; want %q", i+1, resp, err, want)
		}
	}
	// A default's tool calls get a fresh id each time.
	a, err1 := call("worker")
	b, err2 := call("worker")
	if err1 != nil || err2 != nil || a.Message.ToolCalls[0].ID == b.Message.ToolCalls[0].ID {
		t.Fatalf("default tool call ids %v / %v (%v, %v)", a, b, err1, err2)
	}
	// An agent without a default still runs out.
	if _, err := call("main"); err != nil {
		t.Fatal(err)
	}
	if _, err := call("main"); !errors.Is(err, replay.ErrExhausted) {
		t.Fatalf("main past its script: %v, want ErrExhausted", err)
	}
	if m.Remaining() != 0 {
		t.Errorf("Remaining = %d; defaults are not turns", m.Remaining())
	}
}
