package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/permission"
	"github.com/deepagents-go/deepagents/workspace"
)

func mustWrite(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The approval prompt offers only the decisions a request allows, and a
// key of another decision does nothing.
func TestApprovalKeysFollowAllowed(t *testing.T) {
	for _, c := range []struct {
		allowed []deepagents.DecisionType
		want    string
		inert   []string
	}{
		{nil, "approve? [y] yes  [a] yes, and this tool for the session  [e] edit  [n] no, with a reason  [esc] later\n", nil},
		{[]deepagents.DecisionType{deepagents.DecisionApprove, deepagents.DecisionReject}, "approve? [y] yes  [a] yes, and this tool for the session  [n] no, with a reason  [esc] later\n", []string{"e"}},
		{[]deepagents.DecisionType{deepagents.DecisionReject}, "approve? [n] no, with a reason  [esc] later\n", []string{"y", "a", "e"}},
	} {
		req := deepagents.ActionRequest{Tool: "execute", Args: json.RawMessage(`{"command":"ls"}`), Allowed: c.allowed}
		if got := ansi.Strip(approvalKeys(req, 0)); got != c.want {
			t.Errorf("%v: %q, want %q", c.allowed, got, c.want)
		}
		for _, k := range c.inert {
			m := &tuiModel{allowed: map[string]bool{}}
			m.approval.set([]deepagents.ActionRequest{req})
			m.onApprovalKey(tea.KeyPressMsg{Code: []rune(k)[0], Text: k})
			if len(m.approval.decisions) != 0 || m.approval.typing() || m.allowed["execute"] {
				t.Errorf("%v: key %q took a decision", c.allowed, k)
			}
		}
	}
}

func TestReadAtMost(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("ab€cd"), 0o600) // € is 3 bytes: a b [e2 82 ac] c d
	b, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]string{2: "ab", 3: "ab", 4: "ab", 5: "ab€", 100: "ab€cd"} {
		if got, err := readAtMost(context.Background(), b, "/f", n); err != nil || string(got) != want {
			t.Errorf("readAtMost(%d) = %q, %v; want %q", n, got, err, want)
		}
	}
}

// /memory and /skills name the user's own folder as the session reads it
// (DEEPAGENTS_HOME, say), and leave it out when there is none.
func TestMemoryAndSkillsPlaces(t *testing.T) {
	for _, c := range []struct {
		userDir, cmd, want string
	}{
		{"/custom/home", "/memory", "memory: /custom/home/AGENTS.md and /ws/AGENTS.md"},
		{"/custom/home", "/skills", "skills: /custom/home/skills, /ws/.deepagents/skills (a later folder wins a name)"},
		{"", "/memory", "memory: /ws/AGENTS.md"},
		{"", "/skills", "skills: none are read in this session"},
	} {
		var dirs []string
		if c.userDir != "" {
			dirs = []string{"/custom/home/skills", "/ws/.deepagents/skills"}
		}
		// Holding the printer keeps what the command says in the queue.
		m := &tuiModel{cfg: Config{UserDir: c.userDir, Dir: "/ws", SkillDirs: dirs}, allowed: map[string]bool{}, flushing: true}
		m.command(c.cmd)
		if got := strings.Join(m.queue, "\n"); !strings.HasSuffix(got, "\n"+c.want) {
			t.Errorf("%s with %q: %q, want it to end with %q", c.cmd, c.userDir, got, c.want)
		}
	}
}

// The live view wraps only what fits the window: the last lines of a long
// answer, and the end of one that never breaks a line.
func TestLiveTail(t *testing.T) {
	var long strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	long.WriteString("the end")
	oneLine := strings.Repeat("word ", 100000) + "last"
	for _, c := range []struct {
		name, text    string
		width, height int
		lastLine      string
	}{
		{"many lines", long.String(), 40, 30, "the end"},
		{"one huge line", oneLine, 40, 30, "word word word word word word word last"},
		{"short", "hello\nworld", 40, 30, "world"},
	} {
		got := liveTail(c.text, c.width, c.height)
		lines := strings.Split(got, "\n")
		if n := len(lines); n > tailRows(c.height) {
			t.Errorf("%s: %d lines for a window of %d", c.name, n, c.height)
		}
		if last := strings.TrimRight(lines[len(lines)-1], " "); last != c.lastLine {
			t.Errorf("%s: last line %q, want %q", c.name, last, c.lastLine)
		}
	}
	if got := liveTail("a\nb", 0, 0); got != "a\nb" {
		t.Errorf("without a size: %q", got)
	}
}

// TestAttachFilesFollowReadPolicy: the terminal's @file reads through the
// agent's backend: no symbolic link out of the workspace, no path the read
// rules deny.
func TestAttachFilesFollowReadPolicy(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(outside, "secret.md"), "sk-outside-secret")
	mustWrite(t, filepath.Join(ws, ".env"), "sk-env-secret")
	mustWrite(t, filepath.Join(ws, "notes.md"), "plain notes")
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(ws, "link.md")); err != nil {
		t.Fatal(err)
	}
	deny, err := permission.ParseRule(permission.Deny, "read_file(**/.env)")
	if err != nil {
		t.Fatal(err)
	}
	rules := permission.New(deny)
	w, err := workspace.Open(workspace.Config{Dir: ws, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	prompt, files := attachFiles(context.Background(), w.Backend, "see @link.md @.env @notes.md @../outside/secret.md")
	if strings.Contains(prompt, "sk-") || len(files) != 1 || files[0] != "notes.md" || !strings.Contains(prompt, "plain notes") {
		t.Errorf("attached %v:\n%s", files, prompt)
	}
}

// TestApprovalNamesTheSubagent: the session's approval says which subagent
// asks, and names nobody for the main agent.
func TestApprovalNamesTheSubagent(t *testing.T) {
	req := deepagents.ActionRequest{Tool: "write_file", Args: json.RawMessage(`{"file_path":"/a","content":"x"}`), Namespace: []string{"planner:t1"}}
	if got := renderApproval(req, "", false, 100); !strings.Contains(got, "asked by subagent planner") {
		t.Errorf("the session's approval: %s", got)
	}
	if got := renderApproval(deepagents.ActionRequest{Tool: "write_file", Args: req.Args}, "", false, 100); strings.Contains(got, "asked by") {
		t.Errorf("the main agent's approval names an asker: %s", got)
	}
}

// TestThreadsCommand: /threads shows the threads Recent gives, in its
// order, with their titles.
func TestThreadsCommand(t *testing.T) {
	var threads []Thread
	for i := 11; i >= 2; i-- {
		threads = append(threads, Thread{ID: fmt.Sprintf("user%02d", i), Title: fmt.Sprintf("task %d", i), Updated: time.Now()})
	}
	recent := func(context.Context) ([]Thread, error) { return threads, nil }
	// Holding the printer keeps what the command says in the queue.
	m := &tuiModel{ctx: context.Background(), cfg: Config{Recent: recent}, allowed: map[string]bool{}, flushing: true}
	m.command("/threads")
	var ids []string
	for _, l := range strings.Split(strings.Join(m.queue, "\n"), "\n") {
		if id, _, ok := strings.Cut(l, "  "); ok && strings.HasPrefix(id, "user") {
			ids = append(ids, id)
			if !strings.HasSuffix(l, "task "+strings.TrimPrefix(strings.TrimPrefix(id, "user"), "0")) {
				t.Errorf("line without its title: %q", l)
			}
		}
	}
	if len(ids) != 10 || ids[0] != "user11" || ids[9] != "user02" {
		t.Errorf("/threads listed %v, want user11 down to user02", ids)
	}
}

// The approval's keys line wraps between keys: every key shows, no line
// wider than the window.
func TestApprovalKeysWrap(t *testing.T) {
	req := deepagents.ActionRequest{Tool: "execute", Args: json.RawMessage(`{"command":"ls"}`)}
	for _, width := range []int{100, 80, 60, 40} {
		got := approvalKeys(req, width)
		for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
			if w := ansi.StringWidth(l); w > width {
				t.Errorf("width %d: line %q is %d wide", width, l, w)
			}
		}
		flat := strings.Join(strings.Fields(ansi.Strip(got)), " ")
		if want := strings.Join(strings.Fields(ansi.Strip(approvalKeys(req, 0))), " "); flat != want {
			t.Errorf("width %d: %q, want the keys of %q", width, flat, want)
		}
	}
}

// rewrapped counts the rows a narrower window adds to a view.
func TestRewrapped(t *testing.T) {
	view := strings.Repeat("x", 100) + "\n" + strings.Repeat("y", 30) + "\n> input"
	for _, c := range []struct{ width, height, to, want int }{
		{120, 40, 60, 1},  // 100 → 2 rows
		{120, 40, 20, 5},  // 100 → 5, 30 → 2
		{80, 40, 40, 1},   // drawn cut at 80 → 2 rows
		{120, 2, 20, 1},   // only the last 2 lines were drawn
		{120, 40, 120, 0}, // as wide
	} {
		if got := rewrapped(view, c.width, c.height, c.to); got != c.want {
			t.Errorf("%+v: %d", c, got)
		}
	}
}

// Keys typed as an approval appears are typing; enter queues the message.
func TestApprovalIgnoresTypeAhead(t *testing.T) {
	req := deepagents.ActionRequest{Tool: "execute", Args: json.RawMessage(`{"command":"ls"}`)}
	m := newModel(context.Background(), Config{})
	m.approval.set([]deepagents.ActionRequest{req})
	m.autoApprove() // shows it
	for _, k := range []tea.KeyPressMsg{{Code: 'a', Text: "a"}, {Code: tea.KeyEnter}, {Code: 'y', Text: "y"}} {
		m.Update(k)
	}
	if len(m.approval.decisions) != 0 || m.allowed["execute"] || len(m.queued) != 1 || m.queued[0] != "a" || m.input.Value() != "y" {
		t.Errorf("decisions %v, allowed %v, queued %q, input %q", m.approval.decisions, m.allowed, m.queued, m.input.Value())
	}
	// Once shown a moment, y on an empty input approves.
	m.input.SetValue("")
	m.approval.asked = time.Now().Add(-approvalGrace)
	m.send = func(tea.Msg) {}
	m.cfg.Decide = func(context.Context, string, []deepagents.Decision) iter.Seq2[deepagents.Event, error] {
		return func(func(deepagents.Event, error) bool) {}
	}
	m.Update(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if !m.running {
		t.Error("y did not approve")
	}
}

// An empty input's line ends with its placeholder, not the padding to
// its width; an input with a value keeps its cursor.
func TestInputView(t *testing.T) {
	ti := textinput.New()
	ti.Prompt, ti.Placeholder = "> ", "a task"
	ti.SetWidth(40)
	ti.Focus()
	if got := ansi.Strip(inputView(ti)); got != "> a task" {
		t.Errorf("empty: %q", got)
	}
	ti.SetValue("hello")
	if got := ansi.Strip(inputView(ti)); !strings.HasPrefix(got, "> hello ") {
		t.Errorf("with a value: %q, want the cursor after it", got)
	}
}

// A step stopped puts what was queued back in the input, before what was
// being typed, a message a line, instead of sending it.
func TestStopPutsQueuedBack(t *testing.T) {
	for _, key := range []tea.KeyPressMsg{{Code: tea.KeyEscape}, {Code: 'c', Mod: tea.ModCtrl}} {
		m := newModel(context.Background(), Config{})
		cancelled := false
		m.running, m.cancel = true, func() { cancelled = true }
		m.queued = []string{"first", "second"}
		m.input.SetValue("third")
		m.Update(key)
		if !cancelled || !m.stopped || len(m.queued) != 0 || m.input.Value() != "first\nsecond\nthird" {
			t.Errorf("%v: cancelled %v, stopped %v, queued %q, input %q", key, cancelled, m.stopped, m.queued, m.input.Value())
		}
	}
}

// Config.Idle is called once the session has waited IdleAfter for the
// user after a task, once per wait; typing puts it off, and a wait that
// ended (a new task) calls nothing.
func TestIdleAfterATask(t *testing.T) {
	var calls []string
	idle := func(_ context.Context, thread string) []string {
		calls = append(calls, thread)
		return []string{"note: idle"}
	}
	const after = 30 * time.Millisecond
	m := newModel(context.Background(), Config{Idle: idle, IdleAfter: after})
	m.thread = "t1"
	if m.awaitUser() == nil {
		t.Fatal("no wait started")
	}
	// Too early: it looks again later.
	if cmd := m.onIdle(idleMsg{m.wait}); cmd == nil || len(calls) != 0 {
		t.Fatalf("called early: %v", calls)
	}
	time.Sleep(after)
	cmd := m.onIdle(idleMsg{m.wait})
	if cmd == nil {
		t.Fatal("not called after the wait")
	}
	if msg, ok := cmd().(linesMsg); !ok || len(msg.lines) != 1 || len(calls) != 1 || calls[0] != "t1" {
		t.Fatalf("Idle: %v, %v", calls, msg)
	}
	if m.onIdle(idleMsg{m.wait}) != nil {
		t.Error("called twice in one wait")
	}
	// A key pressed puts the next wait off.
	m.awaitUser()
	time.Sleep(after)
	m.Update(tea.KeyPressMsg{Code: 'x', Text: "x"})
	if cmd := m.onIdle(idleMsg{m.wait}); cmd == nil {
		t.Error("no second look after typing")
	} else if _, ok := cmd().(idleMsg); !ok {
		t.Error("called while the user types")
	}
	// A task started ends the wait; an old wait's tick calls nothing.
	old := m.wait
	m.awaitUser()
	m.start(func(context.Context) iter.Seq2[deepagents.Event, error] {
		return func(func(deepagents.Event, error) bool) {}
	}, false)
	time.Sleep(after)
	if m.onIdle(idleMsg{m.wait}) != nil || m.onIdle(idleMsg{old}) != nil {
		t.Error("called with a task going on, or for an old wait")
	}
	if len(calls) != 1 {
		t.Errorf("Idle called %d times, want 1", len(calls))
	}
}

// /clear tells Config.Clear which thread it leaves, and prints what its
// hooks say once they ran.
func TestClearTellsTheCommand(t *testing.T) {
	var left string
	clear := func(_ context.Context, thread string) func() []string {
		left = thread
		return func() []string { return []string{"note: SessionEnd hook"} }
	}
	m := &tuiModel{ctx: context.Background(), cfg: Config{Clear: clear}, thread: "t1", allowed: map[string]bool{}, flushing: true}
	cmd := m.command("/clear")
	if left != "t1" || m.thread != "" {
		t.Fatalf("Clear told %q; the session is on %q", left, m.thread)
	}
	// (The printer held, the command's own line prints nothing yet.)
	var msgs []tea.Cmd
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		msgs = msg
	default:
		msgs = []tea.Cmd{func() tea.Msg { return msg }}
	}
	found := false
	for _, c := range msgs {
		if c == nil {
			continue
		}
		if l, ok := c().(linesMsg); ok && len(l.lines) == 1 && l.lines[0] == "note: SessionEnd hook" {
			found = true
		}
	}
	if !found {
		t.Error("the hooks' lines are not printed")
	}
}
