package tui

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// The message's input grows with its lines up to inputRows rows, and
// scrolls beyond.
const inputRows = 6

// newInput is the message's input: several lines, a newline with
// shift+enter (where the terminal tells it from enter), alt+enter or
// ctrl+j, enter left to the session (it sends, or after a \ makes a
// newline).
func newInput() textarea.Model {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.DynamicHeight = true
	ta.MinHeight, ta.MaxHeight = 1, inputRows
	ta.CharLimit = 0 // the session bounds the message in bytes
	ta.SetPromptFunc(2, func(info textarea.PromptInfo) string {
		if info.LineNumber == 0 {
			return "> "
		}
		return "  "
	})
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("shift+enter", "alt+enter", "ctrl+j"))
	ta.KeyMap.SelectAll = key.NewBinding() // ctrl+g opens the editor
	ta.KeyMap.DeleteCharacterForward = key.NewBinding(key.WithKeys("delete"))
	st := textarea.DefaultStyles(true)
	for _, s := range []*textarea.StyleState{&st.Focused, &st.Blurred} {
		s.Base, s.Text, s.CursorLine, s.Prompt, s.EndOfBuffer = lipgloss.NewStyle(), lipgloss.NewStyle(), lipgloss.NewStyle(), lipgloss.NewStyle(), lipgloss.NewStyle()
		s.Placeholder = lipgloss.NewStyle().Faint(true)
	}
	ta.SetStyles(st)
	ta.Placeholder = idlePlaceholder
	ta.Focus()
	return ta
}

// messageView is the message's input, its rows without the blanks that
// pad them to the input's width: a row takes one row still when the
// window narrows.
func (m *tuiModel) messageView() string {
	rows := strings.Split(strings.TrimSuffix(m.input.View(), "\n"), "\n")
	for i, r := range rows {
		rows[i] = strings.TrimRight(r, " ")
	}
	return strings.Join(rows, "\n")
}

// onFirstRow and onLastRow report whether the cursor is on the input's
// first or last row: only there do up and down recall earlier messages.
func (m *tuiModel) onFirstRow() bool {
	return m.input.Line() == 0 && m.input.LineInfo().RowOffset == 0
}

func (m *tuiModel) onLastRow() bool {
	info := m.input.LineInfo()
	return m.input.Line() == m.input.LineCount()-1 && info.RowOffset >= info.Height-1
}

// beforeCursor is the text of the cursor's line before it.
func (m *tuiModel) beforeCursor() string {
	lines := strings.Split(m.input.Value(), "\n")
	row := min(m.input.Line(), len(lines)-1)
	r := []rune(lines[row])
	return string(r[:min(m.input.Column(), len(r))])
}

// continued reports whether enter continues the message on a new line
// rather than sending it: the cursor follows a \, which goes.
func (m *tuiModel) continued() bool {
	if !strings.HasSuffix(m.beforeCursor(), `\`) {
		return false
	}
	m.input, _ = m.input.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
	m.input.InsertString("\n")
	return true
}

// bounded keeps text to the message limit (PromptLimit bytes), with
// the room left in the input after what it holds (used bytes), cut at
// a whole character; cut says how much was left out.
func bounded(text string, used, limit int) (kept string, cut int) {
	if limit <= 0 || used+len(text) <= limit {
		return text, 0
	}
	n := max(limit-used, 0)
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n], len(text) - n
}

// maxInputLines bounds the lines of a message (the input holds no more).
const maxInputLines = 10000

// boundedLines keeps text, to be added to an input of used lines, to
// maxInputLines in all; cut, what was left out already, grows with
// what goes.
func boundedLines(text string, cut, used int) (string, int) {
	i, n := 0, used
	for {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			return text, cut
		}
		if n+1 > maxInputLines {
			return text[:i+j], cut + len(text) - (i + j)
		}
		i, n = i+j+1, n+1
	}
}

// onPaste inserts what was pasted, lines and all: one message, however
// many lines, bounded by the message limit.
func (m *tuiModel) onPaste(text string) tea.Cmd {
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	kept, cut := bounded(text, len(m.input.Value()), m.cfg.PromptLimit)
	kept, cut = boundedLines(kept, cut, m.input.LineCount())
	m.input.InsertString(kept)
	if cut > 0 {
		return m.print(yellow.Render(fmt.Sprintf("note: the paste was cut to the message limit of %s; %s left out", size(m.cfg.PromptLimit), size(cut))))
	}
	return nil
}

// size writes n bytes as "512 bytes", "12 KB" or "1 MB".
func size(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", (n+1<<10-1)>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// editedMsg says the external editor on the input's text, in file path,
// has exited.
type editedMsg struct {
	path string
	err  error
}

// openEditor opens $VISUAL, or $EDITOR, or vi, on the input's text in a
// temporary file; the program gives the terminal to it until it exits.
func (m *tuiModel) openEditor() tea.Cmd {
	f, err := os.CreateTemp("", "deepagents-message-*.md")
	if err != nil {
		return m.print(red.Render("the editor: " + err.Error()))
	}
	_, err = f.WriteString(m.input.Value())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return m.print(red.Render("the editor: " + err.Error()))
	}
	editor := strings.Fields(cmp.Or(os.Getenv("VISUAL"), os.Getenv("EDITOR"), "vi"))
	if len(editor) == 0 {
		editor = []string{"vi"}
	}
	cmd := exec.Command(editor[0], append(editor[1:], f.Name())...)
	path := f.Name()
	return tea.ExecProcess(cmd, func(err error) tea.Msg { return editedMsg{path, err} })
}

// onEditorExit makes what the editor saved the input's text.
func (m *tuiModel) onEditorExit(msg editedMsg) tea.Cmd {
	defer os.Remove(msg.path)
	if msg.err != nil {
		return m.print(red.Render("the editor: " + msg.err.Error() + "; the message is as it was"))
	}
	data, err := os.ReadFile(msg.path)
	if err != nil {
		return m.print(red.Render("the editor: " + err.Error()))
	}
	text := strings.TrimSuffix(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	kept, cut := bounded(text, 0, m.cfg.PromptLimit)
	kept, cut = boundedLines(kept, cut, 1)
	m.input.SetValue(kept)
	m.input.MoveToEnd()
	if cut > 0 {
		return m.print(yellow.Render(fmt.Sprintf("note: the text was cut to the message limit of %s; %s left out", size(m.cfg.PromptLimit), size(cut))))
	}
	return nil
}

// echo is a message as sent, shown above: its first line after "> ",
// the others under it.
func echo(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		prefix := "  "
		if i == 0 {
			prefix = "> "
		}
		lines[i] = bold.Render(prefix + l)
	}
	return strings.Join(lines, "\n")
}
