package display

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
)

// The summary shows the run's total, then each agent under the one that
// started it, and the models of an agent that used several.
func TestUsageLines(t *testing.T) {
	prices := map[string]llm.Price{"a:big": {Input: 10, Output: 10}, "a:small": {Input: 1, Output: 1}}
	use := func(model string, in int, ns ...string) agent.Event {
		return agent.Event{Type: agent.EventUsage, Name: model, Namespace: ns, Usage: &llm.Usage{InputTokens: in}}
	}
	for _, c := range []struct {
		name   string
		events []agent.Event
		want   []string
	}{
		{"one agent, one model", []agent.Event{use("a:big", 100_000), use("a:big", 100_000)}, []string{
			"deepagents: thread T · 2 model calls · 200,000 tokens in, 0 out · $2.0000",
		}},
		{"subagents nested, models split", []agent.Event{
			use("a:big", 100_000), use("a:small", 1_000_000),
			use("a:small", 1_000_000, "researcher:c1"),
			use("x:unknown", 5, "researcher:c1", "general-purpose:c7"),
		}, []string{
			"deepagents: thread T · 4 model calls · 2,100,005 tokens in, 0 out · cost unknown: no price for x:unknown (add one under prices: in config.yaml)",
			"  main agent: 2 model calls · 1,100,000 tokens in, 0 out · $2.0000",
			"    · a:big: 1 model call · 100,000 tokens in, 0 out · $1.0000",
			"    · a:small: 1 model call · 1,000,000 tokens in, 0 out · $1.0000",
			"    researcher:c1: 1 model call · 1,000,000 tokens in, 0 out · $1.0000",
			"      general-purpose:c7: 1 model call · 5 tokens in, 0 out · cost unknown: no price for x:unknown (add one under prices: in config.yaml)",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var tree agent.UsageTree
			for _, e := range c.events {
				tree.Add(e)
			}
			if diff := cmp.Diff(c.want, UsageLines("T", &tree, prices)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if got := strings.Join(UsageLines("T", &agent.UsageTree{}, nil), "\n"); got != "deepagents: thread T · 0 model calls · 0 tokens in, 0 out · $0.0000" {
		t.Errorf("no usage: %q", got)
	}
}

func TestAskedBy(t *testing.T) {
	for _, c := range []struct {
		ns   []string
		want string
	}{
		{nil, ""},
		{[]string{"critic:call_1"}, "subagent critic"},
		{[]string{"critic:call_1", "researcher:toolu_9"}, "subagent critic › researcher"},
	} {
		if got := AskedBy(c.ns); got != c.want {
			t.Errorf("%v: %q, want %q", c.ns, got, c.want)
		}
	}
}

func TestDescribeContext(t *testing.T) {
	c := &agent.ContextWindow{System: 900, Tools: 2500, User: 40, Assistant: 1200,
		ToolResults: map[string]int{"read_file": 20074, "grep": 290, "task": 290}, Total: 25294, Window: 200000}
	want := `context at the last model call, estimated: 25.3k tokens of 200k (12%)
  system prompt                900
  tool definitions            2.5k
  user messages                 40
  assistant messages          1.2k
  read_file results          20.1k
  grep results                 290
  task results                 290`
	if got := DescribeContext(c); got != want {
		t.Errorf("DescribeContext:\n%s\nwant\n%s", got, want)
	}
	if got := ContextFill(c); got != " · context 25.3k of 200k (12%)" {
		t.Errorf("ContextFill = %q", got)
	}
	if ContextFill(nil) != "" || ContextFill(&agent.ContextWindow{Total: 12}) != " · context 12" {
		t.Error("ContextFill without a call, or without a window")
	}
}
