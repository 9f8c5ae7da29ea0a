package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The interactive session's shortcuts and commands, driven in tmux
// through the real binary (see tui_test.go).

// !command runs in the agent's shell and its output reaches the model
// with the next message, never as a prompt by itself; a deny rule refuses
// it, and without --shell the session says how to get one.
func TestShellShortcut(t *testing.T) {
	w := newWorld(t)
	script := w.script(`{"turns":[{"content":"It printed the marker.","expect":{"messages_contain":["$ echo hello-from-shell","hello-from-shell\n","what did it print?"]}}]}`)
	s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db, "--shell", "--sandbox", "none", "--deny", "execute(rm)")
	s.waitFor("> ")
	s.typeLine("!echo hello-from-shell")
	s.waitFor("added to the conversation")
	s.typeLine("!rm -rf somewhere")
	s.waitFor("refused")
	s.typeLine("what did it print?")
	scr := s.waitFor("It printed the marker.")
	if !strings.Contains(scr, "! echo hello-from-shell") || !strings.Contains(scr, "  hello-from-shell") {
		t.Errorf("the command and its output are not shown:\n%s", scr)
	}

	// Without a shell: how to get one, and no model call (the script has
	// no turn for one).
	none := w.script(`{"turns":[]}`)
	s2 := startTmux(t, w, "--model", "replay:"+none, "--dir", w.dir, "--db", w.db)
	s2.waitFor("> ")
	s2.typeLine("!ls")
	if scr := s2.waitFor("--shell"); strings.Contains(scr, "model called more often") {
		t.Errorf("!ls went to the model:\n%s", scr)
	}
}

// #note asks for project or user memory and appends the note there as a
// bullet.
func TestMemoryShortcut(t *testing.T) {
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.dir, "AGENTS.md"), []byte("# Project\nno trailing newline"), 0o600)
	none := w.script(`{"turns":[]}`)
	s := startTmux(t, w, "--model", "replay:"+none, "--dir", w.dir, "--db", w.db)
	s.waitFor("> ")
	s.typeLine("#always run gofmt")
	s.waitFor("[u] user memory")
	s.keys("p")
	s.waitFor("added to " + filepath.Join(w.dir, "AGENTS.md"))
	s.typeLine("#answer in French")
	s.waitFor("[u] user memory")
	s.keys("u")
	user := filepath.Join(w.home, ".deepagents", "AGENTS.md")
	s.waitFor("added to " + user)
	if data, _ := os.ReadFile(filepath.Join(w.dir, "AGENTS.md")); string(data) != "# Project\nno trailing newline\n- always run gofmt\n" {
		t.Errorf("project memory: %q", data)
	}
	if data, _ := os.ReadFile(user); string(data) != "- answer in French\n" {
		t.Errorf("user memory: %q", data)
	}
	if scr := s.screen(); strings.Contains(scr, "model called") {
		t.Errorf("a note went to the model:\n%s", scr)
	}
}

// /init runs the agent on the built-in prompt: to write AGENTS.md, or to
// improve the one there is.
func TestInitCommand(t *testing.T) {
	w := newWorld(t)
	script := w.script(`{"turns":[
 {"tool_calls":[{"name":"write_file","args":{"file_path":"/AGENTS.md","content":"# Notes\n- go test ./...\n"}}],"expect":{"last_message_contains":["Study this repository","There is no /AGENTS.md yet"]}},
 {"content":"AGENTS.md written."},
 {"content":"Improved.","expect":{"last_message_contains":["/AGENTS.md exists already","Do not replace it wholesale","mention the benchmarks"]}}]}`)
	s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db, "--auto-approve")
	s.waitFor("> ")
	s.typeLine("/init")
	s.waitFor("AGENTS.md written.")
	if data, _ := os.ReadFile(filepath.Join(w.dir, "AGENTS.md")); !strings.Contains(string(data), "go test") {
		t.Errorf("AGENTS.md: %q", data)
	}
	s.typeLine("/init mention the benchmarks")
	s.waitFor("Improved.")
}

// /mcp, /permissions and /config show the servers, the rules in force
// with their sources, and the files read and settings in force.
func TestInfoCommands(t *testing.T) {
	w := newWorld(t)
	os.MkdirAll(filepath.Join(w.home, ".deepagents"), 0o700)
	os.WriteFile(filepath.Join(w.home, ".deepagents", "mcp.json"), []byte(`{"mcpServers":{"broken":{"command":"/nonexistent/server"}}}`), 0o600)
	os.WriteFile(filepath.Join(w.home, ".deepagents", "config.yaml"), []byte("permissions:\n  ask: [\"write_file(/docs/**)\"]\n"), 0o600)
	none := w.script(`{"turns":[]}`)
	s := startTmux(t, w, "--model", "replay:"+none, "--dir", w.dir, "--db", w.db, "--deny", "read_file(/secret/**)")
	s.waitFor("/help for commands")
	s.typeLine("/mcp")
	s.waitFor("broken  failed:")
	s.typeLine("/permissions")
	scr := s.waitFor("never read (")
	for _, want := range []string{"deny read_file(/secret/**)", "flags", "ask write_file(/docs/**)", filepath.Join(w.home, ".deepagents", "config.yaml"), "approval asked for: write_file", "protected paths", ".git"} {
		if !strings.Contains(scr, want) {
			t.Errorf("/permissions lacks %q:\n%s", want, scr)
		}
	}
	s.typeLine("/config")
	scr = s.waitFor("db: sqlite")
	for _, want := range []string{"config.yaml (read)", filepath.Join(w.dir, ".deepagents", "config.yaml") + " (absent)", "model: replay:", "dir: " + w.dir, "shell: off"} {
		if !strings.Contains(scr, want) {
			t.Errorf("/config lacks %q:\n%s", want, scr)
		}
	}
}

// /model SPEC switches the model for the next messages of the same
// thread; a bad spec says why and keeps the model.
func TestModelSwitch(t *testing.T) {
	w := newWorld(t)
	first := w.script(`{"turns":[{"content":"First model here."}]}`)
	second := w.script(`{"turns":[{"content":"Second model here.","expect":{"messages_contain":["hello","First model here.","again"]}}]}`)
	s := startTmux(t, w, "--model", "replay:"+first, "--dir", w.dir, "--db", w.db)
	s.waitFor("> ")
	s.typeLine("hello")
	s.waitFor("First model here.")
	s.typeLine("/model nosuch:x")
	s.waitFor("the model stays replay:")
	s.typeLine("/model replay:" + second)
	s.waitFor("from the next message on")
	s.typeLine("again")
	s.waitFor("Second model here.")
	s.typeLine("/model")
	s.waitFor("replay:" + second)
}

// /resume without an id opens the picker in the session, and resuming
// redraws the earlier conversation; so does --continue at start.
func TestResumeInSession(t *testing.T) {
	w := newWorld(t)
	done := w.script(`{"turns":[{"tool_calls":[{"name":"ls","args":{"path":"/"}}]},{"content":"The **parser** is fixed."}]}`)
	if code, _, stderr := w.run("run", "--model", "replay:"+done, "--dir", w.dir, "--db", w.db, "fix the parser"); code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	again := w.script(`{"turns":[{"content":"Back on it.","expect":{"messages_contain":["fix the parser","next step?"]}}]}`)
	s := startTmux(t, w, "--model", "replay:"+again, "--dir", w.dir, "--db", w.db)
	s.waitFor("> ")
	s.typeLine("/resume")
	s.waitFor("Resume a thread")
	s.keys("Enter")
	scr := s.waitFor("── now ──")
	for _, want := range []string{"earlier in this thread", "> fix the parser", "● ls", "The parser is fixed."} {
		if !strings.Contains(scr, want) {
			t.Errorf("the earlier conversation lacks %q:\n%s", want, scr)
		}
	}
	s.typeLine("next step?")
	s.waitFor("Back on it.")
	s.keys("C-d")

	none := w.script(`{"turns":[]}`)
	s2 := startTmux(t, w, "--continue", "--model", "replay:"+none, "--dir", w.dir, "--db", w.db)
	scr = s2.waitFor("── now ──")
	if !strings.Contains(scr, "> next step?") || !strings.Contains(scr, "Back on it.") {
		t.Errorf("--continue does not redraw the conversation:\n%s", scr)
	}
}

// /compact FOCUS summarizes now, the focus given to the summarizer, and
// the next message sees only the summary.
func TestCompactNow(t *testing.T) {
	w := newWorld(t)
	done := w.script(`{"turns":[{"content":"The answer is 42."}]}`)
	if code, _, stderr := w.run("run", "--model", "replay:"+done, "--dir", w.dir, "--db", w.db, "find the answer"); code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	again := w.script(`{"turns":[
 {"agent":"summarizer","content":"The answer was 42.","expect":{"messages_contain":["find the answer","<focus>\nthe numbers\n</focus>"]}},
 {"content":"Still 42.","expect":{"messages_contain":["<summary>\nThe answer was 42.","and now?"],"messages_exclude":["find the answer"]}}]}`)
	s := startTmux(t, w, "--continue", "--model", "replay:"+again, "--dir", w.dir, "--db", w.db)
	s.waitFor("── now ──")
	s.typeLine("/compact the numbers")
	s.waitFor("Summarized 2 older messages")
	s.typeLine("and now?")
	s.waitFor("Still 42.")
}

// /goal sets the thread's goal from the next message on: a grader checks
// each final answer against it and sends the agent back once when it falls
// short; the thread keeps it for its later messages; /goal shows it and
// /goal clear removes it. A goal set on one thread stays with it: after
// /clear the new thread's answers are not graded.
func TestGoalCommand(t *testing.T) {
	w := newWorld(t)
	script := w.script(`{"turns":[
 {"content":"done"},
 {"agent":"grader","content":"FAIL\nNo test was run.","expect":{"last_message_contains":["<request>\nfix it\n</request>","<rubric>\nThe tests pass.\n</rubric>"]}},
 {"content":"Ran the tests: they pass.","expect":{"last_message_contains":["No test was run."]}},
 {"content":"still fine"},
 {"agent":"grader","content":"PASS","expect":{"last_message_contains":["<rubric>\nThe tests pass.\n</rubric>"]}},
 {"content":"all clear now"},
 {"content":"a fresh start"}]}`)
	s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db)
	s.waitFor("> ")
	s.typeLine("/goal")
	s.waitFor("no goal; /goal TEXT sets")
	s.typeLine("/goal The tests pass.")
	s.waitFor("goal set: from the next message on")
	s.typeLine("fix it")
	s.waitFor("Ran the tests: they pass.")
	s.typeLine("and now?")
	s.waitFor("still fine")
	s.typeLine("/goal")
	s.waitFor("goal: The tests pass.")
	s.typeLine("/goal clear")
	s.waitFor("the goal is removed")
	s.typeLine("bye?")
	s.waitFor("all clear now")
	s.typeLine("/goal Another goal.")
	s.waitFor("goal set")
	s.typeLine("/clear")
	s.waitFor("a new thread starts")
	s.typeLine("fresh?")
	s.waitFor("a fresh start")
	// The whole scrollback: a grader asked once more than scripted says
	// "not graded".
	scr := strings.Join(s.scrollback(), "\n")
	if strings.Contains(scr, "not graded") || strings.Count(scr, "note: PASS") != 1 || !strings.Contains(scr, "note: FAIL") {
		t.Errorf("the grades shown are not one FAIL and one PASS:\n%s", scr)
	}
	s.typeLine("/goal")
	s.waitFor("no goal; /goal TEXT sets")
}
