package tui

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deepagents-go/deepagents"

	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/middleware/steer"
	"github.com/deepagents-go/deepagents/middleware/todos"
)

// Config is what an interactive session runs on: the agent's event
// stream for a new message (Prompt) and for the user's decisions on the
// approvals a run waits for (Decide), and what the session shows and keeps
// about its threads.
type Config struct {
	// In and Out are the terminal.
	In, Out *os.File
	// Prompt runs the agent on a new message of thread ("" for a new
	// thread); Decide resumes thread, stopped for approvals, with a
	// decision per request. Their events are the agent's; ending the
	// context stops the run.
	Prompt func(ctx context.Context, thread, text string) iter.Seq2[deepagents.Event, error]
	Decide func(ctx context.Context, thread string, decisions []deepagents.Decision) iter.Seq2[deepagents.Event, error]
	// Steer, when set, sends a message to the run working on thread: it
	// reaches the model at its next request (the message is saved before
	// Steer returns). Enter while a run works steers; Tab queues the
	// message for when the task ends, as Enter does without Steer.
	Steer func(ctx context.Context, thread, text string) error
	// Started is told of each run's start: its thread, and the message the
	// user sent last (a new thread's title). Ended is given what a run
	// used, to add to its thread's record. Their errors are warnings.
	Started func(ctx context.Context, thread, prompt string) error
	Ended   func(ctx context.Context, thread string, used *deepagents.UsageTree) error
	// Recent lists the recent threads (/threads); Lookup finds one
	// (/resume ID), an error when there is none.
	Recent func(ctx context.Context) ([]Thread, error)
	Lookup func(ctx context.Context, id string) (Thread, error)
	// The commands' and shortcuts' own (commands.go): see Commands.
	Commands

	// Thread is the thread to continue; "" starts a new one.
	Thread string
	// Model is the agent's model, and Profile the name of its harness
	// profile, as /model shows them.
	Model   llm.Info
	Profile string
	// Dir is the workspace folder, and UserDir the user's own ("" for
	// none): where memory is read from. SkillDirs are the folders skills
	// are read from, in order (/skills).
	Dir, UserDir string
	SkillDirs    []string
	// Subagents are the names of the agent's subagents (/agents).
	Subagents []string
	// Files are the agent's files, which @path attaches from.
	Files backend.Backend
	// Prices are the user's, over the built-in ones (/tokens).
	Prices map[string]llm.Price
	// PromptLimit bounds a message, in bytes.
	PromptLimit int
	// Mode is the permission mode the session starts in: shift+tab cycles
	// it (hitl.Modes), approving a plan sets it. SetMode is told of each
	// change, before the next run starts, for the runs to carry it onto
	// their threads.
	Mode    hitl.Mode
	SetMode func(hitl.Mode)
	// Before is what the command wrote on stderr while it opened the
	// session (notes, warnings), shown first: the session's first
	// output starts above the line the cursor was on.
	Before []string
	// Clear, when set, is told that /clear leaves thread, before the next
	// message starts a new one (the command's SessionEnd and SessionStart
	// hooks). It returns at once; the function it returns waits for what
	// it started and returns the lines to show.
	Clear func(ctx context.Context, thread string) func() []string
	// Idle, when set, is called once the session has waited IdleAfter
	// (zero: a minute) for the user after a task ended, once per wait
	// (the idle Notification hooks); it returns the lines to show.
	Idle      func(ctx context.Context, thread string) []string
	IdleAfter time.Duration
	// HostQuestions are the questions of sandboxed commands that want to
	// reach a host no rule names, asked while they run (nil: none come).
	HostQuestions <-chan HostQuestion
	// Background, when set, are the agent's background subagents: the
	// requests for approval their tasks park on queue in the session
	// (background.go), those of Thread parked before it started among
	// them, and are answered there while the main agent goes on.
	Background Background
}

// defaultIdleAfter is how long the session waits for the user before it
// calls Config.Idle: Claude Code's minute.
const defaultIdleAfter = time.Minute

// Thread is a thread as the session lists it: its id, title (its first
// message, or what the user named it), status and when it last changed.
type Thread struct {
	ID, Title, Status string
	Updated           time.Time
}

// Run is `deepagents` on a terminal: a session of turns on one thread,
// with the answer streaming, tool calls folded with their results, the
// todo list live, and approvals asked for in place. It returns when the
// user leaves, or ctx ends.
func Run(ctx context.Context, cfg Config) error {
	m := newModel(ctx, cfg)
	m.colours = detectColours(cfg.Out)
	p := tea.NewProgram(m, tea.WithInput(cfg.In), tea.WithOutput(cfg.Out), tea.WithContext(ctx))
	m.send = p.Send
	if cfg.HostQuestions != nil {
		done := make(chan struct{})
		defer close(done)
		go forwardHostQuestions(cfg.HostQuestions, p.Send, done)
	}
	if cfg.Background != nil {
		defer watchBackground(cfg.Background, p.Send)()
	}
	_, err := p.Run()
	// What was still queued when the session ended (a long answer goes out
	// a quarter of the window at a time) follows the last view, so that
	// nothing printed is lost.
	for _, l := range m.queue {
		fmt.Fprintln(cfg.Out, colours(m.colours, l))
	}
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// Messages from a run's goroutine to the program.
type (
	eventMsg struct{ e deepagents.Event }
	// runDoneMsg says run number run has ended: a run resumed at once
	// from the end of the one before may start before that one's message
	// arrives, which must then not touch the new run.
	runDoneMsg struct {
		run int
		err error
	}
	// quitExpiredMsg ends the wait, armed at at, for a second ctrl+c.
	quitExpiredMsg struct{ at time.Time }
	// approvalReadyMsg says an approval's keys are taken now.
	approvalReadyMsg struct{}
	// idleMsg says the wait number wait may have lasted IdleAfter.
	idleMsg struct{ wait int }
	// linesMsg are lines to print, from a command's goroutine.
	linesMsg struct{ lines []string }
)

const (
	// quitWindow is how long after a ctrl+c on an empty line a second
	// one leaves the session.
	quitWindow = 2 * time.Second
	// approvalGrace is how long after an approval shows that its keys are
	// still taken as typing: a key pressed as it appears was meant for
	// something else.
	approvalGrace = 800 * time.Millisecond
)

// tuiModel is the interactive session's state.
type tuiModel struct {
	ctx           context.Context
	cfg           Config
	send          func(tea.Msg)
	input         textarea.Model
	width, height int

	thread  string
	running bool
	cancel  context.CancelFunc
	runs    int // runs started, the current one's number
	// context is what filled the main agent's last model call (/context).
	context *deepagents.ContextWindow
	stopped bool // the user stopped the current step
	// quiet runs (a ! command's output added, /compact) print no usage
	// line when they called no model.
	quiet bool
	// overlay, when set, takes the keys and replaces the input: the
	// memory chooser of #, the thread picker of /resume.
	overlay overlay

	// failed says the current run's end told its error already.
	failed bool
	// queued are the messages sent while a task went on, for after it.
	queued []string
	// steered are the messages sent to the running task that its model
	// has not been given yet (a steer notice says when it is).
	steered []string
	// lastSent is the message sent last: a new thread's title.
	lastSent string
	// quitArmed is when ctrl+c on an empty line asked for a second one
	// (zero when not waiting for one); escArmed the same for esc, whose
	// second opens the rewind list.
	quitArmed, escArmed time.Time

	// results are the tool results of the current task, which ctrl+o
	// shows in full; expanded shows them in full as they come.
	results  []toolResult
	expanded bool
	// calls are the arguments of the edit_file and write_file calls not
	// yet answered, by id, for the diff under their results.
	calls map[string]json.RawMessage
	// hint is what a tab listed (completions), under the input until the
	// next key.
	hint string

	answer  strings.Builder // the main agent's answer, streaming
	todos   []todos.Todo
	history []string // what was sent, for up and down
	histPos int

	// approval is the run's request for approval (approval.go).
	approval approval
	// befores are the files the pending requests change, as they were
	// when asked (edit_file, write_file), by the call's id.
	befores map[string]before
	// bg are the background tasks' requests for approval, oldest first,
	// the first one asked about in bgAsk, with the files its requests
	// change as they were (bgBefores).
	bg        []deepagents.AsyncApproval
	bgAsk     approval
	bgBefores map[string]before
	// bgAnswered are the tasks' requests answered in the session (by
	// answeredKey), which a read of the parked ones (Approvals) begun
	// before may still list.
	bgAnswered map[string]bool
	// allowed are the tools the user approved for the whole session.
	allowed map[string]bool
	// mode is the permission mode (see Config.Mode).
	mode hitl.Mode

	// What the current task and the whole session used, what the thread's
	// record lacks, and the prices that make it a cost.
	usage, session, unrecorded deepagents.UsageTree
	prices                     map[string]llm.Price

	// Lines to print above the view, in order: one print is in flight at
	// a time, since commands run concurrently, and none while a resize
	// settles (see printRows).
	queue    []string
	flushing bool
	settling bool
	// colours is the terminal's colour profile, which what is printed is
	// written in (colour.go).
	colours colorprofile.Profile
	resizes int // the window's sizes so far, the current one's number

	// lastView is the view drawn last, and stale how many rows of the
	// terminal above it hold an earlier view that a narrower window
	// wrapped onto more rows: the next print deletes them.
	lastView string
	stale    int

	// hosts are the network's questions waiting (Config.HostQuestions),
	// the first one shown since hostAsked.
	hosts     []*askedHost
	hostAsked time.Time

	// The wait for the user after a task (Config.Idle): its number,
	// whether it goes on, and when a key was pressed last.
	wait      int
	waiting   bool
	lastKeyAt time.Time
}

// printedMsg says the lines in flight are printed.
type printedMsg struct{}

// settledMsg says the window's size number resize has had time to reach
// the screen (see settleAfter).
type settledMsg struct{ resize int }

// How the session prints above its view, and why so. The renderer
// (bubbletea's, inline) prints a block by scrolling the screen up as
// many rows as the block takes, moving up over the block and its view,
// inserting the block's rows there and writing them. Its arithmetic holds
// only while the block and the view it holds together fit the window:
// past that the move up stops at the top row, the rows it scrolled away
// (the view, then blank rows) stay in the scrollback, and the view it
// redraws then covers and erases the end of what was printed. (A long
// answer, printed once it is whole while the view still showed its
// streaming tail, lost its last rows so.) So every view is cut to the
// window's height less printRows, and a print takes at most printRows
// rows, cut into rows of the window's width, one print at a time; after
// a resize nothing prints until the renderer has drawn at the new size
// (the view it holds may be the taller one of before).

// printRows is how many rows one print takes at most in a window of
// height rows, and how many rows a view leaves free.
func printRows(height int) int { return max(1, height/4) }

// settleAfter is how long after a resize prints wait: a few of the
// renderer's frames (60 a second).
const settleAfter = 50 * time.Millisecond

// print queues lines to print above the view.
func (m *tuiModel) print(lines ...string) tea.Cmd {
	for _, l := range lines {
		// A tab's width is the terminal's to choose; the rows a print
		// takes must be known (see printRows): four spaces.
		m.queue = append(m.queue, strings.Split(strings.ReplaceAll(l, "\t", "    "), "\n")...)
	}
	return m.flush()
}

// flush prints the next rows of the queue, at most printRows of them.
func (m *tuiModel) flush() tea.Cmd {
	if m.flushing || m.settling || len(m.queue) == 0 {
		return nil
	}
	rows := m.nextRows(printRows(m.height))
	text := colours(m.colours, strings.Join(rows, "\n"))
	if m.stale > 0 {
		// The renderer starts a print at the top of its view: the rows
		// above it that still show an earlier, rewrapped view go.
		text = fmt.Sprintf("\x1b[%dA\r\x1b[%dM", m.stale, m.stale) + text
		m.stale = 0
	}
	m.flushing = true
	return tea.Sequence(tea.Println(text), func() tea.Msg { return printedMsg{} })
}

// nextRows takes lines of the queue for the next print, n rows at most
// once the terminal wraps them (at least one row). Lines stay whole,
// for the terminal to rewrap when the window's width changes, but two:
// one that takes more than n rows, cut into rows here for the rows that
// do not fit to stay queued, and one whose width is a multiple of the
// window's, which the renderer counts as a row more than it takes (it
// would leave that row blank between the print and the view).
func (m *tuiModel) nextRows(n int) []string {
	var rows []string
	took := 0
	for len(m.queue) > 0 && took < n {
		line, w := m.queue[0], m.width
		lw := ansi.StringWidth(line)
		if w <= 0 || lw <= w {
			rows, took = append(rows, line), took+1
			m.queue = m.queue[1:]
			continue
		}
		if r := lw/w + 1; lw%w != 0 && took+r <= n {
			rows, took = append(rows, line), took+r
			m.queue = m.queue[1:]
			continue
		}
		if took > 0 && lw%w != 0 {
			break // the next print's
		}
		cut := strings.Split(ansi.Hardwrap(line, w, true), "\n")
		take := min(n-took, len(cut))
		rows, took = append(rows, cut[:take]...), took+take
		if take == len(cut) {
			m.queue = m.queue[1:]
		} else {
			m.queue[0] = strings.Join(cut[take:], "")
		}
	}
	return rows
}

// termRows is how many rows a line of w columns takes on a terminal of
// width columns (one when the width is unknown).
func termRows(w, width int) int {
	if width <= 0 {
		return 1
	}
	return max(1, (w+width-1)/width)
}

// fitView cuts view to the rows a view may take in the window (its
// height less printRows): its last rows, as the renderer would keep them.
func fitView(view string, width, height int) string {
	if height <= 0 {
		return view
	}
	room := height - printRows(height)
	lines := strings.Split(strings.TrimSuffix(view, "\n"), "\n")
	rows := 0
	if strings.HasSuffix(view, "\n") {
		rows = 1 // the renderer counts the empty row after the last newline
	}
	for i := len(lines) - 1; i >= 0; i-- {
		r := termRows(ansi.StringWidth(lines[i]), width)
		if rows+r > room {
			return strings.Join(lines[i+1:], "\n") + "\n"
		}
		rows += r
	}
	return view
}

var (
	dim    = lipgloss.NewStyle().Faint(true)
	bold   = lipgloss.NewStyle().Bold(true)
	red    = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	green  = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	yellow = lipgloss.NewStyle().Foreground(lipgloss.Color("3"))
)

// The input's placeholder when no task goes on, and while one does.
const (
	idlePlaceholder = "a task, /help, or @file to attach"
	busyPlaceholder = "a message for when this task ends"
	// steerPlaceholder is busyPlaceholder where Enter steers.
	steerPlaceholder = "a message for the task as it works (tab: for when it ends)"
)

func newModel(ctx context.Context, cfg Config) *tuiModel {
	return &tuiModel{ctx: ctx, cfg: cfg, input: newInput(), thread: cfg.Thread, allowed: map[string]bool{},
		prices: cfg.Prices, mode: cmp.Or(cfg.Mode, hitl.ModeAsk), approval: approval{plans: true}}
}

func (m *tuiModel) Init() tea.Cmd {
	intro := fmt.Sprintf("deepagents · %s · %s", m.cfg.Model.Name, m.cfg.Dir)
	if m.thread != "" {
		intro += " · thread " + m.thread
	}
	lines := append(m.cfg.Before, dim.Render(intro+" · /help for commands"))
	return tea.Batch(m.print(append(lines, m.earlier(m.thread)...)...), textarea.Blink, m.loadBackground(m.thread))
}

// Update handles msg; an approval that comes into view by it (the run's
// once a background task's reason is typed, a background task's once the
// run's is answered, either once an overlay closes or a host question is
// answered) takes its keys only
// after approvalGrace, as one newly asked: a key pressed as it appears was
// meant for what it replaced.
func (m *tuiModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	shown := m.shownApproval()
	_, cmd := m.update(msg)
	if now := m.shownApproval(); now != nil && now != shown {
		cmd = tea.Batch(cmd, now.show())
	}
	return m, cmd
}

// shownApproval is the approval whose keys the session takes (nil for
// none: an overlay's, or a host question's, which goes first), as view
// and Update order them.
func (m *tuiModel) shownApproval() *approval {
	switch {
	case m.overlay != nil:
		return nil
	case m.bgAsk.typing():
		return &m.bgAsk
	case m.approval.typing():
		return &m.approval
	case len(m.hosts) > 0:
		return nil // its keys (y, a, n too) answer the host question
	case m.approval.asking():
		return &m.approval
	case m.bgAsk.asking() && len(m.bg) > 0:
		return &m.bgAsk
	}
	return nil
}

func (m *tuiModel) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		if m.width > 0 && msg.Width < m.width {
			m.stale += rewrapped(m.lastView, m.width, m.height, msg.Width)
		}
		m.width, m.height = msg.Width, msg.Height
		m.resizes++
		m.settling = true
		n := m.resizes
		settle := tea.Tick(settleAfter, func(time.Time) tea.Msg { return settledMsg{n} })
		m.input.SetWidth(max(msg.Width-1, 10))
		m.approval.resize(msg.Width)
		m.bgAsk.resize(msg.Width)
		return m, settle
	case approvalReadyMsg:
		return m, nil // shows the approval's keys
	case idleMsg:
		return m, m.onIdle(msg)
	case hostQuestionMsg:
		return m, m.onHostQuestion(msg.q)
	case hostWithdrawnMsg:
		return m, m.onHostWithdrawn(msg.n)
	case bgApprovalMsg:
		return m, m.onBackgroundApproval(msg.a)
	case bgFoundMsg:
		return m, m.onBackgroundFound(msg)
	case bgAnsweredMsg:
		return m, m.onBackgroundAnswered(msg)
	case linesMsg:
		if len(msg.lines) == 0 {
			return m, nil
		}
		return m, m.print(msg.lines...)
	case quitExpiredMsg:
		if msg.at.Equal(m.quitArmed) {
			m.quitArmed = time.Time{}
		}
		return m, nil
	case eventMsg:
		return m, m.onEvent(msg.e)
	case shellOutputMsg:
		return m, m.onShellOutput(msg)
	case steeredMsg:
		return m, m.onSteered(msg)
	case printedMsg:
		m.flushing = false
		return m, m.flush()
	case settledMsg:
		if msg.resize != m.resizes {
			return m, nil // a later resize settles after
		}
		m.settling = false
		return m, m.flush()
	case editedMsg:
		return m, m.onEditorExit(msg)
	case tea.PasteMsg:
		if m.approval.typing() {
			return m, m.approval.paste(msg)
		}
		if m.bgAsk.typing() {
			return m, m.bgAsk.paste(msg)
		}
		m.hint = ""
		return m, m.onPaste(msg.Content)
	case runDoneMsg:
		if msg.run != m.runs {
			return m, nil // an earlier run's; the current one goes on
		}
		return m, m.onRunDone(msg.err)
	case tea.KeyPressMsg:
		m.lastKeyAt = time.Now()
		if msg.String() != "ctrl+c" {
			m.quitArmed = time.Time{} // another key: the next ctrl+c is a first
		}
		if msg.String() != "esc" {
			m.escArmed = time.Time{}
		}
		if msg.String() != "tab" {
			m.hint = "" // what a tab listed goes with the next key
		}
		if msg.String() == "shift+tab" && !m.approval.typing() && !m.bgAsk.typing() && m.overlay == nil {
			m.setMode(m.mode.Next())
			return m, nil
		}
		if m.overlay != nil {
			return m, m.onOverlayKey(msg)
		}
		if m.approval.typing() {
			return m, m.onApprovalKey(msg)
		}
		if m.bgAsk.typing() {
			return m, m.onBackgroundKey(msg)
		}
		if len(m.hosts) > 0 && m.hostTakes(msg) {
			return m, m.onHostKey(msg)
		}
		if m.approval.waiting() && m.approval.takes(msg, m.input.Value()) {
			return m, m.onApprovalKey(msg)
		}
		if !m.approval.waiting() && m.bgAsk.asking() && m.bgTakes(msg) {
			return m, m.onBackgroundKey(msg)
		}
		return m, m.onKey(msg)
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
}

// busy reports whether a task goes on: a run, or an approval it waits on.
func (m *tuiModel) busy() bool { return m.running || m.approval.waiting() }

// onKey handles a key for the input line.
func (m *tuiModel) onKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "ctrl+c", "esc":
		if m.running {
			// Stop the step, not the session: the thread keeps what was
			// saved and takes the next message. What was queued comes
			// back to the input, not sent.
			m.stopped = true
			m.cancel()
			if len(m.queued) > 0 {
				m.input.SetValue(strings.Join(append(m.queued, m.input.Value()), "\n"))
				m.input.MoveToEnd()
				m.queued = nil
			}
			return nil
		}
		if m.input.Value() != "" {
			m.input.SetValue("")
			return nil
		}
		if k.String() == "esc" && !m.busy() {
			// esc esc on an empty input: the rewind list.
			if !m.escArmed.IsZero() && time.Since(m.escArmed) < escWindow {
				m.escArmed = time.Time{}
				return m.openRewind(func(s string) tea.Cmd { return m.print(s) })
			}
			m.escArmed = time.Now()
			return nil
		}
		if k.String() == "ctrl+c" {
			// A ctrl+c meant for a step that has just ended must not end
			// the session: it takes two.
			if !m.quitArmed.IsZero() && time.Since(m.quitArmed) < quitWindow {
				return tea.Quit
			}
			at := time.Now()
			m.quitArmed = at
			return tea.Tick(quitWindow, func(time.Time) tea.Msg { return quitExpiredMsg{at} })
		}
		return nil
	case "ctrl+d":
		if !m.busy() && m.input.Value() == "" {
			return tea.Quit
		}
	case "up", "down":
		if len(m.history) == 0 || k.String() == "up" && !m.onFirstRow() ||
			k.String() == "down" && (!m.onLastRow() || m.histPos == len(m.history)) {
			break // a move in the input
		}
		if k.String() == "up" {
			m.histPos = max(m.histPos-1, 0)
		} else {
			m.histPos = min(m.histPos+1, len(m.history))
		}
		if m.histPos == len(m.history) {
			m.input.SetValue("")
		} else {
			m.input.SetValue(m.history[m.histPos])
		}
		// At the message's end, as a shell recalls a line: to be added
		// to (up again on its first row goes further back).
		m.input.MoveToEnd()
		return nil
	case "ctrl+g":
		return m.openEditor()
	case "ctrl+o":
		return m.toggleExpanded()
	case "tab":
		if text := strings.TrimSpace(m.input.Value()); m.steerable(text) && !completes(text) {
			// Queued for when the task ends, rather than steering.
			m.input.SetValue("")
			m.history = append(m.history, text)
			m.histPos = len(m.history)
			m.queued = append(m.queued, text)
			return nil
		}
		m.hint = m.complete()
		return nil
	case "enter":
		if m.continued() {
			return nil
		}
		text := strings.TrimSpace(m.input.Value())
		if text == "" {
			return nil
		}
		m.input.SetValue("")
		m.history = append(m.history, text)
		m.histPos = len(m.history)
		if m.steerable(text) {
			return m.steer(text)
		}
		if m.busy() {
			// Sent when the task ends.
			m.queued = append(m.queued, text)
			return nil
		}
		return m.submit(text)
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	return cmd
}

// steerable reports whether text, sent now, would steer the run working:
// one works (not one stopped for approvals), the session can steer, and
// text is a message, not a command.
func (m *tuiModel) steerable(text string) bool {
	return m.cfg.Steer != nil && m.running && !m.approval.waiting() && m.thread != "" && text != "" && !strings.HasPrefix(text, "/")
}

// completes reports whether Tab would complete text (a command, an
// @file) rather than queue it.
func completes(text string) bool {
	if strings.HasPrefix(text, "/") {
		return true
	}
	fields := strings.Fields(text)
	return len(fields) > 0 && strings.HasPrefix(fields[len(fields)-1], "@")
}

// steeredMsg says how a message sent to the running task fared.
type steeredMsg struct {
	text string
	err  error
}

// steer sends text to the run working, and says so above the view once it
// is saved; a message that could not be sent is queued instead.
func (m *tuiModel) steer(text string) tea.Cmd {
	ctx, thread, send := m.ctx, m.thread, m.cfg.Steer
	return func() tea.Msg { return steeredMsg{text, send(ctx, thread, text)} }
}

func (m *tuiModel) onSteered(msg steeredMsg) tea.Cmd {
	if msg.err != nil {
		m.queued = append(m.queued, msg.text)
		return m.print(red.Render("warning: ") + "the message could not reach the running task (" + display.OneLine(msg.err.Error()) + "); it is queued for when the task ends")
	}
	m.steered = append(m.steered, msg.text)
	return m.print(dim.Render("› ") + display.TerminalSafe(msg.text) + dim.Render(" · sent to the running task"))
}

// delivered forgets a message sent to the running task that its model was
// given (the content of its steer notice).
func (m *tuiModel) delivered(notice string) {
	text, ok := steer.DeliveredText(notice)
	if i := slices.Index(m.steered, text); ok && i >= 0 {
		m.steered = slices.Delete(m.steered, i, i+1)
	}
}

// lateSteers are notes on the messages sent to a task that ended before
// its model was given them: the thread's next run gives them.
func (m *tuiModel) lateSteers() []string {
	var lines []string
	for _, t := range m.steered {
		lines = append(lines, yellow.Render("note: ")+display.OneLine(display.Clip(t, 80))+" reached the task after its last step: the model gets it with your next message")
	}
	m.steered = nil
	return lines
}

// sendQueued sends the first message queued while a task went on, once
// none goes on.
func (m *tuiModel) sendQueued() tea.Cmd {
	if m.busy() || m.overlay != nil || len(m.queued) == 0 {
		return nil
	}
	text := m.queued[0]
	m.queued = m.queued[1:]
	cmd := m.submit(text)
	if !m.busy() {
		// A command: the next one goes on at once.
		return tea.Batch(cmd, m.sendQueued())
	}
	return cmd
}

// submit sends a message: a / command, or a prompt to the agent.
func (m *tuiModel) submit(text string) tea.Cmd {
	if strings.HasPrefix(text, "/") {
		return m.command(text)
	}
	if cmd, ok := m.shortcut(text); ok {
		return cmd
	}
	m.lastSent = text
	prompt, notes := m.attach(text)
	thread, ask := m.thread, m.cfg.Prompt
	run := func(ctx context.Context) iter.Seq2[deepagents.Event, error] { return ask(ctx, thread, prompt) }
	m.results = nil
	return tea.Batch(m.print(echo(text)+notes), m.start(run, false))
}

// start runs the agent (run: a prompt or decisions), its events sent to
// the program; a quiet run prints no usage line when it called no model.
func (m *tuiModel) start(run func(context.Context) iter.Seq2[deepagents.Event, error], quiet bool) tea.Cmd {
	ctx, cancel := context.WithCancel(m.ctx)
	m.quiet = quiet
	if m.cancel != nil {
		defer m.cancel() // the run before, if any, has ended: free its context
	}
	m.runs++
	m.waiting = false // the user answered
	m.running, m.cancel, m.stopped, m.failed = true, cancel, false, false
	m.answer.Reset()
	send, n := m.send, m.runs
	return func() tea.Msg {
		for e, err := range run(ctx) {
			if err != nil {
				return runDoneMsg{n, err}
			}
			send(eventMsg{e})
		}
		return runDoneMsg{run: n}
	}
}

// onEvent shows one event of the run.
func (m *tuiModel) onEvent(e deepagents.Event) tea.Cmd {
	sub := len(e.Namespace) > 0
	indent := ""
	if sub {
		indent = "  " + dim.Render("["+strings.Join(e.Namespace, "/")+"]") + " "
	}
	switch e.Type {
	case deepagents.EventRunStart:
		if !sub {
			// Every run, so that --continue finds the thread worked on
			// last, whether new, resumed or continued.
			m.thread = e.ThreadID
			if err := m.cfg.Started(m.ctx, e.ThreadID, m.lastPrompt()); err != nil {
				return m.print(red.Render("warning: " + err.Error()))
			}
		}
	case deepagents.EventTextDelta:
		if !sub {
			m.answer.WriteString(e.Delta)
		}
	case deepagents.EventMessage:
		if sub || e.Message == nil {
			return nil
		}
		text := strings.TrimSpace(m.answer.String())
		m.answer.Reset()
		if text == "" {
			return nil
		}
		return m.print(renderMarkdown(text, m.width)) // once whole
	case deepagents.EventToolCall:
		m.called(e)
		return m.print(callLine(indent, e.Name, e.Args, m.width))
	case deepagents.EventToolResult:
		return m.print(m.toolResult(indent, e))
	case deepagents.EventState:
		if plan, ok := todos.FromEvent(e); ok && !sub {
			m.todos = plan
		}
	case deepagents.EventUsage:
		if e.Context != nil && !sub {
			m.context = e.Context
		}
		m.usage.Add(e)
		m.session.Add(e)
		m.unrecorded.Add(e)
	case deepagents.EventNotice:
		if e.Name == steer.NoticeName && !sub {
			m.delivered(e.Content)
		}
		if display.NoticeQuiet(e) {
			return nil
		}
		if display.NoticeWarns(e) {
			return m.print(indent + red.Render("warning: ") + display.OneLine(e.Content))
		}
		return m.print(indent + yellow.Render("note: ") + display.OneLine(e.Content))
	case deepagents.EventRunEnd:
		if sub {
			return nil
		}
		err := m.cfg.Ended(m.ctx, e.ThreadID, &m.unrecorded)
		m.unrecorded = deepagents.UsageTree{}
		cmd := m.onRunEnd(e)
		if err != nil {
			cmd = tea.Batch(m.print(red.Render("warning: the thread's usage was not recorded: "+err.Error())), cmd)
		}
		return cmd
	}
	return nil
}

// onRunEnd prints how the run ended, or asks for the approvals it waits on.
func (m *tuiModel) onRunEnd(e deepagents.Event) tea.Cmd {
	var lines []string
	if text := strings.TrimSpace(m.answer.String()); text != "" {
		lines = append(lines, display.TerminalSafe(text)) // a message cut short by a stop
		m.answer.Reset()
	}
	if e.Status != deepagents.StatusInterrupted {
		lines = append(lines, m.lateSteers()...)
	}
	switch {
	case e.Status == deepagents.StatusInterrupted:
		// The task goes on after the decisions: its usage is told once
		// it ends.
		m.approval.set(e.Interrupts)
		m.readBefores()
		return tea.Batch(m.print(lines...), m.autoApprove())
	case m.stopped:
		lines = append(lines, yellow.Render("■ stopped; the thread keeps what was done so far"))
	case e.Status == deepagents.StatusFailed:
		lines = append(lines, red.Render("✗ "+display.OneLine(e.Error)))
		m.failed = true // the run's error, which the stream then gives too
	case display.Ended(e) != "":
		lines = append(lines, yellow.Render("■ "+display.Ended(e)))
	}
	if calls, _ := m.usage.Total(); calls > 0 || !m.quiet {
		for _, l := range display.UsageLines(e.ThreadID, &m.usage, m.prices) {
			lines = append(lines, dim.Render(l)) // line by line: lipgloss pads a block to its widest line
		}
	}
	m.usage = deepagents.UsageTree{}
	return m.print(strings.Join(lines, "\n"))
}

func (m *tuiModel) onRunDone(err error) tea.Cmd {
	m.running = false
	m.cancel()
	var cmd tea.Cmd
	if err != nil && !m.stopped && !m.failed {
		cmd = m.print(red.Render("✗ " + display.OneLine(err.Error())))
	}
	if m.stopped && !m.approval.waiting() {
		m.stopped = false
	}
	return tea.Batch(cmd, m.sendQueued(), m.awaitUser())
}

// awaitUser starts the wait for the user, once a task has ended and
// nothing else goes on: Config.Idle is called when it lasts IdleAfter.
func (m *tuiModel) awaitUser() tea.Cmd {
	if m.cfg.Idle == nil || m.busy() || len(m.queued) > 0 {
		return nil
	}
	m.wait++
	m.waiting = true
	m.lastKeyAt = time.Now()
	return m.idleTick(m.idleAfter())
}

func (m *tuiModel) idleAfter() time.Duration { return cmp.Or(m.cfg.IdleAfter, defaultIdleAfter) }

func (m *tuiModel) idleTick(d time.Duration) tea.Cmd {
	wait := m.wait
	return tea.Tick(d, func(time.Time) tea.Msg { return idleMsg{wait} })
}

// onIdle calls Config.Idle when the wait msg is of still goes on and no
// key was pressed for IdleAfter (typing is not waiting); else it looks
// again when that may be so.
func (m *tuiModel) onIdle(msg idleMsg) tea.Cmd {
	if msg.wait != m.wait || !m.waiting || m.busy() {
		return nil
	}
	if left := m.idleAfter() - time.Since(m.lastKeyAt); left > 0 {
		return m.idleTick(left)
	}
	m.waiting = false // once per wait
	ctx, thread, idle := m.ctx, m.thread, m.cfg.Idle
	return func() tea.Msg { return linesMsg{idle(ctx, thread)} }
}

// autoApprove takes the decisions the session already made: tools the
// user approved for the session. It resumes the run when that answers
// every request.
func (m *tuiModel) autoApprove() tea.Cmd {
	a := &m.approval
	a.approveAllowed(m.allowed)
	if a.asking() {
		// The next request shows now; its keys once it has been seen.
		ready := a.show()
		if req := a.current(); req.Tool == hitl.ExitPlanTool {
			return tea.Batch(m.print(renderPlan(req, m.width)), ready) // too long for the view
		}
		return ready
	}
	return m.resumeIfDecided()
}

func (m *tuiModel) resumeIfDecided() tea.Cmd {
	if !m.approval.waiting() || m.approval.asking() {
		return nil
	}
	thread, decisions, decide := m.thread, m.approval.take(), m.cfg.Decide
	return m.start(func(ctx context.Context) iter.Seq2[deepagents.Event, error] { return decide(ctx, thread, decisions) }, false)
}

// onApprovalKey gives a key to the run's approval (approval.go) and acts
// on what it did.
func (m *tuiModel) onApprovalKey(k tea.KeyPressMsg) tea.Cmd {
	s := m.approval.onKey(k, m.width)
	if s.allow != "" {
		m.allowed[s.allow] = true
	}
	if s.mode != "" {
		m.setMode(s.mode)
	}
	var line tea.Cmd
	if s.line != "" {
		line = m.print(s.line)
	}
	switch {
	case s.later:
		// Leave the run waiting: the thread can be resumed later.
		m.approval.clear()
		return tea.Batch(m.print(yellow.Render("■ left waiting for approval; deepagents resume "+m.thread+" decides later")), m.sendQueued())
	case s.decided:
		return tea.Batch(line, m.autoApprove())
	}
	return tea.Batch(line, s.cmd)
}

// keyLine is head and keys, wrapped between keys to width (0: no
// wrapping), the lines after the first indented as wide as head.
func keyLine(head string, keys []string, width int) string {
	indent := strings.Repeat(" ", len(head))
	var b strings.Builder
	b.WriteString(bold.Render(strings.TrimSpace(head)))
	col := len(head) - 1
	for i, k := range keys {
		sep := "  "
		if i == 0 {
			sep = " "
		}
		if w := ansi.StringWidth(k); width > 0 && i > 0 && col+len(sep)+w > width {
			b.WriteString("\n" + indent + k)
			col = len(indent) + w
			continue
		}
		b.WriteString(sep + k)
		col += len(sep) + ansi.StringWidth(k)
	}
	return fit(b.String(), width) + "\n"
}

// fit wraps s to width (0: no wrapping).
func fit(s string, width int) string {
	if width <= 0 {
		return s
	}
	return ansi.Wrap(s, width, "")
}

// rewrapped is how many more rows the lines of view, drawn width
// columns wide (its last height lines), take once the terminal rewraps
// them to a narrower window of to columns.
func rewrapped(view string, width, height, to int) int {
	if view == "" || to <= 0 {
		return 0
	}
	lines := strings.Split(view, "\n")
	if height > 0 && len(lines) > height {
		lines = lines[len(lines)-height:]
	}
	extra := 0
	for _, l := range lines {
		extra += termRows(ansi.StringWidth(ansi.Truncate(l, width, "")), to) - 1
	}
	return extra
}

// View implements tea.Model.
func (m *tuiModel) View() tea.View {
	m.lastView = fitView(m.view(), m.width, m.height)
	return tea.NewView(m.lastView)
}

// trailingBlank is the blank end of a line: spaces, and the style
// sequences around them.
var trailingBlank = regexp.MustCompile(`(?: |\x1b\[[0-9;]*m)+$`)

// inputView is an input's line. An empty input's placeholder is padded
// to the input's width: the padding goes, so that the line takes one row
// still when the window narrows. (Only then: the cursor after a value is
// a space.)
func inputView(ti textinput.Model) string {
	v := ti.View()
	if ti.Value() != "" || ti.Placeholder == "" {
		return v
	}
	if t := trailingBlank.ReplaceAllString(v, ""); t != v {
		v = t + "\x1b[0m" // a style cut off with the blanks ends here
	}
	return v
}

func (m *tuiModel) view() string {
	if m.overlay != nil {
		return m.overlay.view(m.width)
	}
	var b strings.Builder
	if text := m.answer.String(); text != "" {
		b.WriteString(liveTail(text, m.width, m.height) + "\n")
	}
	if len(m.todos) > 0 {
		b.WriteString(renderTodos(m.todos))
	}
	if len(m.hosts) > 0 {
		b.WriteString(m.hostView())
	}
	m.bgAsk.noLater = m.running // esc stops the run's step
	switch {
	case m.bgAsk.typing():
		// A reason for a background task being typed keeps the keys,
		// the run's own approval waiting behind it.
		b.WriteString(m.bgView(false))
		if m.approval.waiting() {
			b.WriteString(fit(dim.Render("· the run waits for approval too, after this"), m.width) + "\n")
		}
		return b.String() + m.modeLine() + "\n"
	case m.approval.asking():
		b.WriteString(m.approval.view(m.befores, m.input.Value(), m.width))
		b.WriteString(m.bgView(true))
		if m.approval.typing() {
			return b.String() + m.modeLine() + "\n"
		}
	default:
		if m.running {
			keys := " · enter queues a message"
			if m.cfg.Steer != nil {
				keys = " · enter steers, tab queues"
			}
			b.WriteString(fit(dim.Render("working…"+display.ContextFill(m.context)+" · esc stops the step"+keys), m.width) + "\n")
		}
		b.WriteString(m.bgView(false))
	}
	m.input.Placeholder = idlePlaceholder
	switch {
	case m.cfg.Steer != nil && m.running && !m.approval.waiting():
		m.input.Placeholder = steerPlaceholder
	case m.busy():
		m.input.Placeholder = busyPlaceholder
	}
	for _, q := range m.queued {
		b.WriteString(dim.Render(display.Clip("queued: "+q, max(m.width-1, 20))) + "\n")
	}
	b.WriteString(m.messageView() + "\n")
	if m.hint != "" {
		b.WriteString(fit(dim.Render(m.hint), m.width) + "\n")
	}
	b.WriteString(m.modeLine() + "\n")
	b.WriteString(fit(dim.Render(m.statusLine("")), m.width) + "\n")
	if !m.quitArmed.IsZero() {
		b.WriteString(dim.Render("press ctrl+c again to exit") + "\n")
	}
	return b.String()
}

// attach replaces each @path of text that names a file in the workspace
// with the path, and appends the files' contents (at most 100 KB each).
func (m *tuiModel) attach(text string) (prompt, notes string) {
	prompt, files := attachFiles(m.ctx, m.cfg.Files, text)
	if len(files) > 0 {
		notes = "\n" + dim.Render("  attached "+strings.Join(files, ", "))
	}
	return prompt, notes
}

// maxAttach bounds the text one @file attaches.
const maxAttach = 100 << 10

// attachFiles appends to text the contents of the files its @path words
// name, read through b as read_file reads them: virtual paths of the
// agent's filesystem, no symbolic links, and the paths the read rules
// deny left out. It returns the prompt and the paths attached.
func attachFiles(ctx context.Context, b backend.Backend, text string) (prompt string, files []string) {
	var out strings.Builder
	out.WriteString(text)
	for _, word := range strings.Fields(text) {
		p, ok := strings.CutPrefix(word, "@")
		if !ok || p == "" || slices.Contains(files, p) {
			continue
		}
		vp, err := backend.Clean("/" + strings.TrimPrefix(p, "/"))
		if err != nil || vp == "/" {
			continue
		}
		data, err := readAtMost(ctx, b, vp, maxAttach)
		if err != nil {
			continue
		}
		files = append(files, p)
		fmt.Fprintf(&out, "\n\n<file path=%q>\n%s\n</file>", vp, data)
	}
	return out.String(), files
}

// readAtMost reads the first n bytes of the file at the virtual path p of
// b, however large it is, cut at a whole character.
func readAtMost(ctx context.Context, b backend.Backend, p string, n int) ([]byte, error) {
	got := b.Download(ctx, []string{p})[0]
	data, err := got.Content, got.Err
	if errors.Is(err, backend.ErrTooLarge) {
		// Over the backend's limit for a whole file: its first lines.
		var res backend.ReadResult
		if res, err = b.Read(ctx, p, 0, 0); err != nil {
			return nil, err
		}
		data = nil
		for _, l := range res.Lines {
			data = append(append(data, l...), '\n')
			if len(data) >= n {
				break
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if len(data) >= n {
		data = data[:n]
		// The cut may have split a character: drop its first bytes.
		for i := 0; i < utf8.UTFMax-1 && len(data) > 0; i++ {
			if r, size := utf8.DecodeLastRune(data); r != utf8.RuneError || size > 1 {
				break
			}
			data = data[:len(data)-1]
		}
	}
	return data, nil
}

// lastPrompt is what the user sent last: the title of a new thread.
func (m *tuiModel) lastPrompt() string {
	return m.lastSent
}
