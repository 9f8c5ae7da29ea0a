package tui

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
)

// The terminal rendering of Markdown: goldmark parses (CommonMark and
// GitHub's tables, strikethrough and task lists), and the blocks are drawn
// with the session's styles. A renderer such as glamour would add syntax
// highlighting, at the price of 30 MiB of binary and 18 MB of memory at
// every start (its lexers), which every command would pay.

// maxMarkdownWidth keeps prose readable on a wide terminal.
const maxMarkdownWidth = 120

var (
	mdParser = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList)).Parser()
	italic   = lipgloss.NewStyle().Italic(true)
	strike   = lipgloss.NewStyle().Strikethrough(true)
	codeSpan = lipgloss.NewStyle().Foreground(lipgloss.Color("6"))
	heading  = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("5"))
)

// RenderMarkdown is how the session prints a finished answer on a
// terminal of the given width (what a test of the terminal compares its
// scrollback with).
func RenderMarkdown(src string, width int) string { return renderMarkdown(src, width) }

// renderMarkdown returns src as it reads on a terminal of the given width:
// headings and emphasis styled, lists bulleted and indented, code blocks
// indented as they are, paragraphs wrapped.
func renderMarkdown(src string, width int) string {
	width = min(max(width, 20), maxMarkdownWidth)
	src = display.TerminalSafe(src)
	b := []byte(src)
	r := mdRenderer{src: b}
	r.blocks(mdParser.Parse(text.NewReader(b)), "", width)
	out := strings.TrimRight(r.out.String(), "\n")
	if out == "" {
		return src
	}
	return out
}

type mdRenderer struct {
	src []byte
	out strings.Builder
}

// blocks renders n's children, each line starting with indent, in width
// columns; blocks are separated by an empty line.
func (r *mdRenderer) blocks(n ast.Node, indent string, width int) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if c.PreviousSibling() != nil && !tightItem(c) {
			r.out.WriteString("\n")
		}
		r.block(c, indent, width)
	}
}

// tightItem reports whether c is a block of a tight list's item, which
// takes no empty line before it.
func tightItem(c ast.Node) bool {
	if l, ok := c.Parent().(*ast.List); ok {
		return l.IsTight
	}
	if _, ok := c.Parent().(*ast.ListItem); ok {
		if l, ok := c.Parent().Parent().(*ast.List); ok {
			return l.IsTight
		}
	}
	return false
}

func (r *mdRenderer) block(n ast.Node, indent string, width int) {
	switch n := n.(type) {
	case *ast.Heading:
		r.wrapped(heading.Render(ansi.Strip(r.inlines(n))), indent, indent, width)
	case *ast.Paragraph, *ast.TextBlock:
		r.wrapped(r.inlines(n), indent, indent, width)
	case *ast.List:
		num := n.Start
		for item := n.FirstChild(); item != nil; item = item.NextSibling() {
			if item.PreviousSibling() != nil && !n.IsTight {
				r.out.WriteString("\n")
			}
			mark := "• "
			if n.IsOrdered() {
				mark = strconv.Itoa(num) + ". "
				num++
			}
			r.listItem(item, indent, mark, width)
		}
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		lines := n.Lines()
		for i := range lines.Len() {
			seg := lines.At(i)
			line := strings.TrimRight(string(seg.Value(r.src)), "\n")
			r.out.WriteString(indent + "  " + codeSpan.Render(line) + "\n")
		}
	case *ast.Blockquote:
		var inner mdRenderer
		inner.src = r.src
		inner.blocks(n, "", width-len(indent)-2)
		for _, l := range strings.Split(strings.TrimRight(inner.out.String(), "\n"), "\n") {
			r.out.WriteString(indent + dim.Render("│ ") + l + "\n")
		}
	case *ast.ThematicBreak:
		r.out.WriteString(indent + dim.Render(strings.Repeat("─", min(width-len(indent), 40))) + "\n")
	case *east.Table:
		r.table(n, indent)
	case *ast.HTMLBlock:
		lines := n.Lines()
		for i := range lines.Len() {
			seg := lines.At(i)
			r.out.WriteString(indent + strings.TrimRight(string(seg.Value(r.src)), "\n") + "\n")
		}
	default:
		r.blocks(n, indent, width)
	}
}

// listItem renders an item: its mark, then its blocks with a hanging
// indent.
func (r *mdRenderer) listItem(item ast.Node, indent, mark string, width int) {
	var inner mdRenderer
	inner.src = r.src
	hang := strings.Repeat(" ", ansi.StringWidth(mark))
	inner.blocks(item, "", width-len(indent)-len(hang))
	lines := strings.Split(strings.TrimRight(inner.out.String(), "\n"), "\n")
	for i, l := range lines {
		lead := indent + hang
		if i == 0 {
			lead = indent + mark
		}
		if l == "" {
			lead = ""
		}
		r.out.WriteString(lead + l + "\n")
	}
}

// wrapped writes s word-wrapped to width, its first line after first and
// the others after rest.
func (r *mdRenderer) wrapped(s, first, rest string, width int) {
	lines := strings.Split(ansi.Wordwrap(s, max(width-ansi.StringWidth(first), 10), ""), "\n")
	for i, l := range lines {
		lead := rest
		if i == 0 {
			lead = first
		}
		r.out.WriteString(lead + strings.TrimRight(l, " ") + "\n")
	}
}

// inlines renders the inline content of n as one styled string; hard line
// breaks are newlines.
func (r *mdRenderer) inlines(n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(r.src))
			switch {
			case c.HardLineBreak():
				b.WriteString("\n")
			case c.SoftLineBreak():
				b.WriteString(" ")
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.CodeSpan:
			b.WriteString(codeSpan.Render(ansi.Strip(r.inlines(c))))
		case *ast.Emphasis:
			style := italic
			if c.Level >= 2 {
				style = bold
			}
			b.WriteString(style.Render(ansi.Strip(r.inlines(c))))
		case *east.Strikethrough:
			b.WriteString(strike.Render(ansi.Strip(r.inlines(c))))
		case *ast.Link:
			label := r.inlines(c)
			b.WriteString(label)
			if dest := string(c.Destination); dest != "" && dest != ansi.Strip(label) {
				b.WriteString(dim.Render(" (" + dest + ")"))
			}
		case *ast.AutoLink:
			b.Write(c.URL(r.src))
		case *ast.Image:
			b.WriteString(dim.Render("[image: " + ansi.Strip(r.inlines(c)) + " " + string(c.Destination) + "]"))
		case *east.TaskCheckBox:
			if c.IsChecked {
				b.WriteString("[x] ")
			} else {
				b.WriteString("[ ] ")
			}
		case *ast.RawHTML:
			for i := range c.Segments.Len() {
				seg := c.Segments.At(i)
				b.Write(seg.Value(r.src))
			}
		default:
			b.WriteString(r.inlines(c))
		}
	}
	return b.String()
}

// table renders a table with its columns padded to their widest cell and
// the header in bold.
func (r *mdRenderer) table(t *east.Table, indent string) {
	var rows [][]string
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			cells = append(cells, r.inlines(cell))
		}
		rows = append(rows, cells)
	}
	var widths []int
	for _, row := range rows {
		for i, c := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	for ri, row := range rows {
		var line strings.Builder
		for i, c := range row {
			if ri == 0 {
				c = bold.Render(ansi.Strip(c))
			}
			line.WriteString(c)
			if i < len(row)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-ansi.StringWidth(c)+2))
			}
		}
		r.out.WriteString(indent + line.String() + "\n")
		if ri == 0 {
			total := 0
			for _, w := range widths {
				total += w + 2
			}
			r.out.WriteString(indent + dim.Render(strings.Repeat("─", max(total-2, 1))) + "\n")
		}
	}
}
