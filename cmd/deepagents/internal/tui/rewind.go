package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
)

// Turn is a prompt of the thread as the rewind list shows it: what was
// sent, when, and how many workspace entries the agent changed after it.
type Turn struct {
	Prompt  string
	Sent    time.Time
	Changed int
	// Label, when set, is shown instead of the prompt: a turn that is no
	// prompt (the thread as a rewind found it).
	Label string
}

// shown is what the list says of the turn.
func (t Turn) shown() string {
	if t.Label != "" {
		return t.Label
	}
	return t.Prompt
}

// escWindow is how soon a second esc on an empty input must follow the
// first to open the rewind list.
const escWindow = time.Second

// openRewind opens the list of the thread's prompts (esc esc, /rewind).
func (m *tuiModel) openRewind(say func(string) tea.Cmd) tea.Cmd {
	if m.cfg.Turns == nil || m.cfg.Rewind == nil {
		return say(red.Render("rewinding is not available here"))
	}
	if m.thread == "" || m.busy() {
		return say("nothing to rewind: " + map[bool]string{true: "the agent is working", false: "the thread has no prompts yet"}[m.busy()])
	}
	turns, err := m.cfg.Turns(m.ctx, m.thread)
	if err != nil {
		return say(red.Render(err.Error()))
	}
	if len(turns) == 0 {
		return say("nothing to rewind: no prompt of this thread was recorded")
	}
	m.overlay = &rewinder{turns: turns, cursor: len(turns) - 1}
	return nil
}

// rewinder is the rewind list: pick a prompt, then what to put back.
type rewinder struct {
	turns  []Turn
	cursor int
	chosen bool // the prompt is picked: now what to put back
}

func (r *rewinder) key(m *tuiModel, k tea.KeyPressMsg) (tea.Cmd, bool) {
	if !r.chosen {
		switch k.String() {
		case "esc", "ctrl+c":
			return nil, true
		case "up", "ctrl+p":
			r.cursor = max(r.cursor-1, 0)
		case "down", "ctrl+n":
			r.cursor = min(r.cursor+1, len(r.turns)-1)
		case "enter":
			r.chosen = true
		}
		return nil, false
	}
	var files, conversation bool
	switch k.String() {
	case "esc":
		r.chosen = false
		return nil, false
	case "ctrl+c":
		return nil, true
	case "b", "enter":
		files, conversation = true, true
	case "c":
		files = true
	case "m":
		conversation = true
	default:
		return nil, false
	}
	n, turn := r.cursor+1, r.turns[r.cursor]
	echo := dim.Render(fmt.Sprintf("> rewind to prompt %d: %s", n, display.Clip(turn.shown(), 60)))
	summary, err := m.cfg.Rewind(m.ctx, m.thread, n, files, conversation)
	if err != nil {
		// What was done before it failed, then why the rest was not.
		done := strings.TrimRight(display.TerminalSafe(summary), "\n")
		if done != "" {
			done += "\n"
		}
		return m.print(echo + "\n" + done + red.Render("✗ "+display.OneLine(err.Error()))), true
	}
	if conversation {
		m.todos = nil // the plan is the fork's; the next run shows it
		// The prompt comes back to be edited and sent again.
		m.input.SetValue(display.TerminalSafe(turn.Prompt))
		m.input.MoveToEnd()
	}
	return m.print(echo + "\n" + green.Render("✓ ") + strings.TrimRight(display.TerminalSafe(summary), "\n")), true
}

func (r *rewinder) view(width int) string {
	var b strings.Builder
	if r.chosen {
		turn := r.turns[r.cursor]
		b.WriteString(bold.Render(fmt.Sprintf("Rewind to before prompt %d: ", r.cursor+1)) + display.Clip(turn.shown(), max(width-30, 20)) + "\n")
		b.WriteString("  [b] code and conversation   [c] code only   [m] conversation only   " + dim.Render("[esc] back") + "\n")
		return b.String()
	}
	b.WriteString(bold.Render("Rewind") + dim.Render("  ↑↓ move · enter picks the prompt to go back before · esc leaves") + "\n")
	// The last prompts, around the cursor, as many as fit.
	from := max(0, min(r.cursor-7, len(r.turns)-15))
	for i := from; i < len(r.turns) && i < from+15; i++ {
		t := r.turns[i]
		mark := "  "
		line := fmt.Sprintf("%3d  %s  %3d changed  %s", i+1, t.Sent.Local().Format("15:04:05"), t.Changed, display.Clip(t.shown(), max(width-40, 20)))
		if i == r.cursor {
			mark, line = green.Render("❯ "), bold.Render(line)
		}
		b.WriteString(mark + line + "\n")
	}
	return b.String()
}
