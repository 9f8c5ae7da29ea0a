package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/middleware/filesystem"
)

// diffRow is a row of a diff: a line kept (' '), removed ('-') or added
// ('+'), with its number in the file after the change (before it, for a
// line removed), or a gap between hunks ('…').
type diffRow struct {
	op   rune
	num  int
	text string
}

const (
	// diffContext is how many unchanged lines a diff shows around a change.
	diffContext = 3
	// maxDiffCells bounds the work of a diff (lines removed × added
	// between the common start and end): beyond, every such line is shown
	// removed and then added.
	maxDiffCells = 1 << 20
	// maxPreviewBytes bounds the file a diff is shown against.
	maxPreviewBytes = 512 << 10
)

// splitLines is text's lines, without the newline at its end.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// lineDiff is every row of the diff from a to b: the longest common
// subsequence of their lines, kept, with what differs removed and added.
func lineDiff(a, b []string) []diffRow {
	var rows []diffRow
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		rows = append(rows, diffRow{' ', pre + 1, a[pre]})
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(ma)*len(mb) > maxDiffCells {
		for i, l := range ma {
			rows = append(rows, diffRow{'-', pre + i + 1, l})
		}
		for j, l := range mb {
			rows = append(rows, diffRow{'+', pre + j + 1, l})
		}
	} else {
		// lcs[i][j] is the length of the longest common subsequence of
		// ma[i:] and mb[j:].
		lcs := make([][]int, len(ma)+1)
		for i := range lcs {
			lcs[i] = make([]int, len(mb)+1)
		}
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				rows = append(rows, diffRow{' ', pre + j + 1, mb[j]})
				i, j = i+1, j+1
			case j == len(mb) || i < len(ma) && lcs[i+1][j] >= lcs[i][j+1]:
				rows = append(rows, diffRow{'-', pre + i + 1, ma[i]})
				i++
			default:
				rows = append(rows, diffRow{'+', pre + j + 1, mb[j]})
				j++
			}
		}
	}
	for k := 0; k < suf; k++ {
		rows = append(rows, diffRow{' ', len(b) - suf + k + 1, b[len(b)-suf+k]})
	}
	return rows
}

// unifiedDiff is the diff from before to after as hunks: the lines
// changed with context lines of unchanged text around them, and a gap
// row between hunks.
func unifiedDiff(before, after string, context int) []diffRow {
	rows := lineDiff(splitLines(before), splitLines(after))
	keep := make([]bool, len(rows))
	for i, r := range rows {
		if r.op == ' ' {
			continue
		}
		for k := max(i-context, 0); k <= min(i+context, len(rows)-1); k++ {
			keep[k] = true
		}
	}
	// A gap of one line shows the line instead.
	for i := 1; i+1 < len(rows); i++ {
		if !keep[i] && keep[i-1] && keep[i+1] {
			keep[i] = true
		}
	}
	var out []diffRow
	for i, r := range rows {
		if !keep[i] {
			continue
		}
		if len(out) > 0 && !keep[i-1] || len(out) == 0 && i > 0 {
			out = append(out, diffRow{op: '…'})
		}
		out = append(out, r)
	}
	if len(out) > 0 && !keep[len(rows)-1] {
		out = append(out, diffRow{op: '…'})
	}
	return out
}

// formatDiff writes rows as lines: the line's number, its mark and its
// text, tabs as spaces, escape sequences dropped.
func formatDiff(rows []diffRow) []string {
	w := 1
	for _, r := range rows {
		w = max(w, len(strconv.Itoa(r.num)))
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		if r.op == '…' {
			out = append(out, fmt.Sprintf("%*s", w, "⋮"))
			continue
		}
		text := strings.ReplaceAll(display.TerminalSafe(r.text), "\t", "    ")
		out = append(out, strings.TrimRight(fmt.Sprintf("%*d %c %s", w, r.num, r.op, text), " "))
	}
	return out
}

// styleDiff colours formatted rows by their mark, indented.
func styleDiff(rows []diffRow, lines []string, indent string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		switch rows[i].op {
		case '-':
			out[i] = red.Render(indent + l)
		case '+':
			out[i] = green.Render(indent + l)
		case '…':
			out[i] = dim.Render(indent + l)
		default:
			out[i] = indent + l
		}
	}
	return out
}

// fileArgs are the arguments of edit_file and write_file that a diff
// shows.
type fileArgs struct {
	FilePath   string `json:"file_path"`
	Content    string `json:"content"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

// readBefore is the text of the file an edit_file or write_file call
// changes, read through b as read_file reads it; ok is false when it
// cannot be read (missing, denied, too large or no backend).
func readBefore(ctx context.Context, b backend.Backend, tool string, args json.RawMessage) (text string, ok bool) {
	if b == nil || tool != filesystem.EditFileTool && tool != filesystem.WriteFileTool {
		return "", false
	}
	var a fileArgs
	if json.Unmarshal(args, &a) != nil {
		return "", false
	}
	vp, err := backend.Clean("/" + strings.TrimPrefix(a.FilePath, "/"))
	if err != nil || vp == "/" {
		return "", false
	}
	data, err := readAtMost(ctx, b, vp, maxPreviewBytes+1)
	if err != nil || len(data) > maxPreviewBytes {
		return "", false
	}
	return string(data), true
}

// changed is the file's text after an edit_file or write_file call with
// args, from its text before; ok is false when the edit does not apply
// (its old text is not there once, or not at all with replace_all).
func changed(tool string, a fileArgs, before string) (after string, ok bool) {
	if tool == filesystem.WriteFileTool {
		return a.Content, true
	}
	n := strings.Count(before, a.OldString)
	switch {
	case a.OldString == "" || n == 0 || n > 1 && !a.ReplaceAll:
		return "", false
	case len(before)+n*(len(a.NewString)-len(a.OldString)) > maxPreviewBytes:
		// The model chooses new_string and the count: no preview may cost
		// more memory than a file the preview reads.
		return "", false
	case a.ReplaceAll:
		return strings.ReplaceAll(before, a.OldString, a.NewString), true
	}
	return strings.Replace(before, a.OldString, a.NewString, 1), true
}

// fileDiff is the diff an edit_file or write_file call makes to the file
// as it was (before; known says whether it could be read), in styled
// lines under a header naming the file; nil when it cannot be placed
// (the caller then shows the arguments' text).
func fileDiff(tool string, args json.RawMessage, before string, known bool) []string {
	var a fileArgs
	if json.Unmarshal(args, &a) != nil || !known {
		return nil
	}
	after, ok := changed(tool, a, before)
	if !ok {
		return nil
	}
	path := display.OneLine(a.FilePath)
	rows := unifiedDiff(before, after, diffContext)
	added, removed := 0, 0
	for _, r := range rows {
		switch r.op {
		case '+':
			added++
		case '-':
			removed++
		}
	}
	head := fmt.Sprintf("  %s (+%d -%d)", path, added, removed)
	if tool == filesystem.WriteFileTool {
		head = fmt.Sprintf("  %s (replaces %d lines: +%d -%d)", path, len(splitLines(before)), added, removed)
	}
	if len(rows) == 0 {
		return []string{dim.Render(head + " no change")}
	}
	return append([]string{dim.Render(head)}, styleDiff(rows, formatDiff(rows), "  ")...)
}

// before is a file as it was before a call changed it.
type before struct {
	text  string
	known bool
}

// readBefores reads the files the pending requests change, before they
// run: their approvals show the diff against them, and their results
// the diff they made.
func (m *tuiModel) readBefores() {
	if m.befores == nil {
		m.befores = map[string]before{}
	}
	for _, req := range m.approval.reqs {
		if text, ok := readBefore(m.ctx, m.cfg.Files, req.Tool, req.Args); ok || req.Tool == filesystem.EditFileTool || req.Tool == filesystem.WriteFileTool {
			m.befores[req.ToolCallID] = before{text, ok}
		}
	}
}
