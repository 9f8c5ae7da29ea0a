package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/deepagents-go/deepagents"

	tea "charm.land/bubbletea/v2"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
)

// This file holds the queue of the background subagents' requests for
// approval: a background task that stops to ask (it parks, durably)
// shows here, while the main agent works or idles, and the person's
// answer resumes its subagent without stopping the main agent. The
// main run's own approval comes first; the queue then shows a count.

// Background is what the session needs of the agent's background
// subagents (deepagents.Background's middleware): to hear of the requests
// for approval their tasks park on (Watch), to find those parked before
// the session started (Approvals), and to answer them (Answer).
type Background interface {
	Watch(f func(deepagents.AsyncApproval)) (stop func())
	Approvals(ctx context.Context, threadID string) ([]deepagents.AsyncApproval, error)
	Answer(ctx context.Context, threadID, taskID string, decisions []deepagents.Decision) error
}

type (
	// bgApprovalMsg is a background task's request for approval come in,
	// or answered (Status Running), or denied for want of an answer.
	bgApprovalMsg struct{ a deepagents.AsyncApproval }
	// bgFoundMsg are the requests a thread's tasks parked on before.
	bgFoundMsg struct {
		list []deepagents.AsyncApproval
		err  error
	}
	// bgAnsweredMsg says how the answer to a task's request fared.
	bgAnsweredMsg struct {
		a   deepagents.AsyncApproval
		err error
	}
)

// watchBackground passes what bg's Watch hears to send, in order,
// without blocking the task that parks; stop ends it.
func watchBackground(bg Background, send func(tea.Msg)) (stop func()) {
	var (
		mu      sync.Mutex
		pending []deepagents.AsyncApproval
	)
	wake, done := make(chan struct{}, 1), make(chan struct{})
	unwatch := bg.Watch(func(a deepagents.AsyncApproval) {
		mu.Lock()
		pending = append(pending, a)
		mu.Unlock()
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	go func() {
		for {
			select {
			case <-wake:
			case <-done:
				return
			}
			mu.Lock()
			batch := pending
			pending = nil
			mu.Unlock()
			for _, a := range batch {
				send(bgApprovalMsg{a})
			}
		}
	}()
	return func() {
		unwatch()
		close(done)
	}
}

// loadBackground finds the requests the thread's background tasks parked
// on before (a session killed while they waited, say).
func (m *tuiModel) loadBackground(thread string) tea.Cmd {
	bg := m.cfg.Background
	if bg == nil || thread == "" {
		return nil
	}
	ctx := m.ctx
	return func() tea.Msg {
		list, err := bg.Approvals(ctx, thread)
		return bgFoundMsg{list, err}
	}
}

func (m *tuiModel) onBackgroundFound(msg bgFoundMsg) tea.Cmd {
	var cmds []tea.Cmd
	if msg.err != nil {
		cmds = append(cmds, m.print(red.Render("warning: ")+"the background tasks' requests for approval could not all be read: "+display.OneLine(msg.err.Error())))
	}
	for _, a := range msg.list {
		if m.bgAnswered[answeredKey(a)] {
			continue // answered since it was read
		}
		cmds = append(cmds, m.onBackgroundApproval(a))
	}
	return tea.Batch(cmds...)
}

// onBackgroundApproval queues a task's request for approval, or drops it
// once it is answered or denied.
func (m *tuiModel) onBackgroundApproval(a deepagents.AsyncApproval) tea.Cmd {
	i := slices.IndexFunc(m.bg, func(q deepagents.AsyncApproval) bool { return q.TaskID == a.TaskID })
	switch a.Status {
	case deepagents.AsyncAwaitingApproval:
		if i >= 0 || len(a.Requests) == 0 {
			return nil // known already (found at the start and heard of)
		}
		m.bg = append(m.bg, a)
		if len(m.bg) == 1 {
			return m.askBackground()
		}
		return nil
	default:
		if i < 0 {
			return nil
		}
		m.dropBackground(i)
		var line tea.Cmd
		if a.Status == deepagents.AsyncDenied {
			line = m.print(yellow.Render("■ ") + bgLabel(a) + " was denied: nobody answered its request for approval in time")
		}
		if i == 0 && len(m.bg) > 0 {
			return tea.Batch(line, m.askBackground())
		}
		return line
	}
}

// dropBackground takes the queue's request i out.
func (m *tuiModel) dropBackground(i int) {
	m.bg = slices.Delete(m.bg, i, i+1)
	if i == 0 {
		m.bgAsk.clear()
	}
}

// askBackground asks about the request first in the queue: the tools the
// user approved for the session are approved, and when that answers all
// of it, it is answered at once.
func (m *tuiModel) askBackground() tea.Cmd {
	if len(m.bg) == 0 {
		return nil
	}
	a := &m.bgAsk
	if !a.waiting() {
		a.set(m.bg[0].Requests)
		if m.bgBefores == nil {
			m.bgBefores = map[string]before{}
		}
		for _, req := range a.reqs {
			if text, ok := readBefore(m.ctx, m.cfg.Files, req.Tool, req.Args); ok {
				m.bgBefores[req.ToolCallID] = before{text, ok}
			}
		}
	}
	a.approveAllowed(m.allowed)
	if a.asking() {
		return a.show()
	}
	line := m.print(dim.Render("["+bgLabel(m.bg[0])+"] ") + green.Render("✓ approved ") + m.bg[0].Tools() + dim.Render(" (approved for this session)"))
	return tea.Batch(line, m.answerBackground())
}

// answerBackground gives the first task of the queue its decisions: its
// subagent resumes, and the next request of the queue shows.
func (m *tuiModel) answerBackground() tea.Cmd {
	q := m.bg[0]
	decisions := m.bgAsk.take()
	m.bg = m.bg[1:]
	if m.bgAnswered == nil {
		m.bgAnswered = map[string]bool{}
	}
	m.bgAnswered[answeredKey(q)] = true
	for _, req := range q.Requests {
		delete(m.bgBefores, req.ToolCallID)
	}
	bg, ctx := m.cfg.Background, m.ctx
	answer := func() tea.Msg {
		return bgAnsweredMsg{q, bg.Answer(ctx, q.ThreadID, q.TaskID, decisions)}
	}
	return tea.Batch(answer, m.askBackground())
}

// answeredKey names one request of a task (bgAnswered): its id and its
// first call's, for a task answered may stop to ask again, anew.
func answeredKey(a deepagents.AsyncApproval) string {
	if len(a.Requests) == 0 {
		return a.TaskID
	}
	return a.TaskID + "\x00" + a.Requests[0].ToolCallID
}

func (m *tuiModel) onBackgroundAnswered(msg bgAnsweredMsg) tea.Cmd {
	if msg.err == nil {
		return m.print(dim.Render("· " + bgLabel(msg.a) + " resumes"))
	}
	why := "the answer did not reach " + bgLabel(msg.a) + ": " + display.OneLine(msg.err.Error())
	if !errors.Is(msg.err, deepagents.ErrAsyncNotWaiting) {
		why += "; deepagents resume " + msg.a.ThreadID + " --task " + msg.a.TaskID + " answers it"
	}
	return m.print(red.Render("warning: ") + why)
}

// bgTakes reports whether k answers the background request shown: as the
// run's approval's keys, on an empty input once it has been on the screen
// a moment; but esc only while no run works (it stops the run's step),
// and never ctrl+c (it leaves the session) nor enter (pressed on an empty
// input out of habit, it must not approve what runs unseen).
func (m *tuiModel) bgTakes(k tea.KeyPressMsg) bool {
	switch k.String() {
	case "ctrl+c", "enter":
		return false
	case "esc":
		return !m.running && m.input.Value() == ""
	}
	return m.bgAsk.takes(k, m.input.Value())
}

// onBackgroundKey gives a key to the background request shown, and acts
// on what it did.
func (m *tuiModel) onBackgroundKey(k tea.KeyPressMsg) tea.Cmd {
	q := m.bg[0]
	s := m.bgAsk.onKey(k, m.width)
	if s.allow != "" {
		m.allowed[s.allow] = true
	}
	var line tea.Cmd
	if s.line != "" {
		line = m.print(dim.Render("["+bgLabel(q)+"] ") + s.line)
	}
	switch {
	case s.later:
		// It stays parked, for the session's next start, or resume.
		m.dropBackground(0)
		return tea.Batch(m.print(yellow.Render("■ "+bgLabel(q)+" left waiting for approval; deepagents resume "+q.ThreadID+" --task "+q.TaskID+" decides later")), m.askBackground())
	case s.decided:
		m.bgAsk.approveAllowed(m.allowed)
		if m.bgAsk.asking() {
			return tea.Batch(line, m.bgAsk.show())
		}
		return tea.Batch(line, m.answerBackground())
	}
	return tea.Batch(line, s.cmd)
}

// bgLabel names a background task: "background task ID (subagent)".
func bgLabel(a deepagents.AsyncApproval) string {
	return fmt.Sprintf("background task %s (%s)", display.TerminalSafe(a.TaskID), display.TerminalSafe(a.Subagent))
}

// bgView shows the background request first in the queue, or, while the
// run's own approval asks, how many wait.
func (m *tuiModel) bgView(counted bool) string {
	if len(m.bg) == 0 {
		return ""
	}
	if counted {
		return fit(dim.Render(fmt.Sprintf("· %d background approval(s) waiting, after this one", len(m.bg))), m.width) + "\n"
	}
	if !m.bgAsk.asking() {
		return ""
	}
	q := m.bg[0]
	var b strings.Builder
	head := yellow.Render("?") + " " + bold.Render(bgLabel(q))
	if q.ThreadID != m.thread {
		// A task of a thread the session worked on before (/new,
		// /resume): said, so that what is approved is not taken for
		// the thread on the screen.
		head += " " + yellow.Render("of thread "+display.TerminalSafe(q.ThreadID)+", not this one")
	}
	if len(m.bg) > 1 {
		head += dim.Render(fmt.Sprintf(" (%d waiting)", len(m.bg)))
	}
	b.WriteString(fit(head, m.width) + "\n")
	if task := display.OneLine(q.Task); task != "" {
		b.WriteString(fit(dim.Render("  task: "+display.Clip(task, max(m.width-10, 40))), m.width) + "\n")
	}
	b.WriteString(m.bgAsk.view(m.bgBefores, m.input.Value(), m.width))
	return b.String()
}
