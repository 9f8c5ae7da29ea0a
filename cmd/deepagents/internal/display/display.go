// Package display writes what the command line shows: text from a model
// or a tool made safe for a terminal and kept to a line, who asks for an
// approval, and what runs used. The text output of run, the approvals on
// a terminal and the interactive session (package tui) all use it, so
// that they say things alike.
package display

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/hooks"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/netproxy"
)

// NoticeWarns reports whether a notice event tells of a hook that failed
// (a status other than 0 and 2, a timeout): shown as a warning, where the
// other notices, and what hooks say for the user, are notes.
func NoticeWarns(e deepagents.Event) bool {
	return e.Name == hooks.NoticeHook && e.Error != ""
}

// NetworkNotice is the Name of the notices that tell of the network
// proxy's decisions (session's networkEvent): a refusal has its reason
// in Error.
const NetworkNotice = "network"

// NoticeQuiet reports whether a notice is for the record only (the jsonl
// output) and not shown as a line: a connection the proxy allowed.
func NoticeQuiet(e deepagents.Event) bool {
	return e.Name == NetworkNotice && e.Error == ""
}

// OneLine keeps s on one line, for an error message on stderr or a
// line of the terminal: newlines and runs of blanks are one space, and
// control characters are dropped (TerminalSafe).
func OneLine(s string) string {
	return strings.Join(strings.Fields(TerminalSafe(strings.ReplaceAll(s, "\n", " "))), " ")
}

// TerminalSafe drops the control characters of s but newlines and tabs:
// what a model or a tool writes must not reach the terminal as escape
// sequences (which could retitle the window, move the cursor over what is
// shown, or worse), nor as bytes that are not UTF-8.
func TerminalSafe(s string) string {
	// A stray byte such as 0x9b is a control sequence to some terminals.
	s = strings.ToValidUTF8(s, "\uFFFD")
	if !strings.ContainsFunc(s, isUnsafeControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isUnsafeControl(r) {
			return -1
		}
		return r
	}, s)
}

func isUnsafeControl(r rune) bool { return r != '\n' && r != '\t' && unicode.IsControl(r) }

// AskedBy names the agent an action request comes from, from its
// namespace: "" for the main agent, "subagent NAME" for a subagent, and
// "subagent NAME › INNER" for a subagent of a subagent. (A namespace
// element is "name:tool_call_id".)
func AskedBy(ns []string) string {
	if len(ns) == 0 {
		return ""
	}
	names := make([]string, len(ns))
	for i, n := range ns {
		names[i], _, _ = strings.Cut(n, ":")
	}
	return "subagent " + strings.Join(names, " › ")
}

// Clip shortens s to at most n runes on one line.
func Clip(s string, n int) string {
	s = OneLine(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// UsageLines says what a run used: a line with the thread and the whole
// run's calls, tokens and cost; then, when a subagent called a model too,
// a line per agent (its own calls) under the agent that started it; and
// under an agent that used several models, a line per model.
func UsageLines(threadID string, t *deepagents.UsageTree, prices map[string]llm.Price) []string {
	calls, u := t.Total()
	cost, unpriced := t.Cost(prices)
	lines := []string{fmt.Sprintf("deepagents: thread %s · %s", threadID, DescribeUsage(calls, u, cost, unpriced))}
	if len(t.Subagents) == 0 && len(t.Models) < 2 {
		return lines
	}
	t.Walk(func(depth int, n *deepagents.UsageTree) {
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
		lines = append(lines, fmt.Sprintf("%s%s: %s", indent, name, DescribeUsage(calls, u, cost, unpriced)))
		if len(n.Models) < 2 {
			return
		}
		for _, m := range n.Models {
			cost, ok := m.Cost(prices)
			unpriced := ""
			if !ok {
				unpriced = m.Model
			}
			lines = append(lines, fmt.Sprintf("%s  · %s: %s", indent, m.Model, DescribeUsage(m.Calls, m.Usage, cost, unpriced)))
		}
	})
	return lines
}

// DescribeUsage says in one line what model calls used and cost; unpriced
// names a model whose price is unknown.
func DescribeUsage(calls int, u llm.Usage, cost float64, unpriced string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d model call", calls)
	if calls != 1 {
		b.WriteByte('s')
	}
	fmt.Fprintf(&b, " · %s tokens in", Thousands(u.InputTokens))
	if u.CacheReadTokens > 0 {
		fmt.Fprintf(&b, " (%s cached)", Thousands(u.CacheReadTokens))
	}
	fmt.Fprintf(&b, ", %s out", Thousands(u.OutputTokens))
	if unpriced != "" {
		fmt.Fprintf(&b, " · cost unknown: no price for %s (add one under prices: in config.yaml)", unpriced)
	} else {
		fmt.Fprintf(&b, " · $%.4f", cost)
	}
	return b.String()
}

// Thousands writes n with commas between thousands.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ContextFill is " · context N of W" (or " · context N" when the model's
// window is unknown) for the last call's context c, or "" before any: a
// figure for a status line, in thousands of estimated tokens.
func ContextFill(c *deepagents.ContextWindow) string {
	if c == nil {
		return ""
	}
	s := " · context " + kilo(c.Total)
	if c.Window > 0 {
		s += fmt.Sprintf(" of %s (%d%%)", kilo(c.Window), 100*c.Total/c.Window)
	}
	return s
}

// DescribeContext says what filled a model call's context window, part by
// part, largest tool results first.
func DescribeContext(c *deepagents.ContextWindow) string {
	var b strings.Builder
	b.WriteString("context at the last model call, estimated: " + kilo(c.Total) + " tokens")
	if c.Window > 0 {
		fmt.Fprintf(&b, " of %s (%d%%)", kilo(c.Window), 100*c.Total/c.Window)
	}
	type part struct {
		name string
		n    int
	}
	parts := []part{{"system prompt", c.System}, {"tool definitions", c.Tools}, {"user messages", c.User}, {"assistant messages", c.Assistant}}
	for tool, n := range c.ToolResults {
		parts = append(parts, part{OneLine(tool) + " results", n})
	}
	slices.SortFunc(parts[4:], func(a, b part) int { return cmp.Or(b.n-a.n, strings.Compare(a.name, b.name)) })
	for _, p := range parts {
		fmt.Fprintf(&b, "\n  %-24s %7s", p.name, kilo(p.n))
	}
	return b.String()
}

// kilo writes n tokens as "950", "12.3k" or "200k".
func kilo(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n)
	case n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
}

// Ended says, for a run_end, why a guard ended the run early ("stopped
// (loop): read_file repeated 8 times ..."); "" when none did. A stop
// hook's reason (no code) is the hook's to tell.
func Ended(e deepagents.Event) string {
	if e.Type != deepagents.EventRunEnd || e.EndCode == "" {
		return ""
	}
	return "stopped (" + string(e.EndCode) + "): " + OneLine(TerminalSafe(e.EndReason))
}

// DescribeNetwork says what sandboxed commands exchanged through the
// network proxy, a line per host, and the bytes sent in all (which its
// cap bounds).
func DescribeNetwork(hosts []netproxy.HostUsage, bytesOut int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "network (through the proxy): %s sent in all", Bytes(bytesOut))
	if len(hosts) == 0 {
		b.WriteString("; no host asked for yet")
	}
	for _, h := range hosts {
		fmt.Fprintf(&b, "\n  %-32s %d connections", TerminalSafe(h.Host), h.Connections)
		if h.Refused > 0 {
			fmt.Fprintf(&b, ", %d refused", h.Refused)
		}
		fmt.Fprintf(&b, ", %s out, %s in", Bytes(h.BytesOut), Bytes(h.BytesIn))
	}
	return b.String()
}

// Bytes writes n in B, KB, MB, GB or TB (powers of 1,024): "512 B",
// "12.3 KB".
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 3; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "KMGT"[exp])
}
