package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/deepagents-go/deepagents"

	"charm.land/lipgloss/v2"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/middleware/filesystem"
	"github.com/deepagents-go/deepagents/middleware/todos"
)

// fold shows a tool's result in one line: its first line and how many
// more there are.
func fold(content string, isError bool, room int) string {
	content = strings.TrimRight(content, "\n")
	first, rest, more := strings.Cut(content, "\n")
	if more {
		room -= len(" (+999 lines)") // what follows the line
	}
	line := display.Clip(first, max(room, 20))
	if more {
		n := strings.Count(rest, "\n") + 1
		line += dim.Render(fmt.Sprintf(" (+%d lines)", n))
	}
	if isError {
		return red.Render(line)
	}
	return line
}

// callLine is a tool call as the session shows it, one line within width
// (0: unknown, 100 columns of arguments).
func callLine(indent, name string, args []byte, width int) string {
	name = display.OneLine(name)
	room := 100
	if width > 0 {
		room = width - lipgloss.Width(indent) - len("● ()") - lipgloss.Width(name) - 1
	}
	return indent + green.Render("●") + " " + bold.Render(name) + dim.Render("("+display.Clip(string(args), max(room, 20))+")")
}

// resultRoom is how many columns a folded result's line has within width
// (0: unknown, 100) under indent.
func resultRoom(indent string, width int) int {
	if width <= 0 {
		return 100
	}
	return width - lipgloss.Width(indent) - len("  ⎿ ") - 1
}

// renderTodos is the live todo list.
func renderTodos(plan []todos.Todo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", bold.Render(fmt.Sprintf("todos %d/%d", todos.Done(plan), len(plan))))
	for _, t := range plan {
		t.Content = display.OneLine(t.Content) // the model's words
		switch t.Status {
		case todos.Completed:
			b.WriteString("  " + green.Render("[x]") + " " + dim.Render(t.Content) + "\n")
		case todos.InProgress:
			b.WriteString("  " + yellow.Render("[>]") + " " + bold.Render(t.Content) + "\n")
		default:
			b.WriteString("  [ ] " + t.Content + "\n")
		}
	}
	return b.String()
}

// maxDiffLines bounds the lines of a diff shown before approval.
const maxDiffLines = 40

// renderApproval shows a call awaiting approval: an edit or a write as
// a diff of the file as it is (before; known says whether it could be
// read) with line numbers and context, or, when the file cannot be read
// or the edit placed, as the lines it removes and adds; a command as
// itself, anything else as its arguments.
func renderApproval(req deepagents.ActionRequest, before string, known bool, width int) string {
	var b strings.Builder
	who := ""
	if by := display.AskedBy(req.Namespace); by != "" {
		who = dim.Render(" · asked by " + by)
	}
	fmt.Fprintf(&b, "%s %s%s\n", yellow.Render("?"), bold.Render(req.Tool), who)
	var args struct {
		FilePath  string `json:"file_path"`
		Content   string `json:"content"`
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
		Command   string `json:"command"`
	}
	_ = json.Unmarshal(req.Args, &args)
	// The arguments are the model's: nothing in them reaches the terminal
	// as an escape sequence.
	for _, f := range []*string{&args.FilePath, &args.Content, &args.OldString, &args.NewString, &args.Command} {
		*f = display.TerminalSafe(*f)
	}
	var lines []string
	switch req.Tool {
	case filesystem.EditFileTool, filesystem.WriteFileTool:
		if lines = fileDiff(req.Tool, req.Args, before, known); lines != nil {
			break
		}
		if req.Tool == filesystem.WriteFileTool {
			lines = append(lines, dim.Render("  "+args.FilePath+" (new content)"))
			rows := unifiedDiff("", args.Content, diffContext)
			lines = append(lines, styleDiff(rows, formatDiff(rows), "  ")...)
			break
		}
		lines = append(lines, dim.Render("  "+args.FilePath))
		lines = append(lines, diffLines("-", args.OldString, red)...)
		lines = append(lines, diffLines("+", args.NewString, green)...)
	case filesystem.ExecuteTool:
		lines = append(lines, "  $ "+args.Command)
	default:
		lines = append(lines, "  "+display.Clip(string(req.Args), max(width-4, 60)))
	}
	if len(lines) > maxDiffLines {
		n := len(lines) - maxDiffLines
		lines = append(lines[:maxDiffLines], dim.Render(fmt.Sprintf("  … %d more lines", n)))
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.String()
}

func diffLines(mark, text string, style lipgloss.Style) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		out = append(out, style.Render("  "+mark+" "+l))
	}
	return out
}

// liveTail is what the live view shows of an answer still streaming: its
// last lines, as many as fit the window, wrapped. Only the end of the
// text is wrapped, so that a long answer does not cost more at every
// frame as it grows; the whole answer is printed once it is complete.
func liveTail(text string, width, height int) string {
	if width <= 0 || height <= 0 {
		return wrapText(text, width)
	}
	keep := tailRows(height)
	// The lines before the last keep, and the bytes before the last
	// screenful of a line that never breaks, cannot be on the screen.
	if i := lastLines(text, keep); i > 0 {
		text = text[i:]
	}
	if most := keep * width * 4; len(text) > most {
		i := len(text) - most
		// To the next rune's start (a few bytes at most, even in invalid
		// UTF-8, which terminalSafe then drops).
		for j := 0; j < utf8.UTFMax && i < len(text) && !utf8.RuneStart(text[i]); j++ {
			i++
		}
		text = text[i:]
	}
	lines := strings.Split(wrapText(text, width), "\n")
	if len(lines) > keep {
		lines = lines[len(lines)-keep:]
	}
	return strings.Join(lines, "\n")
}

// tailRows is how many rows the live view gives an answer streaming in a
// window of height rows: half of what a view may take (see printRows),
// so that the window may narrow to half its width as it streams and the
// rows the terminal then rewraps the view onto still fit on the screen.
// (The rows a terminal pushes into its scrollback to make room are out of
// the renderer's reach, which would leave a copy of the answer there.)
func tailRows(height int) int { return max((height-printRows(height))/2, 1) }

// lastLines returns where the last n lines of text begin.
func lastLines(text string, n int) int {
	i := len(text)
	for ; n > 0; n-- {
		j := strings.LastIndexByte(text[:i], '\n')
		if j < 0 {
			return 0
		}
		i = j
	}
	return i + 1
}

// wrapText wraps text at width (no wrapping when the width is unknown).
// Its lines are not padded: a line as wide as the window would take two
// rows once a narrower window rewraps it.
func wrapText(text string, width int) string {
	text = display.TerminalSafe(text)
	if width <= 0 {
		return text
	}
	lines := strings.Split(lipgloss.NewStyle().Width(width).Render(text), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}
