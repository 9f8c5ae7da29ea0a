package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// waitForFile waits until the workspace's file name holds want.
func waitForFile(t *testing.T, s *tmuxSession, path, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil && string(b) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q, %v; want %q; the screen:\n%s", path, b, err, want, s.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// In the terminal, a background task that stops to ask shows in the
// queue while the main agent works, naming the task's subagent, its task
// and the call; y resumes it, and the file it writes appears; n with a
// reason gives the reason to its model (whose next step, scripted to
// expect the reason, writes elsewhere). The main agent's step goes on
// meanwhile.
func TestTUIBackgroundApproval(t *testing.T) {
	for _, c := range []struct {
		name, writer string
		answer       func(s *tmuxSession)
		file, body   string
	}{
		{"approve", `{"agent":"writer","content":"note written"}`,
			func(s *tmuxSession) { s.keys("y") }, "note.txt", "hello from the writer\n"},
		{"reject", `{"agent":"writer","tool_calls":[{"id":"o","name":"write_file","args":{"file_path":"/other.txt","content":"elsewhere\n"}}],"expect":{"last_message_contains":["not this file"]}},
			{"agent":"writer","content":"wrote elsewhere"}`,
			func(s *tmuxSession) {
				s.keys("n")
				s.waitFor("reason>")
				s.typeLine("not this file")
			}, "other.txt", "elsewhere\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := parkWorld(t, "")
			script := w.script(`{"turns":[
	{"tool_calls":[{"id":"s","name":"start_async_task","args":{"description":"write the note","subagent_type":"writer"}}]},
	{"content":"Meanwhile I think.","delay_ms":60000},
	{"agent":"writer","tool_calls":[{"id":"wf","name":"write_file","args":{"file_path":"/note.txt","content":"hello from the writer\n"}}]},
	` + c.writer + `]}`)
			s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db, "--permission-mode", "accept-edits")
			s.waitFor("> ")
			s.typeLine("go")
			scr := s.waitFor("[y] yes")
			for _, want := range []string{"background task", "(writer)", "task: write the note", "write_file", "/note.txt", "working…"} {
				if !strings.Contains(scr, want) {
					t.Errorf("the screen lacks %q:\n%s", want, scr)
				}
			}
			c.answer(s)
			waitForFile(t, s, filepath.Join(w.dir, c.file), c.body)
			scr = s.waitFor("resumes")
			if !strings.Contains(scr, "working…") {
				t.Errorf("the main agent's step did not go on:\n%s", scr)
			}
			if c.file != "note.txt" {
				if _, err := os.Stat(filepath.Join(w.dir, "note.txt")); err == nil {
					t.Error("note.txt was written though rejected")
				}
			}
		})
	}
}

// A session opened on a thread whose background task parked in an
// earlier process (one killed, say) has the request in its queue from
// the start; y there resumes the task, which writes its file.
func TestTUIBackgroundApprovalParkedBefore(t *testing.T) {
	w := parkWorld(t, "")
	park(t, w)
	script := w.script(`{"turns":[{"agent":"writer","content":"note written"}]}`)
	s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db, "--resume", "bg")
	scr := s.waitFor("[y] yes")
	for _, want := range []string{"background task task-1 (writer)", "task: write the note", "/note.txt"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the screen lacks %q:\n%s", want, scr)
		}
	}
	s.keys("y")
	waitForFile(t, s, filepath.Join(w.dir, "note.txt"), "hello from the writer\n")
	s.waitFor("background task task-1 (writer) resumes")
}
