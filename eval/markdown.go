package eval

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Markdown writes the scorecard as Markdown tables: a row per task and
// the total.
func (sc *Scorecard) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Eval: %s, k = %d\n\n", sc.Agent, sc.K)
	fmt.Fprintf(&b, "| task | trials | passed | pass@%d | avg@%d | input | cache write | cache read | output | cost | steps | wall | outcomes |\n", sc.K, sc.K)
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, ts := range append(slices.Clone(sc.Tasks), sc.Total) {
		name := ts.Task
		if name == "all" {
			name = "**all**"
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %.3f | %.3f | %d | %d | %d | %d | $%.4f | %d | %s | %s |\n",
			name, ts.Trials, ts.Passed, ts.PassAtK, ts.AvgAtK, ts.Usage.InputTokens, ts.Usage.CacheWriteTokens,
			ts.Usage.CacheReadTokens, ts.Usage.OutputTokens, ts.Usage.Cost, ts.Usage.Steps, ts.Wall.Round(time.Millisecond), outcomes(ts.Outcomes))
	}
	return b.String()
}

// outcomes writes counts of outcomes, in a fixed order.
func outcomes(m map[Outcome]int) string {
	var parts []string
	for _, o := range []Outcome{Passed, Failed, AgentTimeout, AgentError, VerifierError} {
		if n := m[o]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", o, n))
		}
	}
	return strings.Join(parts, ", ")
}
