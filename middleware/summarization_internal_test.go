package middleware

import (
	"testing"

	"github.com/deepagents-go/deepagents/llm"
)

// conv builds a conversation from a pattern: u user, a assistant text,
// c assistant with one tool call, C with two, t tool result.
func conv(pattern string) []llm.Message {
	var out []llm.Message
	for _, r := range pattern {
		switch r {
		case 'u':
			out = append(out, llm.UserText("question"))
		case 'a':
			out = append(out, llm.AssistantText("answer"))
		case 'c':
			out = append(out, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "x", Name: "t"}}})
		case 'C':
			out = append(out, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "x", Name: "t"}, {ID: "y", Name: "t"}}})
		case 't':
			out = append(out, llm.ToolResult("x", "t", "result", false))
		}
	}
	return out
}

func TestNewCutoffNeverSplitsToolPairs(t *testing.T) {
	tests := []struct {
		pattern string
		keep    int
		want    int
	}{
		{"uauaua", 2, 4},
		{"ucttttt", 2, 1}, // all results belong to one call: keep the call
		{"uctctct", 2, 5}, // would start at a result: move back to its call
		{"uctctct", 1, 5}, // the newest message is a result: keep its call
		{"uCttua", 2, 4},  // a boundary between whole pairs
		{"uCttua", 3, 1},  // inside a pair: back to the call
		{"ua", 6, 0},      // fewer messages than kept
		{"u", 6, 0},
	}
	for _, tt := range tests {
		s := &Summarization{KeepMessages: tt.keep}
		msgs := conv(tt.pattern)
		got := s.newCutoff(msgs, 0)
		if got != tt.want {
			t.Errorf("%s keep %d: cutoff %d, want %d", tt.pattern, tt.keep, got, tt.want)
		}
		if got < len(msgs) && msgs[got].Role == llm.RoleTool {
			t.Errorf("%s keep %d: cutoff at a tool result", tt.pattern, tt.keep)
		}
	}
}

func TestNewCutoffByTokens(t *testing.T) {
	msgs := conv("uctctcta")
	s := &Summarization{KeepTokens: 2 * EstimateTokens(msgs[len(msgs)-1:])}
	if got := s.newCutoff(msgs, 0); got != 5 {
		t.Errorf("cutoff = %d, want 5 (the last call with its result, and the answer)", got)
	}
}
