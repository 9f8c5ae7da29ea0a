package tui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/deepagents-go/deepagents"

	tea "charm.land/bubbletea/v2"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/llm"
)

// The / commands and the ! and # shortcuts of the session. (The command
// switch moved here from tui.go.)

// Commands are what the session's commands and shortcuts run on, beyond
// a prompt's run: each may be nil, the command then saying it is not
// available.
type Commands struct {
	// Shell runs a command the user typed after "!", as the execute tool
	// runs the model's: in the same sandbox, refused by the same deny
	// rules. Its error says why a command did not run (no shell, a rule).
	Shell func(ctx context.Context, command string) (output string, exitCode int, err error)
	// Add adds text to thread ("" for a new one) as a user message,
	// without a model turn: the model sees it with the next message.
	Add func(ctx context.Context, thread, text string) iter.Seq2[deepagents.Event, error]
	// Compact summarizes thread's conversation now, the summary
	// following focus ("" for none).
	Compact func(ctx context.Context, thread, focus string) iter.Seq2[deepagents.Event, error]
	// History returns thread's conversation, redrawn when the session
	// resumes a thread.
	History func(ctx context.Context, thread string) ([]llm.Message, error)
	// SwitchModel reopens the agent on the model spec names, for the
	// following messages; on an error the agent is the one before.
	SwitchModel func(ctx context.Context, spec string) (Switched, error)
	// Describe returns what /mcp, /permissions and /config show ("mcp",
	// "permissions", "config"), and what /context adds of the network
	// ("network": "" for nothing).
	Describe func(ctx context.Context, topic string) string
	// Turns lists thread's prompts, oldest first (esc esc, /rewind);
	// Rewind puts the thread back as it was before its turn-th prompt (from
	// 1): the workspace's files, the conversation, or both, and says what
	// it did (with an error, what it did before it failed). Nil:
	// rewinding is not available.
	Turns  func(ctx context.Context, thread string) ([]Turn, error)
	Rewind func(ctx context.Context, thread string, turn int, files, conversation bool) (string, error)
	// Goal returns the goal the next message's run grades its answers
	// against (/goal): the one SetGoal gave, else thread's ("" for none).
	// SetGoal sets it ("" removes it) for thread's next message (thread
	// "" for a new one), which puts it on the thread.
	Goal    func(ctx context.Context, thread string) (string, error)
	SetGoal func(thread, goal string)
	// Custom are the command files' commands (/NAME ARGS), for /help and
	// tab; Expand returns the prompt text runs, ok false when it names
	// none of them. A built-in command wins a name.
	Custom []CustomCommand
	Expand func(text string) (prompt string, ok bool)
}

// CustomCommand is a command file's command, as /help lists it.
type CustomCommand struct {
	Name, ArgumentHint, Description string
}

// Switched is the agent SwitchModel opened: its model and profile, the
// files @path reads, and what opening it warned about.
type Switched struct {
	Model    llm.Info
	Profile  string
	Files    backend.Backend
	Warnings []string
}

// command runs a / command.
func (m *tuiModel) command(text string) tea.Cmd {
	name, arg, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
	arg = strings.TrimSpace(arg)
	say := func(s string) tea.Cmd { return m.print(dim.Render("> "+text) + "\n" + s) }
	switch name {
	case "help":
		return say(tuiHelp + m.customHelp())
	case "exit", "quit":
		return tea.Quit
	case "clear", "new":
		var hooks tea.Cmd
		if m.cfg.Clear != nil {
			wait := m.cfg.Clear(m.ctx, m.thread)
			hooks = func() tea.Msg { return linesMsg{wait()} }
		}
		m.thread, m.todos = "", nil
		return tea.Batch(say("a new thread starts with the next message"), hooks)
	case "thread":
		return say("thread " + cmp.Or(m.thread, "(new)"))
	case "threads":
		threads, err := m.cfg.Recent(m.ctx)
		if err != nil {
			return say(red.Render(err.Error()))
		}
		var b strings.Builder
		for _, t := range threads {
			fmt.Fprintf(&b, "%s  %s  %s\n", t.ID, t.Updated.Local().Format("2006-01-02 15:04"), t.Title)
		}
		return say(strings.TrimRight(cmp.Or(b.String(), "no threads yet"), "\n") + "\n/resume ID continues one; /resume alone picks one")
	case "resume":
		if arg == "" {
			threads, err := m.cfg.Recent(m.ctx)
			if err != nil {
				return say(red.Render(err.Error()))
			}
			if len(threads) == 0 {
				return say("no threads yet")
			}
			m.overlay = newThreadPicker(threads)
			return nil
		}
		return m.resume(arg, say)
	case "rewind":
		return m.openRewind(say)
	case "goal":
		return m.goal(arg, say)
	case "compact":
		if m.thread == "" {
			return say("nothing to compact: the thread has no messages yet")
		}
		if m.cfg.Compact == nil {
			return say(red.Render("/compact is not available here"))
		}
		thread, focus, compact := m.thread, arg, m.cfg.Compact
		line := "compacting the conversation"
		if focus != "" {
			line += ", focused on: " + focus
		}
		run := func(ctx context.Context) iter.Seq2[deepagents.Event, error] { return compact(ctx, thread, focus) }
		return tea.Batch(say(line+"; its full text stays in /conversation_history/"), m.start(run, true))
	case "model":
		if arg != "" {
			return m.switchModel(arg, say)
		}
		info := m.cfg.Model
		return say(fmt.Sprintf("%s:%s (context window %d tokens, profile %s); /model SPEC switches (provider:model)", info.Provider, info.Name, info.ContextWindow, m.cfg.Profile))
	case "context":
		if m.context == nil {
			return say("no model call yet in this session")
		}
		out := display.DescribeContext(m.context)
		if m.cfg.Describe != nil {
			if nw := m.cfg.Describe(m.ctx, "network"); nw != "" {
				out += "\n" + nw
			}
		}
		return say(out)
	case "tokens", "cost":
		calls, u := m.session.Total()
		cost, unpriced := m.session.Cost(m.prices)
		return say("this session: " + display.DescribeUsage(calls, u, cost, unpriced))
	case "agents":
		var b strings.Builder
		b.WriteString("general-purpose")
		for _, name := range m.cfg.Subagents {
			b.WriteString(", " + name)
		}
		return say("subagents: " + b.String())
	case "memory":
		return say("memory: " + userPlaces(m.cfg.UserDir, "AGENTS.md") + filepath.Join(m.cfg.Dir, "AGENTS.md"))
	case "skills":
		if len(m.cfg.SkillDirs) == 0 {
			return say("skills: none are read in this session")
		}
		return say("skills: " + strings.Join(m.cfg.SkillDirs, ", ") + " (a later folder wins a name)")
	case "init":
		m.lastSent = text
		prompt := initPrompt
		if _, err := os.Stat(filepath.Join(m.cfg.Dir, "AGENTS.md")); err == nil {
			prompt += initImprove
		} else {
			prompt += initCreate
		}
		if arg != "" {
			prompt += "\n\nThe user adds: " + arg
		}
		thread, ask := m.thread, m.cfg.Prompt
		run := func(ctx context.Context) iter.Seq2[deepagents.Event, error] { return ask(ctx, thread, prompt) }
		return tea.Batch(say("studying the repository to write AGENTS.md (project memory)"), m.start(run, false))
	case "mcp", "permissions", "config":
		if m.cfg.Describe == nil {
			return say(red.Render("/" + name + " is not available here"))
		}
		out := m.cfg.Describe(m.ctx, name)
		if name == "permissions" && len(m.allowed) > 0 {
			out += "\napproved for this session ([a] at an approval): " + strings.Join(slices.Sorted(maps.Keys(m.allowed)), ", ")
		}
		return say(out)
	}
	if expand := m.cfg.Commands.Expand; expand != nil {
		if prompt, ok := expand(text); ok {
			m.lastSent = text
			thread, ask := m.thread, m.cfg.Prompt
			run := func(ctx context.Context) iter.Seq2[deepagents.Event, error] { return ask(ctx, thread, prompt) }
			return tea.Batch(m.print(dim.Render("> "+text)), m.start(run, false))
		}
	}
	return say(red.Render("unknown command /" + name + "; /help lists them"))
}

// customHelp lists the command files' commands for /help.
func (m *tuiModel) customHelp() string {
	var b strings.Builder
	for _, c := range m.cfg.Commands.Custom {
		line := "/" + c.Name
		if c.ArgumentHint != "" {
			line += " " + c.ArgumentHint
		}
		fmt.Fprintf(&b, "\n%-14s %s", display.TerminalSafe(line), display.OneLine(c.Description))
	}
	if b.Len() == 0 {
		return ""
	}
	return "\ncommand files (.claude/commands, .deepagents/commands):" + b.String()
}

// customNames are the command files' commands, as tab completes them.
func (m *tuiModel) customNames() []string {
	var names []string
	for _, c := range m.cfg.Commands.Custom {
		names = append(names, "/"+c.Name)
	}
	return names
}

// goal shows the thread's goal, or sets it to arg ("clear" removes it).
func (m *tuiModel) goal(arg string, say func(string) tea.Cmd) tea.Cmd {
	c := m.cfg.Commands
	if c.Goal == nil || c.SetGoal == nil {
		return say(red.Render("/goal is not available here"))
	}
	switch arg {
	case "":
		goal, err := c.Goal(m.ctx, m.thread)
		if err != nil {
			return say(red.Render(err.Error()))
		}
		if goal == "" {
			return say("no goal; /goal TEXT sets what the task must achieve, which a grader checks the agent's final answers against")
		}
		return say("goal: " + display.TerminalSafe(goal) + "\n/goal TEXT replaces it; /goal clear removes it")
	case "clear":
		c.SetGoal(m.thread, "")
		return say("the goal is removed from the next message on")
	}
	c.SetGoal(m.thread, arg)
	return say("goal set: from the next message on, a grader checks the agent's final answers against it and sends the agent back once when one falls short (the thread keeps it; /goal clear removes it)")
}

// resume continues thread id, redrawing its conversation.
func (m *tuiModel) resume(id string, say func(string) tea.Cmd) tea.Cmd {
	t, err := m.cfg.Lookup(m.ctx, id)
	if err != nil {
		return say(red.Render(fmt.Sprintf("thread %s: %v", id, err)))
	}
	m.thread, m.todos = id, nil
	line := "continuing thread " + id
	if t.Title != "" {
		line += " (" + display.OneLine(t.Title) + ")"
	}
	return tea.Batch(say(strings.Join(append([]string{line}, m.earlier(id)...), "\n")), m.loadBackground(id))
}

// switchModel reopens the agent on spec, keeping the old one on an error.
func (m *tuiModel) switchModel(spec string, say func(string) tea.Cmd) tea.Cmd {
	if m.cfg.SwitchModel == nil {
		return say(red.Render("the model cannot be switched here"))
	}
	sw, err := m.cfg.SwitchModel(m.ctx, spec)
	if err != nil {
		info := m.cfg.Model
		return say(red.Render(fmt.Sprintf("%s: %v", spec, err)) + fmt.Sprintf("\nthe model stays %s:%s", info.Provider, info.Name))
	}
	m.cfg.Model, m.cfg.Profile = sw.Model, sw.Profile
	if sw.Files != nil {
		m.cfg.Files = sw.Files
	}
	lines := append(sw.Warnings, fmt.Sprintf("model: %s:%s (context window %d tokens, profile %s) from the next message on",
		sw.Model.Provider, sw.Model.Name, sw.Model.ContextWindow, sw.Profile))
	return say(strings.Join(lines, "\n"))
}

// shortcut runs a message that starts with ! (a shell command) or #
// (a note for memory); ok is false for any other message.
func (m *tuiModel) shortcut(text string) (cmd tea.Cmd, ok bool) {
	switch {
	case strings.HasPrefix(text, "!"):
		return m.shellCommand(strings.TrimSpace(text[1:])), true
	case strings.HasPrefix(text, "#"):
		note := strings.TrimSpace(text[1:])
		if note == "" {
			return m.print(dim.Render("> "+text) + "\n#note adds the note to memory (AGENTS.md)"), true
		}
		m.overlay = newMemoryChooser(note, m.cfg.Dir, m.cfg.UserDir)
		return nil, true
	}
	return nil, false
}

// maxShellOutput bounds the output of a ! command the conversation gets.
const maxShellOutput = 30 << 10

// shellCommand runs command (typed after !) in the agent's shell, shows
// its output, and adds both to the conversation for the next message.
func (m *tuiModel) shellCommand(command string) tea.Cmd {
	echo := bold.Render("! " + command)
	if command == "" {
		return m.print(echo + "\n!command runs a shell command; its output goes into the conversation")
	}
	if m.cfg.Shell == nil || m.cfg.Add == nil {
		return m.print(echo + "\n" + red.Render("! commands are not available here"))
	}
	m.lastSent = "!" + command
	shell, add, send, thread := m.cfg.Shell, m.cfg.Add, m.send, m.thread
	run := func(ctx context.Context) iter.Seq2[deepagents.Event, error] {
		out, code, err := shell(ctx, command)
		if err != nil && out == "" {
			return func(yield func(deepagents.Event, error) bool) { yield(deepagents.Event{}, err) }
		}
		send(shellOutputMsg{output: out, code: code, err: err})
		return add(ctx, thread, shellMessage(command, out, code, err))
	}
	return tea.Batch(m.print(echo), m.start(run, true))
}

// shellOutputMsg is a ! command's output, shown as it ends.
type shellOutputMsg struct {
	output string
	code   int
	err    error
}

// onShellOutput shows a ! command's output: its last lines.
func (m *tuiModel) onShellOutput(msg shellOutputMsg) tea.Cmd {
	const maxLines = 20
	out := strings.TrimRight(display.TerminalSafe(msg.output), "\n")
	lines := strings.Split(out, "\n")
	if n := len(lines) - maxLines; n > 0 {
		lines = append([]string{dim.Render(fmt.Sprintf("  … %d earlier lines", n))}, lines[n:]...)
	}
	for i, l := range lines {
		lines[i] = "  " + l
	}
	status := dim.Render(fmt.Sprintf("  exit code %d · added to the conversation for the next message", msg.code))
	if msg.err != nil {
		status = red.Render("  "+display.OneLine(msg.err.Error())) + dim.Render(" · added to the conversation for the next message")
	}
	if out == "" {
		lines = nil
	}
	return m.print(append(lines, status)...)
}

// shellMessage is how a ! command reaches the conversation.
func shellMessage(command, output string, code int, err error) string {
	if len(output) > maxShellOutput {
		output = "[… the beginning is cut]\n" + output[len(output)-maxShellOutput:]
	}
	status := fmt.Sprintf("exit code %d", code)
	if err != nil {
		status = err.Error()
	}
	// What the command printed comes from the workspace: it may not close
	// the block and speak on in the user's voice.
	unclosed := strings.NewReplacer("</shell_command", "<\\/shell_command")
	return fmt.Sprintf("%s\n<shell_command status=%q>\n$ %s\n%s\n</shell_command>",
		shellIntro, status, unclosed.Replace(command), unclosed.Replace(strings.TrimRight(output, "\n")))
}

// shellIntro opens the message of a ! command.
const shellIntro = "I ran a shell command myself, in the workspace; here is what it printed, for what I ask next."

// userPlaces is "DIR/name and " for the user's own folder, or "" without one.
func userPlaces(dir, name string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, name) + " and "
}

// The /init prompt: study the repository, then write or improve
// AGENTS.md.
const (
	initPrompt = `Study this repository so that you, or another agent starting here without any memory of this conversation, can work in it well, and record what you learn in /AGENTS.md, the project memory every future session reads first.

Look before you write: the top-level layout, the README and other docs, the build and package files, the test setup, CI configuration, linters and formatters. Find out:
- what the project is and how it is organised (the main packages or modules and what each is for);
- the exact commands to build, test (all, and a single test), lint and format;
- the conventions the code follows that are not obvious from one file: naming, error handling, testing style, commit and documentation habits;
- anything surprising: generated files not to edit by hand, required environment, slow or flaky parts, places that need care.

Keep AGENTS.md short and specific (well under 200 lines): commands that can be copied, paths that exist, rules a newcomer would otherwise break. Leave out what any developer knows and what the code says plainly. Do not invent anything you did not see in the repository.`
	initCreate = `

There is no /AGENTS.md yet: create it with write_file.`
	initImprove = `

/AGENTS.md exists already: read it first, keep what is still right (the user may have written it), correct what is wrong or out of date, and add what is missing, with edit_file. Do not replace it wholesale.`
)

const tuiHelp = `/help          this list
/clear         start a new thread
/thread        the current thread's id
/threads       recent threads
/resume [ID]   continue a thread: ID, or pick one from a list
/model [SPEC]  the model; with a spec (provider:model), switch to it
/compact [FOCUS]  summarize the conversation now, focused on FOCUS if given
/rewind        (or esc esc) go back before an earlier prompt: code, conversation or both
/goal [TEXT]   the thread's goal, which a grader checks the final answers against; with TEXT, set it (clear removes it)
/context       what filled the context window at the last model call
/tokens        tokens and cost of this session
/init          study the repository and write (or improve) AGENTS.md
/agents        the subagents
/mcp           the MCP servers, their state and tools
/permissions   the permission rules, approvals and protected paths
/config        the configuration files read and the settings in force
/memory        where memory (AGENTS.md) is read from;  /skills  the same for skills
/exit          leave (or ctrl+d, or ctrl+c twice on an empty line)
!command       run a shell command (as the execute tool would); its output goes into the conversation
#note          add a note to memory: project or user AGENTS.md
@path          attach a workspace file to the message (tab completes it, and /commands)
esc, ctrl+c while the agent works: stop the step; enter then sends the message
to the task as it works, tab queues it for when the task ends; up, down: earlier messages
\ then enter, alt+enter: a new line;  ctrl+g: edit the message in $EDITOR
ctrl+o: tool results in full, or folded again
shift+tab  cycle the permission mode: ask, accept edits, plan (read-only
           until you approve a plan), auto (a classifier decides what would ask)`

// overlay takes the keys, and the input's place, while it is open.
type overlay interface {
	// key handles k; done closes the overlay, and cmd runs after.
	key(m *tuiModel, k tea.KeyPressMsg) (cmd tea.Cmd, done bool)
	view(width int) string
}

func (m *tuiModel) onOverlayKey(k tea.KeyPressMsg) tea.Cmd {
	cmd, done := m.overlay.key(m, k)
	if done {
		m.overlay = nil
		return tea.Batch(cmd, m.sendQueued()) // what was queued behind it
	}
	return cmd
}

// memoryChooser asks where a # note goes: the project's memory or the
// user's.
type memoryChooser struct {
	note, project, user string // the note, and the two AGENTS.md ("" user: none)
}

func newMemoryChooser(note, dir, userDir string) *memoryChooser {
	c := &memoryChooser{note: note, project: filepath.Join(dir, "AGENTS.md")}
	if userDir != "" {
		c.user = filepath.Join(userDir, "AGENTS.md")
	}
	return c
}

func (c *memoryChooser) key(m *tuiModel, k tea.KeyPressMsg) (tea.Cmd, bool) {
	path := ""
	switch k.String() {
	case "p", "1", "enter":
		path = c.project
	case "u", "2":
		path = c.user
	case "esc", "ctrl+c":
		return m.print(dim.Render("# "+c.note) + "\n" + yellow.Render("not saved")), true
	}
	if path == "" {
		return nil, false
	}
	echo := dim.Render("# " + c.note)
	if err := appendNote(path, c.note); err != nil {
		return m.print(echo + "\n" + red.Render("✗ "+err.Error())), true
	}
	return m.print(echo + "\n" + green.Render("✓ added to ") + path), true
}

func (c *memoryChooser) view(width int) string {
	var b strings.Builder
	b.WriteString(bold.Render("Add to memory: ") + display.Clip(c.note, max(width-16, 20)) + "\n")
	b.WriteString(fit("  [p] project memory  "+dim.Render(c.project), width) + "\n")
	if c.user != "" {
		b.WriteString(fit("  [u] user memory     "+dim.Render(c.user), width) + "\n")
	}
	b.WriteString(dim.Render("  [esc] cancel") + "\n")
	return b.String()
}

// appendNote appends note to the Markdown file at path as a bullet,
// creating the file (and its folder) when there is none. The file comes
// with the repository, so it must be a regular file, not a symbolic link
// (an AGENTS.md linked to ~/.bashrc would take the note there): it is
// opened without following links, and only its last byte is read.
func appendNote(path, note string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return fmt.Errorf("%s is a symbolic link: the note is not written through it", path)
		}
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file: the note is not written", path)
	}
	var add strings.Builder
	if size := st.Size(); size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, size-1); err != nil {
			return err
		}
		if last[0] != '\n' {
			add.WriteString("\n")
		}
	}
	add.WriteString("- " + strings.Join(strings.Fields(note), " ") + "\n")
	if _, err := f.WriteString(add.String()); err != nil {
		return err
	}
	return f.Close()
}

// threadPicker is the picker of Pick inside the session (/resume).
type threadPicker struct{ p *picker }

func newThreadPicker(threads []Thread) *threadPicker {
	p := &picker{}
	for _, t := range threads {
		p.rows = append(p.rows, pickRow{id: t.ID, title: t.Title, status: t.Status, updated: t.Updated})
	}
	return &threadPicker{p}
}

func (t *threadPicker) key(m *tuiModel, k tea.KeyPressMsg) (tea.Cmd, bool) {
	_, cmd := t.p.Update(k)
	if cmd == nil { // the picker quits when it is done
		return nil, false
	}
	if t.p.picked == "" {
		return nil, true
	}
	id := t.p.picked
	return m.resume(id, func(s string) tea.Cmd { return m.print(dim.Render("> /resume "+id) + "\n" + s) }), true
}

func (t *threadPicker) view(int) string { return t.p.view() }
