package subagents

import (
	"fmt"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
)

// TestForkedConversation: the copy ends before the assistant message that
// holds the call, even when results of its sibling calls already follow it
// (a resumed turn), and appending to it leaves the caller's untouched.
func TestForkedConversation(t *testing.T) {
	turn := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "task"}, {ID: "b", Name: "task"}}}
	msgs := []llm.Message{
		llm.UserText("fact"),
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "old", Name: "ls"}}},
		llm.ToolResult("old", "ls", "x", false),
		llm.AssistantText("ok"),
		llm.UserText("go"),
		turn,
		llm.ToolResult("a", "task", "done a", false),
	}
	for _, tc := range []struct {
		call string
		want int
	}{{"b", 5}, {"a", 5}, {"missing", 7}} {
		got := forkedConversation(msgs[:len(msgs):len(msgs)], tc.call)
		if len(got) != tc.want {
			t.Errorf("call %s: %d messages, want %d", tc.call, len(got), tc.want)
		}
		_ = append(got, llm.UserText("task"))
	}
	got := forkedConversation(msgs[:5], "b")
	got = append(got, llm.UserText("task"))
	got[0] = llm.UserText("changed")
	if msgs[0].Text() != "fact" || msgs[5].Role != llm.RoleAssistant {
		t.Error("the caller's conversation changed")
	}
}

// BenchmarkForkedConversation: what a fork costs the caller: a copy of
// the message headers (the contents are shared), linear in the
// conversation's length.
func BenchmarkForkedConversation(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		msgs := make([]llm.Message, 0, n+1)
		for i := range n {
			msgs = append(msgs, llm.UserText(fmt.Sprint("message ", i)))
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "t", Name: "task"}}})
		b.Run(fmt.Sprint(n, " messages"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				forkedConversation(msgs, "t")
			}
		})
	}
}
