package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/internal/golden"
)

// tmuxSession runs the real binary in a tmux pane.
type tmuxSession struct {
	t    *testing.T
	name string
}

// exitedMark is what the pane shows once the binary has exited.
const exitedMark = "[deepagents exited]"

// startTmux runs the binary in a pane of 160×40.
func startTmux(t *testing.T, w *world, args ...string) *tmuxSession {
	t.Helper()
	return startTmuxSized(t, w, 160, 40, args...)
}

// startTmuxSized runs the binary in a pane of cols×rows.
func startTmuxSized(t *testing.T, w *world, cols, rows int, args ...string) *tmuxSession {
	t.Helper()
	return startTmuxEnv(t, w, nil, cols, rows, args...)
}

// startTmuxEnv runs the binary in a pane of cols×rows, with more
// environment variables (env, NAME=value; TERM is xterm-256color unless
// env sets it).
func startTmuxEnv(t *testing.T, w *world, env []string, cols, rows int, args ...string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is missing in CI")
		}
		t.Skip("needs tmux (apt-get install tmux)")
	}
	name := fmt.Sprintf("deepagents-test-%d", time.Now().UnixNano())
	cmd := append([]string{"env"}, w.env()...)
	cmd = append(append(cmd, "TERM=xterm-256color"), env...) // env may name another TERM
	cmd = append(cmd, binary(t))
	cmd = append(cmd, args...)
	quoted := make([]string, len(cmd))
	for i, a := range cmd {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	for try := 1; ; try++ {
		out, err := exec.Command("tmux", "new-session", "-d", "-s", name, "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows),
			strings.Join(quoted, " ")+"; echo '"+exitedMark+"'; sleep 60").CombinedOutput()
		if err == nil {
			break
		}
		// The server the session before shut down may still be going.
		if try == 3 || !strings.Contains(string(out), "server exited unexpectedly") {
			t.Fatalf("tmux: %v %s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Cleanup(func() { exec.Command("tmux", "kill-session", "-t", name).Run() })
	return &tmuxSession{t: t, name: name}
}

// keys sends key names (Enter, C-c, Up) as tmux knows them.
func (s *tmuxSession) keys(keys ...string) {
	s.t.Helper()
	if out, err := exec.Command("tmux", append([]string{"send-keys", "-t", s.name}, keys...)...).CombinedOutput(); err != nil {
		s.t.Fatalf("send-keys: %v %s", err, out)
	}
}

// typeLine types text a key at a time, as a person does, and presses
// Enter. (Sent in one piece, a word that names a key, such as "delete",
// is read by the terminal library as that key.)
func (s *tmuxSession) typeLine(text string) {
	s.t.Helper()
	for _, r := range text {
		if out, err := exec.Command("tmux", "send-keys", "-t", s.name, "-l", string(r)).CombinedOutput(); err != nil {
			s.t.Fatalf("send-keys: %v %s", err, out)
		}
	}
	s.keys("Enter")
}

// resize makes the pane cols×rows.
func (s *tmuxSession) resize(cols, rows int) {
	s.t.Helper()
	if out, err := exec.Command("tmux", "resize-window", "-t", s.name, "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows)).CombinedOutput(); err != nil {
		s.t.Fatalf("resize-window: %v %s", err, out)
	}
}

func (s *tmuxSession) screen() string {
	out, err := exec.Command("tmux", "capture-pane", "-p", "-t", s.name).Output()
	if err != nil {
		s.t.Fatalf("capture-pane: %v", err)
	}
	return string(out)
}

// waitFor waits until the screen shows want, and returns the screen.
func (s *tmuxSession) waitFor(want string) string {
	s.t.Helper()
	return s.waitOn(want, s.screen)
}

// waitOn waits until what capture returns holds want, and returns it then.
func (s *tmuxSession) waitOn(want string, capture func() string) string {
	s.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		scr := capture()
		if strings.Contains(scr, want) {
			time.Sleep(100 * time.Millisecond) // let the frame finish
			return capture()
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never showed %q:\n%s", want, scr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var (
	hexID     = regexp.MustCompile(`[0-9a-f]{32}`)
	callID    = regexp.MustCompile(`call_[0-9a-f]+_[0-9]+`)
	clockTime = regexp.MustCompile(`\d{4}-\d{2}-\d{2} \d{2}:\d{2}`)
	tempPath  = regexp.MustCompile(`/tmp/[^ ;]*/`)
)

// normalize hides what changes from run to run, and trailing blank space.
func normalize(screen, dir string) string {
	screen = strings.ReplaceAll(screen, dir, "WORKSPACE")
	screen = tempPath.ReplaceAllString(screen, "TMP/")
	screen = hexID.ReplaceAllString(screen, "THREAD")
	screen = callID.ReplaceAllString(screen, "CALL")
	screen = clockTime.ReplaceAllString(screen, "TIME")
	var lines []string
	for _, l := range strings.Split(screen, "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n") + "\n"
}

// TestInteractiveSession drives `deepagents` in tmux through a scripted
// task: todos, the answer rendered as Markdown, an edit shown as a diff and approved, a command rejected
// with a reason, a call whose arguments the user edits, a subagent,
// /compact, a step stopped with Ctrl-C, and the session
// resumed in a new process with --continue. Screens are golden files
// (go test -update rewrites them).
func TestInteractiveSession(t *testing.T) {
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.dir, "notes.md"), []byte("line one\nline two\n"), 0o600)
	script := w.script(`{"turns":[
 {"content":"I'll plan first.","tool_calls":[{"name":"write_todos","args":{"todos":[{"content":"Edit the notes","status":"in_progress"},{"content":"Check with a subagent","status":"pending"}]}}]},
 {"tool_calls":[{"name":"edit_file","args":{"file_path":"/notes.md","old_string":"line two","new_string":"line 2, edited"}}]},
 {"tool_calls":[{"name":"execute","args":{"command":"rm -rf /tmp/important"}}]},
 {"tool_calls":[{"name":"write_file","args":{"file_path":"/draft.md","content":"first draft"}}],"expect":{"last_message_contains":["never delete that"]}},
 {"tool_calls":[{"name":"task","args":{"description":"Check the notes","subagent_type":"general-purpose"}}],"expect":{"last_message_contains":["/final.md"]}},
 {"agent":"general-purpose","tool_calls":[{"name":"read_file","args":{"file_path":"/notes.md"}}]},
 {"agent":"general-purpose","content":"The notes look fine."},
 {"content":"## Done\n\nThe notes are **edited** and checked:\n\n- ` + "`notes.md`" + ` has line 2\n- a subagent read it","tool_calls":[],"usage":{"input_tokens":1200,"output_tokens":30}},
 {"content":"Thinking hard...","delay_ms":60000}]}`)
	// 60 rows: the screens the goldens keep fit whole, with the status line.
	s := startTmuxSized(t, w, 160, 60, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db, "--shell", "--sandbox", "none")
	s.waitFor("> ")
	s.typeLine("Edit @notes.md please")
	// An approval's keys show once they answer it.
	golden.Check(t, "testdata/tui/1-edit-approval.golden", []byte(normalize(s.waitFor("[esc] later"), w.dir)))
	s.keys("y")
	s.waitFor("$ rm -rf")
	golden.Check(t, "testdata/tui/2-command.golden", []byte(normalize(s.waitFor("[esc] later"), w.dir)))
	s.keys("n")
	s.waitFor("reason>")
	s.typeLine("never delete that")
	// The next call is edited: a first try that is not JSON is refused.
	s.waitFor("[e] edit")
	s.keys("e")
	s.waitFor("args>")
	s.keys("C-u")
	s.typeLine("not json")
	s.waitFor("must be a JSON object")
	s.keys("C-u")
	s.typeLine(`{"file_path":"/final.md","content":"edited draft"}`)
	golden.Check(t, "testdata/tui/3-done.golden", []byte(normalize(s.waitFor("1,200 tokens in"), w.dir)))
	if data, _ := os.ReadFile(filepath.Join(w.dir, "notes.md")); string(data) != "line one\nline 2, edited\n" {
		t.Errorf("the approved edit: %q", data)
	}
	if data, err := os.ReadFile(filepath.Join(w.dir, "final.md")); string(data) != "edited draft" {
		t.Errorf("the edited call wrote %q (%v)", data, err)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "draft.md")); err == nil {
		t.Error("the call's original arguments ran")
	}
	s.typeLine("think now")
	s.waitFor("working…")
	s.keys("C-c")
	golden.Check(t, "testdata/tui/4-stopped.golden", []byte(normalize(s.waitFor("■ stopped"), w.dir)))
	s.keys("C-d")

	// A new process continues the thread, its conversation redrawn.
	// /compact: the thread becomes a summary at once, which the next
	// message starts with.
	again := w.script(`{"turns":[
 {"agent":"summarizer","content":"The user edited the notes and said: never delete that.","expect":{"messages_contain":["never delete that"]}},
 {"content":"Welcome back.","expect":{"messages_contain":["<summary>","never delete that","where were we?"],"messages_exclude":["Edit @notes.md please"]}}]}`)
	// 60 rows, as the first: the resumed conversation and what follows fit
	// with room, whatever rows the printing takes on the way.
	s2 := startTmuxSized(t, w, 160, 60, "--continue", "--model", "replay:"+again, "--dir", w.dir, "--db", w.db)
	s2.waitFor("> ")
	s2.typeLine("/thread")
	s2.typeLine("/compact")
	s2.waitFor("Summarized")
	s2.typeLine("where were we?")
	// The answer printed, and the usage line after it (the live view shows
	// the answer first).
	golden.Check(t, "testdata/tui/5-resumed.golden", []byte(normalize(s2.waitFor("Welcome back.\ndeepagents: thread"), w.dir)))
}

// deepagents --resume lists the recent threads by title; typing narrows
// the list, and enter opens the session on the thread picked.
func TestResumePicker(t *testing.T) {
	w := newWorld(t)
	done := w.script(`{"turns":[{"content":"ok"}]}`)
	for _, task := range []string{"first task: the parser", "second task: the docs"} {
		if code, _, stderr := w.run("run", "--model", "replay:"+done, "--dir", w.dir, "--db", w.db, task); code != 0 {
			t.Fatalf("run: %d %s", code, stderr)
		}
	}
	again := w.script(`{"turns":[{"content":"Back on the parser.","expect":{"messages_contain":["first task: the parser"]}}]}`)
	s := startTmux(t, w, "--resume", "--model", "replay:"+again, "--dir", w.dir, "--db", w.db)
	golden.Check(t, "testdata/tui/6-picker.golden", []byte(normalize(s.waitFor("Resume a thread"), w.dir)))
	for _, r := range "parser" {
		s.keys("-l", string(r))
	}
	s.waitFor("> parser")
	if scr := s.screen(); strings.Contains(scr, "second task") {
		t.Errorf("typing did not narrow the list:\n%s", scr)
	}
	s.keys("Enter")
	s.waitFor("/help for commands")
	s.typeLine("where were we?")
	golden.Check(t, "testdata/tui/7-picked.golden", []byte(normalize(s.waitFor("Back on the parser."), w.dir)))
}

// At 80, 60 and 40 columns the approval shows every key (the line
// wraps), and after n the reason's hint shows whole.
func TestApprovalFitsNarrowTerminals(t *testing.T) {
	// What a screen says, its lines joined: a wrapped line reads whole.
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for _, cols := range []int{80, 60, 40} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			w := newWorld(t)
			script := w.script(`{"turns":[{"tool_calls":[{"name":"execute","args":{"command":"ls"}}]},{"content":"ok"}]}`)
			s := startTmuxSized(t, w, cols, 24, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db, "--shell", "--sandbox", "none")
			s.waitFor("> ")
			s.typeLine("list the files")
			scr := s.waitFor("later")
			for _, key := range []string{"[y] yes", "[a] yes, and this tool for the session", "[e] edit", "[n] no, with a reason", "[esc] later"} {
				if !strings.Contains(words(scr), key) {
					t.Errorf("the approval at %d columns lacks %q:\n%s", cols, key, scr)
				}
			}
			s.keys("n")
			scr = s.waitFor("reason>")
			if hint := "what the agent should do instead (enter to skip)"; !strings.Contains(words(scr), hint) {
				t.Errorf("the reason's hint at %d columns is cut:\n%s", cols, scr)
			}
		})
	}
}

// A resize while the answer streams leaves no copy of the partial answer
// at the old width: the final screen shows the answer once.
func TestResizeWhileStreaming(t *testing.T) {
	w := newWorld(t)
	answer := "ALPHA " + strings.Repeat("lorem ipsum dolor sit amet ", 12) + "OMEGA"
	script := w.script(`{"turns":[{"content":"` + answer + `","delay_ms":2500}]}`)
	s := startTmuxSized(t, w, 120, 30, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db)
	s.waitFor("> ")
	s.typeLine("write a lot")
	s.waitFor("OMEGA")
	s.resize(70, 30)
	scr := s.waitFor("tokens in")
	// Rows of the old view rewrapped at the new width split words: what
	// the screen shows counts without white space.
	if n := strings.Count(strings.Join(strings.Fields(scr), ""), "loremipsum"); n != 12 {
		t.Errorf("the answer's words show %d times after a resize, want 12:\n%s", n, scr)
	}
}

// A failed step says why once.
func TestFailedStepSaysItOnce(t *testing.T) {
	w := newWorld(t)
	script := w.script(`{"turns":[{"error":"the model is down"}]}`)
	s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db)
	s.waitFor("> ")
	s.typeLine("hello")
	s.waitFor("the model is down")
	time.Sleep(500 * time.Millisecond)
	if scr := s.screen(); strings.Count(scr, "the model is down") != 1 {
		t.Errorf("the error shows more than once:\n%s", scr)
	}
}

// Ctrl-C on an empty line asks for a second one within two seconds; a
// lone one, a late one, does not end the session.
func TestCtrlCTwiceToExit(t *testing.T) {
	w := newWorld(t)
	script := w.script(`{"turns":[{"content":"Thinking...","delay_ms":60000}]}`)
	s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db)
	s.waitFor("> ")
	s.typeLine("think")
	s.waitFor("Thinking...")
	s.keys("C-c")
	s.waitFor("■ stopped")
	s.keys("C-c") // a late one, meant for the step
	s.waitFor("press ctrl+c again to exit")
	time.Sleep(2500 * time.Millisecond)
	scr := s.screen()
	if strings.Contains(scr, exitedMark) || strings.Contains(scr, "press ctrl+c again") {
		t.Fatalf("after one ctrl+c and a wait, the session should be on, without the hint:\n%s", scr)
	}
	s.keys("C-c")
	s.waitFor("press ctrl+c again to exit")
	s.keys("C-c")
	s.waitFor(exitedMark)
}

// While the agent works the input stays: tab queues a message, sent when
// the task ends (enter steers: TestSteerWhileAToolRuns), and so does enter
// while the task waits for an approval; keys typed as an approval appears
// go to the input, never to the approval.
func TestTypeAheadQueuesAndNeverApproves(t *testing.T) {
	w := newWorld(t)
	script := w.script(`{"turns":[
 {"content":"Looking at it.","delay_ms":1500,"tool_calls":[{"name":"execute","args":{"command":"echo hi"}}]},
 {"content":"First done."},
 {"content":"Second done.","expect":{"last_message_contains":["second task"]}},
 {"content":"Third done.","expect":{"last_message_contains":["a"]}}]}`)
	s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db, "--shell", "--sandbox", "none")
	s.waitFor("> ")
	s.typeLine("first task")
	s.waitFor("Looking at it.")
	s.keys("-l", "second task")
	s.keys("Tab")
	s.waitFor("queued: second task")
	// The approval appears; a and enter typed at once are not its keys.
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(s.screen(), "approve?") {
		if time.Now().After(deadline) {
			t.Fatalf("no approval:\n%s", s.screen())
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.keys("-l", "a")
	s.keys("Enter")
	scr := s.waitFor("queued: a")
	time.Sleep(1500 * time.Millisecond)
	scr = s.screen()
	if strings.Contains(scr, "approved") || !strings.Contains(scr, "approve?") {
		t.Fatalf("keys typed ahead answered the approval:\n%s", scr)
	}
	s.keys("y")
	s.waitFor("Third done.")
	scr = s.screen()
	first, second, third := strings.Index(scr, "First done."), strings.Index(scr, "Second done."), strings.Index(scr, "Third done.")
	if !(first >= 0 && first < second && second < third) || strings.Contains(scr, "for this session") {
		t.Errorf("the queued messages, in order, after the task:\n%s", scr)
	}
}
