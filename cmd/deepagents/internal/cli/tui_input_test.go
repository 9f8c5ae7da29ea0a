package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/internal/golden"
)

// typeText types text a key at a time, without pressing Enter.
func (s *tmuxSession) typeText(text string) {
	s.t.Helper()
	for _, r := range text {
		s.keys("-l", string(r))
	}
}

// paste pastes text into the pane as a terminal does with bracketed
// paste on.
func (s *tmuxSession) paste(text string) {
	s.t.Helper()
	f := filepath.Join(s.t.TempDir(), "paste")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		s.t.Fatal(err)
	}
	for _, args := range [][]string{{"load-buffer", "-b", s.name, f}, {"paste-buffer", "-p", "-d", "-b", s.name, "-t", s.name}} {
		if out, err := execTmux(args...); err != nil {
			s.t.Fatalf("tmux %s: %v %s", args[0], err, out)
		}
	}
}

// A \ then Enter, and Alt+Enter, start a new line of the message; Enter
// sends the lines as one message, and up recalls it whole.
func TestMultilineInput(t *testing.T) {
	w := newWorld(t)
	script := w.script(`{"turns":[
 {"content":"Got three lines.","expect":{"last_message_contains":["first line\nsecond line\nthird line"]}},
 {"content":"Again.","expect":{"last_message_contains":["first line\nsecond line\nthird line!"]}}]}`)
	s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db)
	s.waitFor("> ")
	s.typeText(`first line\`)
	s.keys("Enter")
	s.typeText("second line")
	s.keys("M-Enter")
	s.typeText("third line")
	scr := s.waitFor("  third line")
	if !strings.Contains(scr, "> first line\n  second line\n  third line") {
		t.Fatalf("the input should show three lines:\n%s", scr)
	}
	s.keys("Enter")
	s.waitFor("Got three lines.")
	// Up recalls the message whole, the cursor at its end, where what is
	// typed goes.
	s.keys("Up")
	s.waitFor("  third line\n")
	s.typeLine("!")
	s.waitFor("Again.")
}

// Lines pasted arrive as one message, newlines and all; a paste over the
// message limit is cut, and the session says so.
func TestBracketedPaste(t *testing.T) {
	w := newWorld(t)
	script := w.script(`{"turns":[
 {"content":"One message.","expect":{"last_message_contains":["alpha\nbeta\ngamma"]}},
 {"content":"Cut one.","expect":{"last_message_contains":["xxxx"]}}]}`)
	s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db)
	s.waitFor("> ")
	s.paste("alpha\nbeta\ngamma")
	s.waitFor("  gamma")
	s.keys("Enter")
	s.waitFor("One message.")
	time.Sleep(300 * time.Millisecond)
	if scr := s.screen(); strings.Contains(scr, "✗") || strings.Count(scr, "One message.") != 1 {
		t.Fatalf("the paste should be one message:\n%s", scr)
	}
	s.paste(strings.Repeat(strings.Repeat("x", 99)+"\n", 11000))
	s.waitFor("the paste was cut to the message limit")
	s.keys("Enter")
	s.waitFor("Cut one.")
}

// Ctrl-G opens $EDITOR on the message; what it saves becomes the message.
func TestCtrlGOpensTheEditor(t *testing.T) {
	w := newWorld(t)
	editor := filepath.Join(t.TempDir(), "editor.sh")
	seen := filepath.Join(t.TempDir(), "seen")
	os.WriteFile(editor, []byte("#!/bin/sh\ncp \"$1\" "+seen+"\nprintf 'from the editor\\nits second line\\n' > \"$1\"\n"), 0o700)
	script := w.script(`{"turns":[{"content":"Edited.","expect":{"last_message_contains":["from the editor\nits second line"]}}]}`)
	s := startTmuxEnv(t, w, []string{"EDITOR=" + editor, "VISUAL="}, 160, 40, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db)
	s.waitFor("> ")
	s.typeText("a draft")
	s.keys("C-g")
	s.waitFor("  its second line")
	if data, _ := os.ReadFile(seen); string(data) != "a draft" {
		t.Errorf("the editor was given %q, want the draft", data)
	}
	s.keys("Enter")
	s.waitFor("Edited.")
}

// Tab completes a / command and an @path of the workspace, lists the
// choices when they are several, and offers no symbolic link.
func TestTabCompletion(t *testing.T) {
	w := newWorld(t)
	os.MkdirAll(filepath.Join(w.dir, "src"), 0o755)
	for _, f := range []string{"src/main.go", "src/main_test.go", "readme.md"} {
		os.WriteFile(filepath.Join(w.dir, f), []byte("x\n"), 0o600)
	}
	os.Symlink(filepath.Join(w.dir, "readme.md"), filepath.Join(w.dir, "src", "main_link.go"))
	script := w.script(`{"turns":[{"content":"ok"}]}`)
	s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db)
	s.waitFor("> ")
	s.typeText("/com")
	s.keys("Tab")
	s.typeText("x") // after the space the completion adds
	s.waitFor("> /compact x")
	s.keys("C-u")
	s.typeText("/t")
	s.keys("Tab")
	scr := s.waitFor("/threads")
	if !strings.Contains(scr, "/thread  /threads  /tokens") {
		t.Errorf("/t and tab should list the commands:\n%s", scr)
	}
	s.keys("C-u")
	s.typeText("read @sr")
	s.keys("Tab")
	s.waitFor("> read @src/")
	s.typeText("ma")
	s.keys("Tab")
	scr = s.waitFor("@src/main_test.go")
	if !strings.Contains(scr, "> read @src/main\n") || !strings.Contains(scr, "@src/main.go  @src/main_test.go") || strings.Contains(scr, "main_link") {
		t.Errorf("the paths after tab:\n%s", scr)
	}
}

// The status line under the input names the model, and once a model call
// is made the context it filled and the session's cost.
func TestStatusLine(t *testing.T) {
	w := newWorld(t)
	script := w.script(`{"turns":[{"content":"Hello.","usage":{"input_tokens":1000,"output_tokens":10}}]}`)
	s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db)
	scr := s.waitFor("> ")
	if !strings.Contains(scr, "\nscript · $0.0000") {
		t.Errorf("the status line at the start:\n%s", scr)
	}
	s.typeLine("hi")
	s.waitFor("Hello.")
	scr = s.waitFor("> a task")
	lines := strings.Split(strings.TrimRight(scr, "\n "), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "script · context ") || !strings.Contains(last, " · $") {
		t.Errorf("the status line after a call: %q\n%s", last, scr)
	}
}

// An edit's approval shows a diff with line numbers and context lines,
// a write over a file the lines it replaces, and the results the diffs
// made.
func TestApprovalDiffs(t *testing.T) {
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.dir, "notes.md"), []byte("one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"), 0o600)
	os.WriteFile(filepath.Join(w.dir, "readme.md"), []byte("# Title\nold body\nmore\n"), 0o600)
	script := w.script(`{"turns":[
 {"tool_calls":[{"name":"edit_file","args":{"file_path":"/notes.md","old_string":"six","new_string":"6\nsix and a half"}}]},
 {"tool_calls":[{"name":"write_file","args":{"file_path":"/readme.md","content":"# Title\nnew body\n"}}]},
 {"content":"Done."}]}`)
	s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db)
	s.waitFor("> ")
	s.typeLine("edit")
	golden.Check(t, "testdata/tui/diff-edit.golden", []byte(normalize(s.waitFor("[esc] later"), w.dir)))
	s.keys("y")
	s.waitFor("replaces 3 lines")
	golden.Check(t, "testdata/tui/diff-write.golden", []byte(normalize(s.waitFor("[esc] later"), w.dir)))
	s.keys("y")
	golden.Check(t, "testdata/tui/diff-results.golden", []byte(normalize(s.waitFor("Done."), w.dir)))
}

// Ctrl-O shows the task's tool results in full, and folds them again.
func TestCtrlOExpandsResults(t *testing.T) {
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.dir, "notes.md"), []byte("alpha\nbeta\ngamma\ndelta\nepsilon\n"), 0o600)
	script := w.script(`{"turns":[
 {"tool_calls":[{"name":"read_file","args":{"file_path":"/notes.md"}}]},
 {"content":"Read."},
 {"tool_calls":[{"name":"read_file","args":{"file_path":"/notes.md"}}]},
 {"content":"Read again."}]}`)
	s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db)
	s.waitFor("> ")
	s.typeLine("read it")
	scr := s.waitFor("Read.")
	if strings.Contains(scr, "epsilon") {
		t.Fatalf("the result should be folded:\n%s", scr)
	}
	s.keys("C-o")
	scr = s.waitFor("tool results in full")
	if !strings.Contains(scr, "epsilon") {
		t.Fatalf("ctrl+o should show the result in full:\n%s", scr)
	}
	// Expanded, the next results show in full as they come.
	s.typeLine("again")
	scr = s.waitFor("Read again.")
	if strings.Count(scr, "epsilon") != 2 {
		t.Errorf("the next result should show in full:\n%s", scr)
	}
	s.keys("C-o")
	s.waitFor("tool results fold to a line again")
}

// execTmux runs tmux with args.
func execTmux(args ...string) ([]byte, error) {
	return exec.Command("tmux", args...).CombinedOutput()
}
