package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/deepagents-go/deepagents"
)

// inProcess runs the command line in this process, in w's home, data
// directory and database: each call is one process of the CLI (the
// background tasks of one call do not outlive it, as in a process that
// exits).
func (w *world) inProcess(args ...string) (int, string, string) {
	w.t.Helper()
	w.t.Setenv("HOME", w.home)
	w.t.Setenv("XDG_DATA_HOME", filepath.Join(w.home, "data"))
	env := map[string]string{"HOME": w.home, "XDG_DATA_HOME": filepath.Join(w.home, "data")}
	var out, errb bytes.Buffer
	code := Main(args, Env{
		Stdin:  strings.NewReader(""),
		Stdout: &out,
		Stderr: &errb,
		Getenv: func(k string) string { return env[k] },
	})
	return code, out.String(), errb.String()
}

// namedTasks makes the background task ids of the test's sessions
// task-1, task-2, ..., instead of random ids.
func namedTasks(t *testing.T) {
	t.Helper()
	var n atomic.Int64
	testTaskIDs = func() string { return fmt.Sprintf("task-%d", n.Add(1)) }
	t.Cleanup(func() { testTaskIDs = nil })
}

// parkWorld is a workspace with a background subagent, writer, and a
// user's configuration whose ask rule makes writer's write_file of
// /note.txt wait for approval; extra is more of that configuration.
func parkWorld(t *testing.T, extra string) *world {
	t.Helper()
	namedTasks(t)
	w := newWorld(t)
	agents := filepath.Join(w.dir, ".deepagents", "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agents, "writer.md"), []byte("---\nname: writer\ndescription: Writes notes in the background.\nbackground: true\n---\nYou write notes.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(w.home, ".deepagents"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.home, ".deepagents", "config.yaml"), []byte("permissions:\n  ask: [\"write_file(/note.txt)\"]\n"+extra), 0o600); err != nil {
		t.Fatal(err)
	}
	return w
}

// parkScript is the first run's: the main agent starts writer, whose
// write_file asks, and waits for it, which returns when it parks.
const parkScript = `{"turns":[
	{"tool_calls":[{"id":"s","name":"start_async_task","args":{"description":"write the note","subagent_type":"writer"}}]},
	{"tool_calls":[{"id":"w","name":"wait_async_task","args":{"task_id":"task-1"}}],
	 "expect":{"last_message_contains":["task_id: task-1"]}},
	{"content":"the writer waits for your approval","expect":{"last_message_contains":["\"task_id\":\"task-1\"","\"status\":\"awaiting_approval\""]}},
	{"agent":"writer","tool_calls":[{"id":"wf","name":"write_file","args":{"file_path":"/note.txt","content":"hello from the writer\n"}}]}]}`

// resumeCommand is what the end of the first run says answers task-1.
const resumeCommand = "answer with: deepagents resume bg --task task-1 --decision approve (or reject:REASON)"

// park runs the first run of thread bg: it ends with task-1 waiting for
// approval, which stderr says, with the command that answers it.
func park(t *testing.T, w *world) {
	t.Helper()
	code, stdout, stderr := w.inProcess(w.runArgs(w.script(parkScript), "--thread", "bg", "go")...)
	if code != 0 {
		t.Fatalf("the first run: exit %d: %s\n%s", code, stderr, stdout)
	}
	line := ""
	for l := range strings.SplitSeq(stderr, "\n") {
		if strings.Contains(l, "background task task-1") {
			line = l
		}
	}
	for _, want := range []string{"deepagents: background task task-1 (writer: write the note) waits for approval of write_file", "/note.txt", resumeCommand} {
		if !strings.Contains(line, want) {
			t.Errorf("stderr's line for task-1 lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "now cancelled") {
		t.Errorf("the run's end cancelled the waiting task:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "note.txt")); err == nil {
		t.Errorf("note.txt was written before it was approved")
	}
}

// resumeTaskArgs is deepagents resume bg --task task-1 with decision, on
// script.
func (w *world) resumeTaskArgs(script, decision string) []string {
	return []string{"resume", "bg", "--task", "task-1", "--decision", decision, "--model", "replay:" + script, "--dir", w.dir, "--db", w.db, "--output", "jsonl"}
}

// toolResultOf is the result of the tool call id in a jsonl run's output.
func toolResultOf(t *testing.T, stdout, id string) string {
	t.Helper()
	e, ok := toolResultEvents(t, stdout)[id]
	if !ok {
		t.Fatalf("no tool result for call %s in:\n%s", id, stdout)
	}
	return fmt.Sprint(e.Content)
}

// run ends with the task parked and says how to answer it; resume --task
// approve runs the subagent's write and the main agent's turn collects
// the task's result, status success.
func TestBackgroundApprovalApprovedByResume(t *testing.T) {
	w := parkWorld(t, "")
	park(t, w)

	s := w.script(`{"turns":[
		{"tool_calls":[{"id":"w2","name":"wait_async_task","args":{"task_id":"task-1"}}],
		 "expect":{"last_message_contains":["The user answered the request for approval of background task task-1"]}},
		{"content":"the note is written","expect":{"last_message_contains":["\"status\":\"success\"","note written"]}},
		{"agent":"writer","content":"note written","expect":{"last_message_contains":["/note.txt"]}}]}`)
	code, stdout, stderr := w.inProcess(w.resumeTaskArgs(s, "approve")...)
	if code != 0 {
		t.Fatalf("resume --task: exit %d: %s\n%s", code, stderr, stdout)
	}
	if b, err := os.ReadFile(filepath.Join(w.dir, "note.txt")); err != nil || string(b) != "hello from the writer\n" {
		t.Errorf("note.txt: %q, %v", b, err)
	}
	if r := toolResultOf(t, stdout, "w2"); !strings.Contains(r, `"status":"success"`) || !strings.Contains(r, "note written") {
		t.Errorf("wait_async_task after the approval: %s", r)
	}
	if strings.Contains(stderr, "waits for approval") {
		t.Errorf("resume's end lists a waiting task still:\n%s", stderr)
	}

	// The thread's record of the task says success to a later run.
	s = w.script(`{"turns":[
		{"tool_calls":[{"id":"c","name":"check_async_task","args":{"task_id":"task-1"}}]},
		{"content":"checked","expect":{"last_message_contains":["\"status\":\"success\""]}}]}`)
	if code, stdout, stderr := w.inProcess(w.runArgs(s, "--thread", "bg", "and?")...); code != 0 {
		t.Fatalf("the run after: exit %d: %s\n%s", code, stderr, stdout)
	}
	if code, _, stderr := w.inProcess(w.resumeTaskArgs(s, "approve")...); code != ExitUsage || !strings.Contains(stderr, "resume --task") {
		t.Errorf("answering a task that waits no more: exit %d, %s", code, stderr)
	}
}

// resume --task reject:REASON: the write does not run, and the reason
// reaches the subagent's model, whose answer the main agent collects.
func TestBackgroundApprovalRejectedByResume(t *testing.T) {
	w := parkWorld(t, "")
	park(t, w)

	s := w.script(`{"turns":[
		{"tool_calls":[{"id":"w2","name":"wait_async_task","args":{"task_id":"task-1"}}]},
		{"content":"the writer was told no","expect":{"last_message_contains":["\"status\":\"success\"","I did not write it"]}},
		{"agent":"writer","content":"I did not write it","expect":{"last_message_contains":["not in this repository"]}}]}`)
	code, stdout, stderr := w.inProcess(w.resumeTaskArgs(s, "reject:not in this repository")...)
	if code != 0 {
		t.Fatalf("resume --task reject: exit %d: %s\n%s", code, stderr, stdout)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "note.txt")); err == nil {
		t.Errorf("note.txt was written though rejected")
	}
	if r := toolResultOf(t, stdout, "w2"); !strings.Contains(r, "I did not write it") {
		t.Errorf("wait_async_task after the rejection: %s", r)
	}
}

// A headless run with background_approval_wait denies a waiting task
// once it has waited that long: the main agent reads status denied, and
// the write does not run.
func TestBackgroundApprovalDeniedHeadless(t *testing.T) {
	w := parkWorld(t, "background_approval_wait: 1ms\n")
	// The first wait returns when the task parks (or is denied already),
	// the second waits through the park until the denial.
	s := w.script(`{"turns":[
		{"tool_calls":[{"id":"s","name":"start_async_task","args":{"description":"write the note","subagent_type":"writer"}}]},
		{"tool_calls":[{"id":"w","name":"wait_async_task","args":{"task_id":"task-1"}}]},
		{"tool_calls":[{"id":"w2","name":"wait_async_task","args":{"task_id":"task-1"}}]},
		{"tool_calls":[{"id":"c","name":"check_async_task","args":{"task_id":"task-1"}}],"expect":{"last_message_contains":["\"status\":\"denied\""]}},
		{"content":"nobody approved it","expect":{"last_message_contains":["\"status\":\"denied\"","nobody answered"]}},
		{"agent":"writer","tool_calls":[{"id":"wf","name":"write_file","args":{"file_path":"/note.txt","content":"hello\n"}}]}]}`)
	code, stdout, stderr := w.inProcess(w.runArgs(s, "--thread", "bg", "go")...)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	if r := toolResultOf(t, stdout, "c"); !strings.Contains(r, `"status":"denied"`) {
		t.Errorf("check_async_task: %s", r)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "note.txt")); err == nil {
		t.Errorf("note.txt was written though denied")
	}
}

// The first process ends with the task parked and nobody answering (as
// one killed would): a later process's run reads the task as waiting,
// not lost, and lists it again; a third answers it.
func TestBackgroundApprovalAcrossProcesses(t *testing.T) {
	w := parkWorld(t, "")
	park(t, w)

	s := w.script(`{"turns":[
		{"tool_calls":[{"id":"c","name":"check_async_task","args":{"task_id":"task-1"}}]},
		{"content":"it still waits","expect":{"last_message_contains":["\"status\":\"awaiting_approval\""]}}]}`)
	code, stdout, stderr := w.inProcess(w.runArgs(s, "--thread", "bg", "and now?")...)
	if code != 0 {
		t.Fatalf("the second run: exit %d: %s\n%s", code, stderr, stdout)
	}
	if r := toolResultOf(t, stdout, "c"); strings.Contains(r, "lost") {
		t.Errorf("check_async_task in a new process: %s", r)
	}
	if !strings.Contains(stderr, resumeCommand) {
		t.Errorf("the second run's end does not list the waiting task:\n%s", stderr)
	}

	s = w.script(`{"turns":[
		{"tool_calls":[{"id":"w2","name":"wait_async_task","args":{"task_id":"task-1"}}]},
		{"content":"done","expect":{"last_message_contains":["\"status\":\"success\""]}},
		{"agent":"writer","content":"note written"}]}`)
	if code, stdout, stderr := w.inProcess(w.resumeTaskArgs(s, "approve")...); code != 0 {
		t.Fatalf("resume --task in a third process: exit %d: %s\n%s", code, stderr, stdout)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "note.txt")); err != nil {
		t.Errorf("note.txt: %v", err)
	}
}

// Two decisions for a request of one call fail before anything runs, and
// the task still waits: the right answer then goes through.
func TestBackgroundApprovalResumeWrongCount(t *testing.T) {
	w := parkWorld(t, "")
	park(t, w)
	none := w.script(`{"turns":[]}`)
	code, _, stderr := w.inProcess(append(w.resumeTaskArgs(none, "approve"), "--decision", "approve")...)
	if code == 0 || !strings.Contains(stderr, "resume --task") {
		t.Errorf("two decisions for one request: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "background task task-1 (writer") || !strings.Contains(stderr, "--task task-1 --decision approve (or reject:REASON)") {
		t.Errorf("a wrong answer does not repeat what waits and how to answer it: %s", stderr)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "note.txt")); err == nil {
		t.Errorf("note.txt was written by a wrong answer")
	}
	s := w.script(`{"turns":[
		{"tool_calls":[{"id":"w2","name":"wait_async_task","args":{"task_id":"task-1"}}]},
		{"content":"done","expect":{"last_message_contains":["\"status\":\"success\""]}},
		{"agent":"writer","content":"note written"}]}`)
	if code, stdout, stderr := w.inProcess(w.resumeTaskArgs(s, "approve")...); code != 0 {
		t.Fatalf("the task no longer waits after a wrong answer: exit %d: %s\n%s", code, stderr, stdout)
	}
}

// envChildMain makes the test binary, run again as a child, the CLI: its
// arguments are the value, a JSON list. The child is a process of the CLI
// as the binary is (Main), with the background task ids task-1, task-2,
// ..., which a script can name.
const envChildMain = "DEEPAGENTS_TEST_CHILD_MAIN"

// TestChildMain is the child's part; it runs only as a child.
func TestChildMain(t *testing.T) {
	raw := os.Getenv(envChildMain)
	if raw == "" {
		t.Skip("run as a child of TestBackgroundApprovalKilledWhileWaiting")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		t.Fatal(err)
	}
	namedTasks(t)
	os.Exit(Main(args, Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}))
}

// childMain is the command of a child running the CLI with args.
func (w *world) childMain(args ...string) *exec.Cmd {
	raw, err := json.Marshal(args)
	if err != nil {
		w.t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildMain$")
	cmd.Env = append(w.env(), envChildMain+"="+string(raw))
	return cmd
}

// kill -9 while a background task waits for approval, in a process of
// the CLI: the main agent waits on the parked task when the process is
// killed; after that, resume --task in a new process approves it, the
// subagent's write runs and the main agent's wait reads success.
func TestBackgroundApprovalKilledWhileWaiting(t *testing.T) {
	w := parkWorld(t, "")
	s := w.script(`{"turns":[
		{"tool_calls":[{"id":"s","name":"start_async_task","args":{"description":"write the note","subagent_type":"writer"}}]},
		{"tool_calls":[{"id":"w","name":"wait_async_task","args":{"task_id":"task-1"}}]},
		{"tool_calls":[{"id":"w3","name":"wait_async_task","args":{"task_id":"task-1","timeout":600}}],
		 "expect":{"last_message_contains":["\"status\":\"awaiting_approval\""]}},
		{"content":"never reached"},
		{"agent":"writer","tool_calls":[{"id":"wf","name":"write_file","args":{"file_path":"/note.txt","content":"hello from the writer\n"}}]}]}`)
	cmd := w.childMain(w.runArgs(s, "--thread", "bg", "go")...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waiting := false
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e deepagents.Event
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == deepagents.EventToolCall && e.ToolCallID == "w3" {
			waiting = true // the task parked (w said so), and the main agent now waits on it
			break
		}
	}
	cmd.Process.Signal(syscall.SIGKILL) //nolint:errcheck // it may have died already: the test says so below
	go io.Copy(io.Discard, stdout)      //nolint:errcheck // drained
	cmd.Wait()                          //nolint:errcheck // killed
	if !waiting {
		t.Fatal("the run never came to wait on the parked task")
	}
	if _, err := os.Stat(filepath.Join(w.dir, "note.txt")); err == nil {
		t.Fatal("note.txt was written before it was approved")
	}

	r := w.script(`{"turns":[
		{"tool_calls":[{"id":"w4","name":"wait_async_task","args":{"task_id":"task-1"}}]},
		{"content":"the note is written","expect":{"last_message_contains":["\"status\":\"success\"","note written"]}},
		{"agent":"writer","content":"note written","expect":{"last_message_contains":["/note.txt"]}}]}`)
	resume := w.childMain(w.resumeTaskArgs(r, "approve")...)
	var out, stderr bytes.Buffer
	resume.Stdout, resume.Stderr = &out, &stderr
	if err := resume.Run(); err != nil {
		t.Fatalf("resume --task after kill -9: %v: %s\n%s", err, stderr.String(), out.String())
	}
	if b, err := os.ReadFile(filepath.Join(w.dir, "note.txt")); err != nil || string(b) != "hello from the writer\n" {
		t.Errorf("note.txt after the approval: %q, %v", b, err)
	}
	if res := toolResultOf(t, out.String(), "w4"); !strings.Contains(res, `"status":"success"`) {
		t.Errorf("the main agent's wait after the restart: %s", res)
	}
}
