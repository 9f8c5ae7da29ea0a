package tui

import (
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/llm"
)

// maxRedrawn bounds the messages of an earlier conversation redrawn on
// resuming: the most recent ones.
const maxRedrawn = 200

// earlier returns the lines that redraw thread's conversation so far:
// the user's messages, the answers as Markdown, tool calls folded with
// their results. A new thread, or one whose history cannot be read, has
// none (the latter says so).
func (m *tuiModel) earlier(thread string) []string {
	if thread == "" || m.cfg.History == nil {
		return nil
	}
	msgs, err := m.cfg.History(m.ctx, thread)
	if err != nil {
		return []string{red.Render("the earlier conversation cannot be shown: " + err.Error())}
	}
	if len(msgs) == 0 {
		return nil
	}
	lines := []string{dim.Render("── earlier in this thread ──")}
	if n := len(msgs) - maxRedrawn; n > 0 {
		lines = append(lines, dim.Render("("+strconv.Itoa(n)+" earlier messages not shown)"))
		msgs = msgs[n:]
	}
	width := m.width
	if width <= 0 && m.cfg.Out != nil {
		// Before the first frame: the terminal's own width.
		width, _, _ = term.GetSize(int(m.cfg.Out.Fd()))
	}
	lines = append(lines, redraw(msgs, width)...)
	return append(lines, dim.Render("── now ──"))
}

// redraw renders msgs as the session showed them.
func redraw(msgs []llm.Message, width int) []string {
	var lines []string
	for _, msg := range msgs {
		switch msg.Role {
		case llm.RoleUser:
			text := msg.Text()
			if strings.HasPrefix(text, summaryStart) {
				lines = append(lines, dim.Render("(the conversation before this point was summarized)"))
				continue
			}
			if cmd, ok := shellCommandOf(text); ok {
				lines = append(lines, bold.Render("! "+display.Clip(display.OneLine(cmd), 300)))
				continue
			}
			// An @file's contents stay out: the message as typed.
			if i := strings.Index(text, "\n\n<file path="); i >= 0 {
				text = text[:i]
			}
			lines = append(lines, bold.Render("> "+display.Clip(display.OneLine(text), 300)))
		case llm.RoleAssistant:
			if text := strings.TrimSpace(msg.Text()); text != "" {
				lines = append(lines, renderMarkdown(text, width))
			}
			for _, c := range msg.ToolCalls {
				lines = append(lines, callLine("", c.Name, c.Args, width))
			}
		case llm.RoleTool:
			lines = append(lines, "  "+dim.Render("⎿ ")+fold(msg.Text(), msg.IsError, resultRoom("", width)))
		}
	}
	return lines
}

// summaryStart opens the message that replaces summarized messages.
const summaryStart = "The earlier part of this conversation was summarized"

// shellCommandOf returns the command of a message that added a !
// command's output (shellMessage).
func shellCommandOf(text string) (string, bool) {
	if !strings.HasPrefix(text, shellIntro) {
		return "", false
	}
	_, rest, ok := strings.Cut(text, "\n$ ")
	if !ok {
		return "", false
	}
	cmd, _, _ := strings.Cut(rest, "\n")
	return cmd, true
}
