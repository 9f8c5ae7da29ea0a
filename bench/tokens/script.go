package main

import (
	"encoding/json"
	"strings"
)

// The scripted task: what a coding agent does to make read_file's
// line-number gutter as wide as the numbers it shows instead of a fixed six
// columns. The main agent plans, looks around (ls, glob, grep), reads seven
// files, edits one file three times, checks its work, asks the
// general-purpose subagent for a review (which greps and reads two more
// files), writes a report and answers. 25 model requests: 21 of the main
// agent, 4 of the subagent, in the order the stand-ins answer them.

// Agent names, as the steps carry them.
const (
	mainAgent = "main"
	subAgent  = "general-purpose"
)

// step is one scripted assistant turn: the answer to one model request.
type step struct {
	// Agent is the agent whose request this turn answers.
	Agent string
	// Text is the turn's text, before its tool calls.
	Text string
	// Calls are the turn's tool calls, in order.
	Calls []call
}

// call is one scripted tool call.
type call struct {
	Name string
	// Args is the JSON of the call's arguments.
	Args string
}

// taskPrompt is the user's request that starts the run.
const taskPrompt = `read_file numbers every line in a gutter six columns wide, whatever the file's length. ` +
	`Make the gutter only as wide as the largest line number in the window it shows (a 90-line file ` +
	`needs two columns), keep the tab after the number and the N.1, N.2 rows of long lines. The code is ` +
	`in /middleware/filesystem. Check that nothing else depends on the width, then write a short report ` +
	`to /REPORT.md.`

// Edits of /middleware/filesystem/fsformat.go: old and new text.
const (
	oldWidthConst = "\t// lineNumberWidth is the width of read_file's line-number gutter.\n\tlineNumberWidth = 6\n"
	newWidthConst = "\t// minLineNumberWidth is the narrowest read_file gutter: a window of\n" +
		"\t// lines is numbered as wide as its largest line number needs.\n\tminLineNumberWidth = 1\n"

	oldGutter = "// writeGutter writes a line marker right-aligned in the gutter, then a tab.\n" +
		"func writeGutter(b *strings.Builder, mark string) {\n\tfor i := len(mark); i < lineNumberWidth; i++ {"
	newGutter = "// writeGutter writes a line marker right-aligned in a gutter of width\n" +
		"// columns, then a tab.\nfunc writeGutter(b *strings.Builder, mark string, width int) {\n" +
		"\tfor i := len(mark); i < width; i++ {"

	oldFormat = `// formatLines renders lines cat -n style, the first numbered start (1-based).
func formatLines(b *strings.Builder, lines []string, start int) {
	for i, line := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		n := start + i
		line = strings.ToValidUTF8(line, "\uFFFD") // shown, not refused
		if len(line) <= MaxLineChars || utf8.RuneCountInString(line) <= MaxLineChars {
			writeGutter(b, strconv.Itoa(n))
			b.WriteString(line)
			continue
		}
		for chunk := 0; line != ""; chunk++ {
			cut := runeOffset(line, MaxLineChars)
			if chunk == 0 {
				writeGutter(b, strconv.Itoa(n))
			} else {
				b.WriteByte('\n')
				writeGutter(b, strconv.Itoa(n)+"."+strconv.Itoa(chunk))
			}
			b.WriteString(line[:cut])
			line = line[cut:]
		}
	}
}`
	newFormat = `// formatLines renders lines cat -n style, the first numbered start (1-based),
// in a gutter as wide as the largest line number of the window.
func formatLines(b *strings.Builder, lines []string, start int) {
	width := max(minLineNumberWidth, len(strconv.Itoa(start+len(lines)-1)))
	for i, line := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		n := start + i
		line = strings.ToValidUTF8(line, "\uFFFD") // shown, not refused
		if len(line) <= MaxLineChars || utf8.RuneCountInString(line) <= MaxLineChars {
			writeGutter(b, strconv.Itoa(n), width)
			b.WriteString(line)
			continue
		}
		for chunk := 0; line != ""; chunk++ {
			cut := runeOffset(line, MaxLineChars)
			if chunk == 0 {
				writeGutter(b, strconv.Itoa(n), width)
			} else {
				b.WriteByte('\n')
				writeGutter(b, strconv.Itoa(n)+"."+strconv.Itoa(chunk), width)
			}
			b.WriteString(line[:cut])
			line = line[cut:]
		}
	}
}`
)

// reviewRequest is the task the main agent gives the subagent.
const reviewRequest = `In this workspace, read_file's line-number gutter (writeGutter and formatLines in ` +
	`/middleware/filesystem/fsformat.go) is changing from a fixed width of 6 columns to the width of the ` +
	`largest line number shown. Find whether anything else depends on the old width: code that parses ` +
	`read_file's output, the backends' line handling (/backend), or the way tool results reach the model ` +
	`(/agent/tools.go). Do not edit anything. Answer with what you checked, what depends on the width (with ` +
	`file and line), and anything that should change with it.`

// subagentAnswer is the subagent's final answer: the task tool's result.
const subagentAnswer = `Checked: every use of the gutter's width and of writeGutter (grep over the workspace), ` +
	`/backend/memfs.go (how the in-memory files split and count lines) and /agent/tools.go (how a tool's ` +
	`result becomes the tool message).

Nothing else depends on the gutter's width:
- minLineNumberWidth is used only by formatLines in /middleware/filesystem/fsformat.go, which is writeGutter's ` +
	`only caller; read_file (fstools.go) and the large-result preview (filesystem.go) go through formatLines.
- The backends return raw lines with an offset (ReadResult.Lines, Offset); numbering happens only in the ` +
	`middleware, so edit_file never sees the gutter: it matches old_string against the file's own text.
- /agent/tools.go passes the tool's string through unchanged; nothing parses it.

Should change with it: the tests that compare read_file output byte for byte (their expected gutters are six ` +
	`columns wide), and the tool description if it promises a width (it does not: it says "cat -n format").`

// reportText is the report the main agent writes.
const reportText = `# read_file: a gutter as wide as its numbers

## Change
- /middleware/filesystem/fsformat.go: the fixed lineNumberWidth = 6 is gone. formatLines computes the
  width of the largest line number in the window (at least minLineNumberWidth = 1) and passes it to
  writeGutter, which pads the marker to that width and ends it with a tab as before.
- Long lines keep their N.1, N.2 continuation rows; their markers are padded to the same width, so a
  row can be wider than the gutter only on those rows, as before.

## Effect
A 90-line file is numbered in two columns instead of six: four bytes less per line, about one token
less per line with cl100k. A file of 100,000 lines or more is numbered exactly as before.

## Checked
- grep: writeGutter has three call sites, all in formatLines; formatLines is called by read_file and by
  the preview of evicted results, both of which now get the narrow gutter.
- Review by the general-purpose subagent: nothing parses the gutter; the backends hand out raw lines and
  edit_file matches against the file's own text.

## Left to do
- The filesystem middleware's tests compare read_file output byte for byte and expect six columns: their
  expectations must be regenerated, and the CONTRACT.md example of read_file's output updated.
`

// finalAnswer is the main agent's last message.
const finalAnswer = `Done. read_file's gutter is now as wide as the largest line number it shows (at least one ` +
	`column) instead of six: formatLines computes the width once per window and writeGutter pads to it; the ` +
	`tab separator and the N.1, N.2 rows of long lines are unchanged. The general-purpose subagent found ` +
	`nothing else that depends on the width (the backends return raw lines, edit_file matches the file's own ` +
	`text). Details and what is left (the byte-for-byte tests' expectations) are in /REPORT.md.`

// todo is one item of write_todos.
type todo struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

func todosArgs(statuses ...string) string {
	items := []string{
		"Find where read_file formats its lines",
		"Read the formatting code and its callers",
		"Make the gutter as wide as the largest line number",
		"Check that nothing else depends on the width",
		"Write the report to /REPORT.md",
	}
	list := make([]todo, len(items))
	for i, c := range items {
		list[i] = todo{Content: c, Status: statuses[i]}
	}
	return args(map[string]any{"todos": list})
}

// args returns the JSON of a call's arguments. Maps marshal with sorted
// keys, so the text is the same on every run.
func args(v map[string]any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// The values are strings, numbers and todo lists: they always marshal.
		return "{}"
	}
	return string(b)
}

func read(path string) call {
	if readLimit > 0 {
		return call{Name: "read_file", Args: args(map[string]any{"file_path": path, "limit": readLimit})}
	}
	return call{Name: "read_file", Args: args(map[string]any{"file_path": path})}
}

// readLimit, when set (-read-limit), is the limit every whole-file read of
// the script passes, to this project and to deepagents-js alike: both then
// read the same lines, whatever their default limits.
var readLimit int

func edit(old, new string) call {
	return call{Name: "edit_file", Args: args(map[string]any{
		"file_path": "/middleware/filesystem/fsformat.go", "old_string": old, "new_string": new,
	})}
}

// script returns the task's turns in the order of the requests they answer.
func script() []step {
	const (
		P, I, C = "pending", "in_progress", "completed"
	)
	m := func(text string, calls ...call) step { return step{Agent: mainAgent, Text: text, Calls: calls} }
	s := func(text string, calls ...call) step { return step{Agent: subAgent, Text: text, Calls: calls} }
	return []step{
		m("I'll plan this first.", call{"write_todos", todosArgs(I, P, P, P, P)}),
		m("", call{"ls", args(map[string]any{"path": "/"})}),
		m("", call{"glob", args(map[string]any{"pattern": "**/*.go"})}),
		m("", call{"grep", args(map[string]any{"pattern": "formatLines", "output_mode": "content"})}),
		m("The formatting is in fsformat.go; reading it and its callers.", read("/middleware/filesystem/fsformat.go")),
		m("", read("/middleware/filesystem/fstools.go")),
		m("", read("/middleware/filesystem/filesystem.go")),
		m("Now the backend side: what a read returns.", read("/backend/backend.go")),
		m("", read("/backend/state.go")),
		m("", read("/thread/files.go")),
		m("", read("/llm/model.go")),
		m("I have what I need. The width is only used in writeGutter; formatLines knows the window.",
			call{"write_todos", todosArgs(C, C, I, P, P)}),
		m("", edit(oldWidthConst, newWidthConst)),
		m("", edit(oldGutter, newGutter)),
		m("", edit(oldFormat, newFormat)),
		m("Checking the result.", call{"read_file", args(map[string]any{
			"file_path": "/middleware/filesystem/fsformat.go", "offset": 50, "limit": 45,
		})}),
		m("", call{"grep", args(map[string]any{"pattern": "writeGutter(", "output_mode": "content"})}),
		m("I'll ask for an independent check of what depends on the width.", call{"task", args(map[string]any{
			"description": reviewRequest, "subagent_type": subAgent,
		})}),
		s("", call{"grep", args(map[string]any{"pattern": "LineNumberWidth", "output_mode": "content"})}),
		s("", read("/backend/memfs.go")),
		s("", read("/agent/tools.go")),
		s(subagentAnswer),
		m("", call{"write_file", args(map[string]any{"file_path": "/REPORT.md", "content": reportText})}),
		m("", call{"write_todos", todosArgs(C, C, C, C, C)}),
		m(finalAnswer),
	}
}

// readFiles are the files the task reads in full, main agent and subagent:
// the nine source files of 2-20 KB.
var readFiles = []string{
	"/middleware/filesystem/fsformat.go",
	"/middleware/filesystem/fstools.go",
	"/middleware/filesystem/filesystem.go",
	"/backend/backend.go",
	"/backend/state.go",
	"/thread/files.go",
	"/llm/model.go",
	"/backend/memfs.go",
	"/agent/tools.go",
}

// workspaceCheck returns what must hold of the files once the task ran: the
// edited file holds the new code and the report was written.
func workspaceCheck(files map[string]string) []string {
	var bad []string
	f := files["/middleware/filesystem/fsformat.go"]
	for _, s := range []string{newWidthConst, newGutter, newFormat} {
		if !strings.Contains(f, s) {
			bad = append(bad, "fsformat.go lacks an edit: "+strings.SplitN(s, "\n", 2)[0])
		}
	}
	if files["/REPORT.md"] != reportText {
		bad = append(bad, "/REPORT.md is not the report")
	}
	return bad
}
