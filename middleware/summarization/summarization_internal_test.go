package summarization

import (
	"strings"
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
		s := &Middleware{cfg: Config{KeepMessages: tt.keep}}
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
	s := &Middleware{cfg: Config{KeepTokens: 2 * EstimateTokens(msgs[len(msgs)-1:])}}
	if got := s.newCutoff(msgs, 0); got != 5 {
		t.Errorf("cutoff = %d, want 5 (the last call with its result, and the answer)", got)
	}
}

func TestWriteTranscript(t *testing.T) {
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Parts: []llm.Part{llm.Text("be brief")}},
		llm.UserText("list the files"),
		{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("Listing.")},
			ToolCalls: []llm.ToolCall{{ID: "c1", Name: "ls", Args: []byte(`{"path":"/d0"}`)}}},
		llm.ToolResult("c1", "ls", "/d0/a.txt\n/d0/b.txt", false),
		llm.ToolResult("c2", "read_file", "Error: File '/x' not found", true),
	}
	for _, c := range []struct {
		clip int
		want string
	}{
		{0, "System: be brief\n\nUser: list the files\n\nAssistant: Listing.\n\nAssistant called ls: {\"path\":\"/d0\"}\n\n" +
			"Tool result (ls): /d0/a.txt\n/d0/b.txt\n\nTool error (read_file): Error: File '/x' not found\n\n"},
		{9, "System: be brief\n\nUser: list the  [... 5 more characters]\n\nAssistant: Listing.\n\n" +
			"Assistant called ls: {\"path\":\" [... 5 more characters]\n\nTool result (ls): /d0/a.txt [... 10 more characters]\n\n" +
			"Tool error (read_file): Error: Fi [... 17 more characters]\n\n"},
	} {
		var b strings.Builder
		writeTranscript(&b, msgs, c.clip)
		if b.String() != c.want {
			t.Errorf("clip %d:\n got %q\nwant %q", c.clip, b.String(), c.want)
		}
		if c.clip == 0 && transcriptSize(msgs) < len(c.want) {
			t.Errorf("transcriptSize %d, under the %d bytes written", transcriptSize(msgs), len(c.want))
		}
	}
}
