package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
)

// usageLines says what a run used: a line with the thread and the whole
// run's calls, tokens and cost; then, when a subagent called a model too,
// a line per agent (its own calls) under the agent that started it; and
// under an agent that used several models, a line per model.
func usageLines(threadID string, t *agent.UsageTree, prices map[string]llm.Price) []string {
	calls, u := t.Total()
	cost, unpriced := t.Cost(prices)
	lines := []string{fmt.Sprintf("deepagents: thread %s · %s", threadID, describeUsage(calls, u, cost, unpriced))}
	if len(t.Subagents) == 0 && len(t.Models) < 2 {
		return lines
	}
	t.Walk(func(depth int, n *agent.UsageTree) {
		if len(n.Models) == 0 {
			return // an agent that only started others
		}
		indent := strings.Repeat("  ", depth+1)
		name := n.Agent
		if depth == 0 {
			name = "main agent"
		}
		calls, u := n.Own()
		cost, unpriced := n.OwnCost(prices)
		lines = append(lines, fmt.Sprintf("%s%s: %s", indent, name, describeUsage(calls, u, cost, unpriced)))
		if len(n.Models) < 2 {
			return
		}
		for _, m := range n.Models {
			cost, ok := m.Cost(prices)
			unpriced := ""
			if !ok {
				unpriced = m.Model
			}
			lines = append(lines, fmt.Sprintf("%s  · %s: %s", indent, m.Model, describeUsage(m.Calls, m.Usage, cost, unpriced)))
		}
	})
	return lines
}

// describeUsage says in one line what model calls used and cost; unpriced
// names a model whose price is unknown.
func describeUsage(calls int, u llm.Usage, cost float64, unpriced string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d model call", calls)
	if calls != 1 {
		b.WriteByte('s')
	}
	fmt.Fprintf(&b, " · %s tokens in", thousands(u.InputTokens))
	if u.CacheReadTokens > 0 {
		fmt.Fprintf(&b, " (%s cached)", thousands(u.CacheReadTokens))
	}
	fmt.Fprintf(&b, ", %s out", thousands(u.OutputTokens))
	if unpriced != "" {
		fmt.Fprintf(&b, " · cost unknown: no price for %s (add one under prices: in config.yaml)", unpriced)
	} else {
		fmt.Fprintf(&b, " · $%.4f", cost)
	}
	return b.String()
}

// thousands writes n with commas between thousands.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
