package tui

import (
	"context"
	"encoding/json"
	"iter"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/deepagents-go/deepagents/netproxy"
)

// fakeBackground is a Background whose tasks' requests the test makes.
type fakeBackground struct {
	mu      sync.Mutex
	list    []deepagents.AsyncApproval // what Approvals finds
	answers []answered
	watch   func(deepagents.AsyncApproval)
	stopped bool
}

type answered struct {
	thread, task string
	decisions    []deepagents.Decision
}

func (f *fakeBackground) Watch(fn func(deepagents.AsyncApproval)) func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watch = fn
	return func() {
		f.mu.Lock()
		f.stopped = true
		f.mu.Unlock()
	}
}

func (f *fakeBackground) Approvals(_ context.Context, thread string) ([]deepagents.AsyncApproval, error) {
	var out []deepagents.AsyncApproval
	for _, a := range f.list {
		if a.ThreadID == thread {
			out = append(out, a)
		}
	}
	return out, nil
}

func (f *fakeBackground) Answer(_ context.Context, thread, task string, ds []deepagents.Decision) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, answered{thread, task, ds})
	return nil
}

func (f *fakeBackground) got() []answered {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.answers)
}

// parked is a background task's request for approval, of thread main.
func parked(task, tool string) deepagents.AsyncApproval {
	return deepagents.AsyncApproval{ThreadID: "main", TaskID: task, Subagent: "writer", Task: "write the notes",
		Requests: []deepagents.ActionRequest{{ToolCallID: "c-" + task, Tool: tool, Args: json.RawMessage(`{"file_path":"/notes.md","content":"hi"}`)}},
		Status:   deepagents.AsyncAwaitingApproval}
}

// runCmd runs cmd and what it batches, each on a goroutine of its own
// (a tick waits), and sends their messages to out.
func runCmd(cmd tea.Cmd, out chan<- tea.Msg) {
	if cmd == nil {
		return
	}
	go func() {
		switch msg := cmd().(type) {
		case nil:
		case tea.BatchMsg:
			for _, c := range msg {
				runCmd(c, out)
			}
		default:
			out <- msg
		}
	}()
}

// waitMsg runs cmd until it gives a message of type T, and returns it.
func waitMsg[T tea.Msg](t *testing.T, cmd tea.Cmd) T {
	t.Helper()
	out := make(chan tea.Msg, 100)
	runCmd(cmd, out)
	timeout := time.After(10 * time.Second) // a bound on a hang, not a timing
	for {
		select {
		case msg := <-out:
			if m, ok := msg.(T); ok {
				return m
			}
		case <-timeout:
			var zero T
			t.Fatalf("no %T came", zero)
			return zero
		}
	}
}

// bgModel is a session on fake background subagents, its prints held
// in its queue, a run working (running: its cancel counted).
func bgModel(t *testing.T, running bool) (*tuiModel, *fakeBackground, *int) {
	t.Helper()
	fake := &fakeBackground{}
	m := newModel(context.Background(), Config{Background: fake})
	m.flushing = true
	m.thread = "main"
	cancels := 0
	if running {
		m.running, m.cancel = true, func() { cancels++ }
	}
	return m, fake, &cancels
}

// seen lets the background request shown take its keys.
func seen(m *tuiModel) { m.bgAsk.asked = time.Now().Add(-approvalGrace) }

func press(m *tuiModel, keys ...string) tea.Cmd {
	var cmds []tea.Cmd
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		default:
			msg = tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
		}
		_, cmd := m.Update(msg)
		cmds = append(cmds, cmd)
	}
	return tea.Batch(cmds...)
}

func printed(m *tuiModel) string { return ansi.Strip(strings.Join(m.queue, "\n")) }

// A background task's request shows while the main agent works, naming
// the task, its subagent and the call; y approves it, n rejects it with
// the reason typed: Answer has the decision, and the main run goes on
// untouched.
func TestBackgroundApprovalAnsweredWhileTheRunWorks(t *testing.T) {
	for _, c := range []struct {
		name string
		keys []string
		want deepagents.Decision
		line string
	}{
		{"approve", []string{"y"}, deepagents.Decision{Type: deepagents.DecisionApprove}, "✓ approved write_file"},
		{"reject", []string{"n", "u", "s", "e", " ", "/", "t", "m", "p", "enter"}, deepagents.Decision{Type: deepagents.DecisionReject, Message: "use /tmp"}, "✗ rejected write_file: use /tmp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, fake, cancels := bgModel(t, true)
			m.Update(bgApprovalMsg{parked("task-1", "write_file")})
			seen(m)
			view := ansi.Strip(m.view())
			for _, want := range []string{"background task task-1 (writer)", "task: write the notes", "write_file", "[y] yes", "working…"} {
				if !strings.Contains(view, want) {
					t.Errorf("the view lacks %q:\n%s", want, view)
				}
			}
			if strings.Contains(view, "[esc] later") {
				t.Errorf("esc, which stops the run's step, is offered as later:\n%s", view)
			}
			cmd := press(m, c.keys...)
			if m.input.Value() != "" {
				t.Errorf("the keys reached the input: %q", m.input.Value())
			}
			msg := waitMsg[bgAnsweredMsg](t, cmd)
			got := fake.got()
			if len(got) != 1 || got[0].thread != "main" || got[0].task != "task-1" || !reflect.DeepEqual(got[0].decisions, []deepagents.Decision{c.want}) {
				t.Fatalf("answers %+v, want task-1 of main with %+v", got, c.want)
			}
			if !m.running || *cancels != 0 {
				t.Errorf("the main run was touched: running %v, cancelled %d times", m.running, *cancels)
			}
			if len(m.bg) != 0 || strings.Contains(ansi.Strip(m.view()), "background task") {
				t.Errorf("the answered request is still queued: %v", m.bg)
			}
			// A read of the parked requests begun before the answer
			// does not bring it back.
			m.Update(bgFoundMsg{list: []deepagents.AsyncApproval{parked("task-1", "write_file")}})
			if len(m.bg) != 0 {
				t.Errorf("a late read queued the answered request again: %v", taskIDs(m.bg))
			}
			m.Update(msg)
			if p := printed(m); !strings.Contains(p, c.line) || !strings.Contains(p, "background task task-1 (writer) resumes") {
				t.Errorf("printed:\n%s\nwant %q and the task resuming", p, c.line)
			}
		})
	}
}

// The run's own approval comes first: it shows, and takes the keys, the
// background requests counted under it; once it is answered the first of
// them shows.
func TestRunApprovalBeforeBackground(t *testing.T) {
	m, fake, _ := bgModel(t, false)
	m.send = func(tea.Msg) {}
	m.cfg.Decide = func(context.Context, string, []deepagents.Decision) iter.Seq2[deepagents.Event, error] {
		return func(func(deepagents.Event, error) bool) {}
	}
	m.Update(bgApprovalMsg{parked("task-1", "write_file")})
	m.Update(bgApprovalMsg{parked("task-2", "edit_file")})
	m.approval.set([]deepagents.ActionRequest{{ToolCallID: "main-1", Tool: "execute", Args: json.RawMessage(`{"command":"make"}`)}})
	m.autoApprove()
	m.approval.asked = time.Now().Add(-approvalGrace)
	seen(m)
	view := ansi.Strip(m.view())
	if !strings.Contains(view, "$ make") || !strings.Contains(view, "2 background approval(s) waiting") || strings.Contains(view, "background task task-1") {
		t.Errorf("the view does not put the run's approval first, with the count:\n%s", view)
	}
	press(m, "y")
	if m.approval.waiting() || !m.running || len(m.bg) != 2 || len(fake.got()) != 0 {
		t.Fatalf("y did not answer the run's approval: it waits %v, run resumed %v, queued %v, answers %v", m.approval.waiting(), m.running, taskIDs(m.bg), fake.got())
	}
	seen(m)
	view = ansi.Strip(m.view())
	if !strings.Contains(view, "background task task-1 (writer) (2 waiting)") {
		t.Errorf("the first background request does not show once the run's is answered:\n%s", view)
	}
}

// The requests parked before the session started (found at its start,
// for its thread) are queued; what Watch says after drops them: answered
// elsewhere, or denied for want of an answer. A request found and heard
// of is queued once.
func TestBackgroundQueueFollowsTheTasks(t *testing.T) {
	m, fake, _ := bgModel(t, false)
	fake.list = []deepagents.AsyncApproval{parked("task-1", "write_file"), parked("task-2", "execute")}
	m.cfg.Thread = "main"
	found := waitMsg[bgFoundMsg](t, m.Init())
	m.Update(found)
	m.Update(bgApprovalMsg{parked("task-1", "write_file")}) // heard of too
	if ids := taskIDs(m.bg); !slices.Equal(ids, []string{"task-1", "task-2"}) {
		t.Fatalf("queued %v, want task-1 and task-2", ids)
	}
	done := parked("task-1", "write_file")
	done.Status = deepagents.AsyncRunning
	m.Update(bgApprovalMsg{done})
	denied := parked("task-2", "execute")
	denied.Status = deepagents.AsyncDenied
	if ids := taskIDs(m.bg); !slices.Equal(ids, []string{"task-2"}) || !strings.Contains(ansi.Strip(m.view()), "background task task-2") {
		t.Errorf("after task-1 was answered elsewhere: queued %v, view:\n%s", ids, ansi.Strip(m.view()))
	}
	m.Update(bgApprovalMsg{denied})
	if len(m.bg) != 0 || !strings.Contains(printed(m), "background task task-2 (writer) was denied") {
		t.Errorf("after task-2 was denied: queued %v, printed:\n%s", taskIDs(m.bg), printed(m))
	}
	if len(fake.got()) != 0 {
		t.Errorf("answers %v, want none", fake.got())
	}
}

func taskIDs(list []deepagents.AsyncApproval) []string {
	var ids []string
	for _, a := range list {
		ids = append(ids, a.TaskID)
	}
	return ids
}

// Keys that must not answer a background request: enter on an empty
// input, esc while the run works (it stops the step), ctrl+c; esc while
// nothing runs leaves it waiting, parked, with the command that answers
// it later.
func TestBackgroundApprovalKeysThatDoNotAnswer(t *testing.T) {
	m, fake, cancels := bgModel(t, true)
	m.Update(bgApprovalMsg{parked("task-1", "write_file")})
	seen(m)
	press(m, "enter")
	press(m, "esc")
	if *cancels != 1 || len(m.bg) != 1 || len(fake.got()) != 0 {
		t.Fatalf("enter, esc while the run works: cancelled %d, queued %v, answers %v; want the step stopped, the request kept", *cancels, taskIDs(m.bg), fake.got())
	}
	m.running = false
	_, cmd := m.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if len(m.bg) != 1 || cmd == nil {
		t.Fatalf("ctrl+c took the background request (queued %v)", taskIDs(m.bg))
	}
	press(m, "esc")
	if len(m.bg) != 0 || len(fake.got()) != 0 || !strings.Contains(printed(m), "deepagents resume main --task task-1 decides later") {
		t.Errorf("esc while idle: queued %v, answers %v, printed:\n%s", taskIDs(m.bg), fake.got(), printed(m))
	}
}

// watchBackground passes what Watch hears in order, and stops watching.
func TestWatchBackgroundKeepsOrder(t *testing.T) {
	fake := &fakeBackground{}
	out := make(chan tea.Msg, 10)
	stop := watchBackground(fake, func(msg tea.Msg) { out <- msg })
	statuses := []string{deepagents.AsyncAwaitingApproval, deepagents.AsyncRunning, deepagents.AsyncAwaitingApproval, deepagents.AsyncDenied}
	for _, s := range statuses {
		a := parked("task-1", "write_file")
		a.Status = s
		fake.watch(a)
	}
	for i, want := range statuses {
		if got := (<-out).(bgApprovalMsg).a.Status; got != want {
			t.Errorf("message %d: %s, want %s", i, got, want)
		}
	}
	stop()
	if !fake.stopped {
		t.Error("the watch was not stopped")
	}
}

// A tool approved for the session with a approves it in the queue too: a
// later request for it is answered without asking, and says so.
func TestBackgroundApprovalToolApprovedForTheSession(t *testing.T) {
	m, fake, _ := bgModel(t, false)
	m.Update(bgApprovalMsg{parked("task-1", "write_file")})
	m.Update(bgApprovalMsg{parked("task-2", "write_file")})
	seen(m)
	cmd := press(m, "a")
	out := make(chan tea.Msg, 100)
	runCmd(cmd, out)
	timeout := time.After(10 * time.Second) // a bound on a hang, not a timing
	for n := 0; n < 2; {
		select {
		case msg := <-out:
			if _, ok := msg.(bgAnsweredMsg); ok {
				n++
			}
		case <-timeout:
			t.Fatalf("%d of 2 answers came", n)
		}
	}
	got := fake.got()
	// The answers are commands of their own, run concurrently: in any
	// order.
	slices.SortFunc(got, func(a, b answered) int { return strings.Compare(a.task, b.task) })
	if len(got) != 2 || got[0].task != "task-1" || got[1].task != "task-2" || !m.allowed["write_file"] || len(m.bg) != 0 {
		t.Fatalf("answers %+v, allowed %v, queued %v; want both tasks approved", got, m.allowed, taskIDs(m.bg))
	}
	if p := printed(m); !strings.Contains(p, "background task task-2 (writer)] ✓ approved write_file (approved for this session)") {
		t.Errorf("printed:\n%s", p)
	}
}

// An approval that comes into view from behind another takes its keys
// only after the grace, as one newly asked: a key pressed twice (y y,
// enter enter) answers what the person saw, never what appeared under
// the key.
func TestApprovalComingIntoViewWaitsItsGrace(t *testing.T) {
	long := time.Now().Add(-time.Hour) // asked long ago, hidden since
	decide := func(context.Context, string, []deepagents.Decision) iter.Seq2[deepagents.Event, error] {
		return func(func(deepagents.Event, error) bool) {}
	}
	runApproval := func(m *tuiModel) {
		m.approval.set([]deepagents.ActionRequest{{ToolCallID: "main-1", Tool: "execute", Args: json.RawMessage(`{"command":"make"}`)}})
		m.autoApprove()
		m.approval.asked = long
	}
	t.Run("background after the run's", func(t *testing.T) {
		m, fake, _ := bgModel(t, false)
		m.send, m.cfg.Decide = func(tea.Msg) {}, decide
		m.Update(bgApprovalMsg{parked("task-1", "write_file")})
		runApproval(m)
		m.bgAsk.asked = long
		press(m, "y", "y")
		if m.approval.waiting() || !m.running {
			t.Fatal("the first y did not answer the run's approval")
		}
		if len(m.bg) != 1 || len(fake.got()) != 0 {
			t.Errorf("the second y answered the background request that appeared under it: queued %v, answers %v", taskIDs(m.bg), fake.got())
		}
		if v := ansi.Strip(m.view()); strings.Contains(v, "[y] yes") {
			t.Errorf("the background request's keys show at once:\n%s", v)
		}
	})
	t.Run("the run's after a background reason", func(t *testing.T) {
		m, fake, _ := bgModel(t, false)
		m.send, m.cfg.Decide = func(tea.Msg) {}, decide
		m.Update(bgApprovalMsg{parked("task-1", "write_file")})
		seen(m)
		press(m, "n", "x")
		runApproval(m) // comes while the reason is typed
		cmd := press(m, "enter", "enter")
		waitMsg[bgAnsweredMsg](t, cmd)
		if got := fake.got(); len(got) != 1 || got[0].decisions[0].Type != deepagents.DecisionReject {
			t.Fatalf("answers %+v, want task-1 rejected", got)
		}
		if !m.approval.asking() || m.running {
			t.Errorf("the second enter approved the run's request that appeared under it (decisions %v)", m.approval.decisions)
		}
	})
	t.Run("background after a host question", func(t *testing.T) {
		m, fake, _ := bgModel(t, true)
		m.Update(bgApprovalMsg{parked("task-1", "write_file")})
		m.bgAsk.asked = long
		var answers []netproxy.Answer
		m.Update(hostQuestionMsg{&askedHost{HostQuestion: HostQuestion{Host: "example.com", Port: 443, Command: "curl",
			Answer: func(a netproxy.Answer) { answers = append(answers, a) }}, n: 1}})
		m.hostAsked = long
		press(m, "y", "y")
		if len(answers) != 1 || answers[0] != netproxy.AllowOnce {
			t.Fatalf("the host question's answers %v, want allowed once", answers)
		}
		if len(m.bg) != 1 || len(fake.got()) != 0 {
			t.Errorf("the second y answered the background request: queued %v, answers %v", taskIDs(m.bg), fake.got())
		}
	})
	t.Run("background after an overlay", func(t *testing.T) {
		m, fake, _ := bgModel(t, false)
		m.Update(bgApprovalMsg{parked("task-1", "write_file")})
		m.bgAsk.asked = long
		m.overlay = newMemoryChooser("note", t.TempDir(), t.TempDir())
		press(m, "esc") // closes the chooser
		if m.overlay != nil {
			t.Fatal("esc did not close the overlay")
		}
		press(m, "y")
		if len(m.bg) != 1 || len(fake.got()) != 0 {
			t.Errorf("y answered the background request as the overlay closed: queued %v, answers %v", taskIDs(m.bg), fake.got())
		}
	})
}

// A request of a task of another thread than the session's (one it
// worked on before /new or /resume) says whose it is; one of the
// session's thread does not.
func TestBackgroundApprovalOfAnotherThreadSaysSo(t *testing.T) {
	for _, c := range []struct {
		name, thread string
		want         bool
	}{
		{"this thread", "main", false},
		{"another thread", "earlier", true},
		{"a new thread", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, _, _ := bgModel(t, false)
			m.thread = c.thread                 // the session's, now
			a := parked("task-1", "write_file") // of thread main
			m.Update(bgApprovalMsg{a})
			seen(m)
			view := ansi.Strip(m.view())
			if got := strings.Contains(view, "of thread main, not this one"); got != c.want {
				t.Errorf("the view names the task's thread: %v, want %v:\n%s", got, c.want, view)
			}
		})
	}
}

// A task answered in the session that stops to ask again, anew, is
// queued when a read of the thread's parked requests finds it (after a
// /resume, say): only the request answered is kept out.
func TestBackgroundTaskAskingAgainIsQueued(t *testing.T) {
	m, _, _ := bgModel(t, false)
	m.Update(bgApprovalMsg{parked("task-1", "write_file")})
	seen(m)
	press(m, "y")
	if len(m.bg) != 0 {
		t.Fatalf("y did not answer: queued %v", taskIDs(m.bg))
	}
	again := parked("task-1", "write_file")
	again.Requests[0].ToolCallID = "c-second"
	m.Update(bgFoundMsg{list: []deepagents.AsyncApproval{parked("task-1", "write_file"), again}})
	if len(m.bg) != 1 || m.bg[0].Requests[0].ToolCallID != "c-second" {
		t.Errorf("queued %+v, want task-1's second request alone", m.bg)
	}
}
