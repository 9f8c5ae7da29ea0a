package server_test

import (
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
)

// TestStreamSubgraphs streams a run whose agent hands work to a subagent:
// with stream_subgraphs the subagent's messages come as "messages|<its
// namespace>"; without, only the task call and its result show. Updates
// name the node that made each change.
func TestStreamSubgraphs(t *testing.T) {
	for _, subgraphs := range []bool{false, true} {
		f := newFixture(t, servertest.Options{},
			replay.Turn{ToolCalls: []llm.ToolCall{servertest.Call("c1", "task", `{"description":"look it up","subagent_type":"general-purpose"}`)}},
			replay.Turn{Agent: "general-purpose", Content: "found it"},
			replay.Turn{Content: "done"},
		)
		evs, _ := f.Stream("/runs/stream", map[string]any{
			"input":            map[string]any{"messages": []any{servertest.Human("go")}},
			"stream_mode":      []string{"messages-tuple", "updates"},
			"stream_subgraphs": subgraphs,
		})
		var sub, updates int
		for _, e := range evs {
			switch {
			case strings.HasPrefix(e.Name, "messages|"):
				sub++
				if !strings.Contains(string(e.Data), "found it") {
					t.Errorf("subagent event %s: %s", e.Name, e.Data)
				}
			case e.Name == "updates":
				updates++
				if !strings.Contains(string(e.Data), `{"model":`) && !strings.Contains(string(e.Data), `{"tools":`) {
					t.Errorf("update %s", e.Data)
				}
			case strings.HasPrefix(e.Name, "updates|"):
				sub++
			}
		}
		if (sub > 0) != subgraphs {
			t.Errorf("stream_subgraphs %v: %d subagent events", subgraphs, sub)
		}
		if updates != 3 { // the task call, its result, the answer
			t.Errorf("stream_subgraphs %v: %d updates, want 3", subgraphs, updates)
		}
	}
}
