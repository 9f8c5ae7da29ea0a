package tui

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/deepagents-go/deepagents"

	tea "charm.land/bubbletea/v2"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/middleware/filesystem"
)

// toolResult is a tool's result as the session keeps it for ctrl+o.
type toolResult struct {
	indent, tool, content string
	isError               bool
}

const (
	// maxResults bounds the results of a task that ctrl+o shows: the
	// last ones.
	maxResults = 10
	// maxExpandedLines bounds the lines of one result shown in full.
	maxExpandedLines = 200
)

// toolResult is how a result shows: folded to a line, or in full while
// ctrl+o expands them. The task's results are kept for ctrl+o.
func (m *tuiModel) toolResult(indent string, e deepagents.Event) string {
	r := toolResult{indent: indent, tool: e.Name, content: e.Content, isError: e.IsError}
	m.results = append(m.results, r)
	if len(m.results) > maxResults {
		m.results = m.results[len(m.results)-maxResults:]
	}
	var diff []string
	if b, ok := m.befores[e.ToolCallID]; ok {
		delete(m.befores, e.ToolCallID)
		if !e.IsError {
			diff = boundLines(fileDiff(e.Name, m.calls[e.ToolCallID], b.text, b.known), maxResultDiffLines)
		}
	}
	content := e.Content
	if e.Name == filesystem.ReadFileTool && !e.IsError {
		content = readSummary(m.calls[e.ToolCallID], content)
	}
	delete(m.calls, e.ToolCallID)
	line := indent + "  " + dim.Render("⎿ ") + fold(content, e.IsError, resultRoom(indent, m.width))
	if m.expanded {
		line = expandedResult(r)
	}
	for _, l := range diff {
		line += "\n" + indent + "  " + l
	}
	return line
}

// readHeader is the header of a read_file result (CONTRACT.md).
var readHeader = regexp.MustCompile(`(?m)^@@ lines (\d+)-(\d+)(?: \| next offset (\d+))? @@$`)

// readSummary is what a folded read_file result says: the file and the
// lines read, and where the file goes on (the header says so to the
// model, in its terms). A result without the header is as it is.
func readSummary(args json.RawMessage, content string) string {
	h := readHeader.FindStringSubmatchIndex(content)
	if h == nil {
		return content
	}
	var in struct {
		FilePath string `json:"file_path"`
	}
	_ = json.Unmarshal(args, &in)
	name := cmp.Or(display.OneLine(in.FilePath), "the file")
	out := fmt.Sprintf("read %s, lines %s-%s", name, content[h[2]:h[3]], content[h[4]:h[5]])
	if h[6] >= 0 {
		if next, err := strconv.Atoi(content[h[6]:h[7]]); err == nil {
			out += fmt.Sprintf(" (more from line %d)", next+1)
		}
	}
	// A notice before the header (a line cut, an offset clamped) counts
	// as the lines after the summary; ctrl+o shows the whole result.
	if notice := strings.TrimSpace(content[:h[0]]); notice != "" {
		out += "\n" + notice
	}
	return out
}

// maxResultDiffLines bounds the diff shown under an edit's result.
const maxResultDiffLines = 20

// called keeps the arguments of an edit_file or write_file call whose
// file was read before it ran: its result shows the diff it made.
func (m *tuiModel) called(e deepagents.Event) {
	if e.Name != filesystem.EditFileTool && e.Name != filesystem.WriteFileTool && e.Name != filesystem.ReadFileTool {
		return
	}
	if m.calls == nil {
		m.calls = map[string]json.RawMessage{}
	}
	m.calls[e.ToolCallID] = e.Args
}

// boundLines keeps the first n lines, and says how many more there are.
func boundLines(lines []string, n int) []string {
	if len(lines) <= n {
		return lines
	}
	return append(lines[:n:n], dim.Render(fmt.Sprintf("  … %d more lines", len(lines)-n)))
}

// toggleExpanded is ctrl+o: the task's last results shown in full, and
// the next ones as they come, until ctrl+o folds them again.
func (m *tuiModel) toggleExpanded() tea.Cmd {
	m.expanded = !m.expanded
	if !m.expanded {
		return m.print(dim.Render("tool results fold to a line again (ctrl+o expands them)"))
	}
	lines := []string{dim.Render("tool results in full (ctrl+o folds them)")}
	if len(m.results) == 0 {
		lines[0] = dim.Render("tool results in full from now on (ctrl+o folds them); none yet in this task")
	}
	for _, r := range m.results {
		lines = append(lines, expandedResult(r))
	}
	return m.print(lines...)
}

// expandedResult is a result in full, bounded to maxExpandedLines lines.
func expandedResult(r toolResult) string {
	content := strings.TrimRight(display.TerminalSafe(r.content), "\n")
	lines := strings.Split(content, "\n")
	more := 0
	if len(lines) > maxExpandedLines {
		lines, more = lines[:maxExpandedLines], len(lines)-maxExpandedLines
	}
	var b strings.Builder
	b.WriteString(r.indent + "  " + dim.Render("⎿ "+display.OneLine(r.tool)))
	for _, l := range lines {
		l = strings.ReplaceAll(l, "\t", "    ")
		if r.isError {
			l = red.Render(l)
		}
		b.WriteString("\n" + r.indent + "    " + l)
	}
	if more > 0 {
		b.WriteString("\n" + r.indent + "    " + dim.Render(fmt.Sprintf("… %d more lines", more)))
	}
	return b.String()
}
