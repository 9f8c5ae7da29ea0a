package cli

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/llm"
)

// folder is the workspace's entries as "path content" lines.
func folder(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel != "." {
				b.WriteString(rel + "/\n")
			}
			return nil
		}
		data, _ := os.ReadFile(p)
		b.WriteString(rel + " " + string(data) + "\n")
		return nil
	})
	return b.String()
}

// stateMessages are the texts of the thread's messages.
func stateMessages(t *testing.T, w *world, thread string) []string {
	t.Helper()
	code, out, stderr := w.run("state", thread, "--db", w.db)
	if code != 0 {
		t.Fatalf("state: exit %d: %s", code, stderr)
	}
	var st struct {
		Messages []llm.Message `json:"messages"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range st.Messages {
		texts = append(texts, m.Text())
	}
	return texts
}

// TestRewindThroughTheBinary: a run edits with edit_file and changes the
// tree with commands (rm, mv, a generated folder); rewind lists the turns,
// --to 1 restores the exact tree and the conversation, keeping a file
// changed by hand; the abandoned branch can be rewound to and continued.
func TestRewindThroughTheBinary(t *testing.T) {
	w := newWorld(t)
	// b.txt is large enough to be stored as a blob of its own, which
	// vacuum removes once no thread has it.
	for f, c := range map[string]string{"a.txt": "alpha\n", "b.txt": strings.Repeat("bravo\n", 200), "c.txt": "charlie\n", "mine.txt": "v1\n"} {
		os.WriteFile(filepath.Join(w.dir, f), []byte(c), 0o644)
	}
	original := folder(t, w.dir)
	first := w.script(`{"turns":[
		{"tool_calls":[{"id":"e","name":"edit_file","args":{"file_path":"/a.txt","old_string":"alpha","new_string":"ALPHA"}}]},
		{"tool_calls":[{"id":"x","name":"execute","args":{"command":"rm b.txt && mv c.txt d.txt && mkdir -p gen/sub && echo out > gen/sub/out.txt"}}]},
		{"content":"tidied"}]}`)
	if code, _, stderr := w.run(w.runArgs(first, "--shell", "--auto-approve", "--thread", "rw", "tidy up")...); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	afterFirst := folder(t, w.dir)
	if !strings.Contains(afterFirst, "gen/sub/out.txt out") || strings.Contains(afterFirst, "b.txt") {
		t.Fatalf("the first run did not change the tree:\n%s", afterFirst)
	}
	os.WriteFile(filepath.Join(w.dir, "mine.txt"), []byte("v2 by hand\n"), 0o644)
	second := w.script(`{"turns":[
		{"tool_calls":[{"id":"w","name":"write_file","args":{"file_path":"/e.txt","content":"echo\n"}}]},
		{"content":"added e"}]}`)
	if code, _, stderr := w.run(w.runArgs(second, "--auto-approve", "--thread", "rw", "add e")...); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}

	code, out, stderr := w.run("rewind", "rw", "--db", w.db)
	if code != 0 {
		t.Fatalf("rewind: exit %d: %s", code, stderr)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[1], "1 ") || !strings.HasSuffix(lines[1], "tidy up") || !strings.HasSuffix(lines[2], "add e") {
		t.Fatalf("the turns:\n%s", out)
	}

	code, out, stderr = w.run("rewind", "rw", "--to", "1", "--db", w.db)
	if code != 0 {
		t.Fatalf("rewind --to 1: exit %d: %s", code, stderr)
	}
	want := strings.Replace(original, "mine.txt v1", "mine.txt v2 by hand", 1)
	if got := folder(t, w.dir); got != want {
		t.Errorf("the tree after rewind --to 1:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(out, "Kept, changed outside the agent since") || !strings.Contains(out, "mine.txt") || !strings.Contains(out, "tidy up") {
		t.Errorf("rewind --to 1 said:\n%s", out)
	}
	if msgs := stateMessages(t, w, "rw"); len(msgs) != 0 {
		t.Errorf("the conversation after rewind --to 1: %q", msgs)
	}

	// The abandoned branch: turn 2 is still there, files and conversation.
	if code, out, stderr = w.run("rewind", "rw", "--to", "2", "--db", w.db); code != 0 {
		t.Fatalf("rewind --to 2: exit %d: %s\n%s", code, stderr, out)
	}
	if got := folder(t, w.dir); got != strings.Replace(afterFirst, "mine.txt v1", "mine.txt v2 by hand", 1) {
		t.Errorf("the tree after rewind --to 2:\n%s\nwant the first run's:\n%s", got, afterFirst)
	}
	msgs := stateMessages(t, w, "rw")
	if len(msgs) == 0 || !strings.Contains(msgs[len(msgs)-1], "tidied") {
		t.Fatalf("the conversation after rewind --to 2: %q", msgs)
	}
	again := w.script(`{"turns":[{"content":"continued","expect":{"messages_contain":["tidy up","tidied","and now?"]}}]}`)
	if code, _, stderr := w.run(w.runArgs(again, "--thread", "rw", "and now?")...); code != 0 {
		t.Fatalf("continuing the branch: exit %d: %s", code, stderr)
	}

	// Bad calls are usage errors.
	for _, args := range [][]string{{"rewind", "rw", "--to", "9"}, {"rewind", "rw", "--force"}, {"rewind", "nosuch"}} {
		if code, _, _ := w.run(append(args, "--db", w.db)...); code == 0 {
			t.Errorf("%v: exit 0", args)
		}
	}

	// Deleting the thread forgets its points; vacuum drops the contents
	// no point refers to any more.
	if code, _, stderr := w.run("threads", "delete", "rw", "--db", w.db); code != 0 {
		t.Fatalf("threads delete: exit %d: %s", code, stderr)
	}
	code, out, stderr = w.run("db", "vacuum", "--db", w.db)
	if code != 0 || !strings.Contains(out, "workspace checkpoint contents") || strings.Contains(out, "(0 workspace") {
		t.Errorf("db vacuum: exit %d: %s %s", code, out, stderr)
	}
}

// TestRewindLosesNothingThroughTheBinary is the session, as a
// user has it: a command adds a binary file and one of 2 MB, a second
// prompt follows; rewind --to 1 removes them and --to 2 brings them back
// whole; the state after the last turn is listed and --to reaches it
// (the rewinds undone); --to 0 is a usage error, as --to -1 is.
func TestRewindLosesNothingThroughTheBinary(t *testing.T) {
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.dir, "a.txt"), []byte("alpha\n"), 0o644)
	first := w.script(`{"turns":[
		{"tool_calls":[{"id":"x","name":"execute","args":{"command":"printf 'NEW\\0bin' > newbin.dat && head -c 2000000 /dev/zero | tr '\\0' y > newbig.txt"}}]},
		{"content":"made them"}]}`)
	if code, _, stderr := w.run(w.runArgs(first, "--shell", "--auto-approve", "--thread", "lose", "make files")...); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	second := w.script(`{"turns":[
		{"tool_calls":[{"id":"w","name":"write_file","args":{"file_path":"/e.txt","content":"echo\n"}}]},
		{"content":"added e"}]}`)
	if code, _, stderr := w.run(w.runArgs(second, "--auto-approve", "--thread", "lose", "add e")...); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	afterAll := folder(t, w.dir)
	if !strings.Contains(afterAll, "newbin.dat NEW\x00bin") || !strings.Contains(afterAll, "e.txt echo") {
		t.Fatalf("the runs made:\n%.300s", afterAll)
	}
	rewindTo := func(n string) string {
		t.Helper()
		code, out, stderr := w.run("rewind", "lose", "--to", n, "--db", w.db)
		if code != 0 {
			t.Fatalf("rewind --to %s: exit %d: %s\n%s", n, code, stderr, out)
		}
		return out
	}
	out := rewindTo("1")
	if got := folder(t, w.dir); got != "a.txt alpha\n\n" {
		t.Errorf("after rewind --to 1:\n%.300s", got)
	}
	if !strings.Contains(out, "Removed:\n  e.txt\n  newbig.txt\n  newbin.dat") || strings.Contains(out, "Not restorable") || strings.Contains(out, "Left as they are") {
		t.Errorf("rewind --to 1 said:\n%s", out)
	}
	rewindTo("2")
	if got := folder(t, w.dir); got != strings.Replace(afterAll, "e.txt echo\n\n", "", 1) {
		t.Errorf("after rewind --to 2 (what the first prompt made):\n%.300s", got)
	}
	code, list, _ := w.run("rewind", "lose", "--db", w.db)
	if code != 0 || !strings.Contains(list, "3 ") || !strings.Contains(list, EndLabel) {
		t.Fatalf("the turns after two rewinds:\n%s", list)
	}
	rewindTo("3") // the end of the last turn, as the first rewind found it
	if got := folder(t, w.dir); got != afterAll {
		t.Errorf("after rewind --to 3:\n%.300s\nwant:\n%.300s", got, afterAll)
	}
	if msgs := stateMessages(t, w, "lose"); len(msgs) == 0 || msgs[len(msgs)-1] != "added e" {
		t.Errorf("the conversation after rewind --to 3: %q", msgs)
	}
	for _, n := range []string{"0", "-1"} {
		if code, _, stderr := w.run("rewind", "lose", "--to", n, "--db", w.db); code != 2 || !strings.Contains(stderr, "turn number from 1") {
			t.Errorf("rewind --to %s: exit %d: %s", n, code, stderr)
		}
	}
}

// TestRewindInTerminal: esc esc opens the list of the thread's prompts;
// picking one and "b" puts code and conversation back before it, and its
// prompt returns to the input.
func TestRewindInTerminal(t *testing.T) {
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.dir, "a.txt"), []byte("alpha\n"), 0o644)
	script := w.script(`{"turns":[
		{"tool_calls":[{"id":"w","name":"write_file","args":{"file_path":"/a.txt","content":"changed\n"}}]},
		{"content":"done one"},
		{"content":"done two"}]}`)
	s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db, "--auto-approve", "--thread", "tt")
	s.waitFor("> ")
	s.typeLine("first change")
	s.waitFor("done one")
	s.typeLine("second")
	s.waitFor("done two")
	s.keys("Escape")
	time.Sleep(150 * time.Millisecond)
	s.keys("Escape")
	scr := s.waitFor("Rewind")
	if !strings.Contains(scr, "first change") || !strings.Contains(scr, "second") {
		t.Fatalf("the rewind list:\n%s", scr)
	}
	s.keys("Up")
	s.keys("Enter")
	s.waitFor("[b] code and conversation")
	s.keys("b")
	scr = s.waitFor("rewind to prompt 1")
	if data, _ := os.ReadFile(filepath.Join(w.dir, "a.txt")); string(data) != "alpha\n" {
		t.Errorf("a.txt = %q after the rewind:\n%s", data, scr)
	}
	if !strings.Contains(scr, "Files: 1 put back") {
		t.Errorf("the rewind's summary:\n%s", scr)
	}
	// The prompt is back in the input, to edit and send: below the
	// rewind's summary.
	summary, input := -1, -1
	for i, l := range strings.Split(scr, "\n") {
		if strings.Contains(l, "rewind to prompt 1") {
			summary = i
		}
		if strings.Contains(l, "first change") && !strings.Contains(l, "rewind") {
			input = i
		}
	}
	if input < summary || summary < 0 {
		t.Errorf("the prompt did not come back to the input:\n%s", scr)
	}
	if msgs := stateMessages(t, w, "tt"); len(msgs) != 0 {
		t.Errorf("the conversation after the rewind: %q", msgs)
	}
}
