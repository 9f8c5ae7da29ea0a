package tui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
)

// ErrNothingPicked is the picker closed without a choice.
var ErrNothingPicked = errors.New("no thread picked")

// Pick lets the user pick one of threads on the terminal (in and out): up
// and down move, typing narrows by title or id, enter picks, esc leaves
// (ErrNothingPicked).
func Pick(ctx context.Context, in, out *os.File, threads []Thread) (string, error) {
	var rows []pickRow
	for _, t := range threads {
		rows = append(rows, pickRow{id: t.ID, title: t.Title, status: t.Status, updated: t.Updated})
	}
	m := &picker{rows: rows}
	if _, err := tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(out), tea.WithContext(ctx)).Run(); err != nil {
		return "", err
	}
	if m.picked == "" {
		return "", ErrNothingPicked
	}
	return m.picked, nil
}

// pickRow is a thread as the picker lists it.
type pickRow struct {
	id, title, status string
	updated           time.Time
}

// picker is the model of the thread picker.
type picker struct {
	rows   []pickRow
	filter string
	cursor int // in the rows the filter keeps
	picked string
}

func (p *picker) Init() tea.Cmd { return nil }

// shown are the rows whose title or id contains the filter.
func (p *picker) shown() []pickRow {
	if p.filter == "" {
		return p.rows
	}
	var out []pickRow
	f := strings.ToLower(p.filter)
	for _, r := range p.rows {
		if strings.Contains(strings.ToLower(r.title), f) || strings.HasPrefix(r.id, f) {
			out = append(out, r)
		}
	}
	return out
}

func (p *picker) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return p, nil
	}
	shown := p.shown()
	switch k.String() {
	case "esc", "ctrl+c":
		return p, tea.Quit
	case "enter":
		if p.cursor < len(shown) {
			p.picked = shown[p.cursor].id
		}
		return p, tea.Quit
	case "up", "ctrl+p":
		p.cursor = max(p.cursor-1, 0)
	case "down", "ctrl+n":
		p.cursor = min(p.cursor+1, max(len(shown)-1, 0))
	case "backspace":
		if p.filter != "" {
			r := []rune(p.filter)
			p.filter, p.cursor = string(r[:len(r)-1]), 0
		}
	default:
		if k.Text != "" {
			p.filter, p.cursor = p.filter+k.Text, 0
		}
	}
	return p, nil
}

// View implements tea.Model.
func (p *picker) View() tea.View { return tea.NewView(p.view()) }

func (p *picker) view() string {
	if p.picked != "" {
		return ""
	}
	var b strings.Builder
	b.WriteString(bold.Render("Resume a thread") + dim.Render("  ↑↓ move · type to narrow · enter picks · esc leaves") + "\n")
	if p.filter != "" {
		b.WriteString("> " + p.filter + "\n")
	}
	shown := p.shown()
	if len(shown) == 0 {
		b.WriteString(dim.Render("  no thread matches") + "\n")
	}
	width := 0
	for _, r := range shown {
		width = max(width, len([]rune(display.Clip(cmp.Or(r.title, "(untitled)"), 80))))
	}
	for i, r := range shown {
		mark := "  "
		if i == p.cursor {
			mark = green.Render("❯ ")
		}
		t := display.Clip(cmp.Or(r.title, "(untitled)"), 80)
		t += strings.Repeat(" ", width-len([]rune(t)))
		line := fmt.Sprintf("%s  %-11s  %s", r.updated.Local().Format("2006-01-02 15:04"), r.status, t)
		if i == p.cursor {
			line = bold.Render(line)
		}
		b.WriteString(mark + line + dim.Render("  "+r.id) + "\n")
	}
	return b.String()
}
