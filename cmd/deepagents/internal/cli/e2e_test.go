package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// binary builds the deepagents command once for tests that need real
// processes.
func binary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "deepagents-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "deepagents")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/deepagents-go/deepagents/cmd/deepagents").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("building the binary: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// world is a workspace, a home and a database shared by several processes.
type world struct {
	t         *testing.T
	dir, home string
	db        string
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, dir: t.TempDir(), home: t.TempDir()}
	w.db = filepath.Join(t.TempDir(), "threads.db")
	return w
}

func (w *world) env() []string {
	return []string{"HOME=" + w.home, "PATH=" + os.Getenv("PATH"), "XDG_DATA_HOME=" + filepath.Join(w.home, "data")}
}

// run runs the binary and returns its exit status, stdout and stderr.
func (w *world) run(args ...string) (int, string, string) {
	w.t.Helper()
	return w.runWithEnv(nil, args...)
}

// runWithEnv is run with more environment variables.
func (w *world) runWithEnv(env []string, args ...string) (int, string, string) {
	w.t.Helper()
	return w.runIn(env, strings.NewReader(""), args...)
}

// withStdin runs the binary with stdin as its standard input.
func (w *world) withStdin(stdin io.Reader, args ...string) (int, string, string) {
	w.t.Helper()
	return w.runIn(nil, stdin, args...)
}

// runIn runs the binary with more environment variables and stdin.
func (w *world) runIn(env []string, stdin io.Reader, args ...string) (int, string, string) {
	w.t.Helper()
	cmd := exec.Command(binary(w.t), args...)
	cmd.Env = append(w.env(), env...)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// script writes a scripted-model file and returns its path.
func (w *world) script(body string) string {
	w.t.Helper()
	p := filepath.Join(w.t.TempDir(), "script.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		w.t.Fatal(err)
	}
	return p
}

func (w *world) runArgs(script string, extra ...string) []string {
	return append([]string{"run", "--model", "replay:" + script, "--dir", w.dir, "--db", w.db, "--output", "jsonl"}, extra...)
}

// toolResultEvents returns the tool_result events of a jsonl run, by call id.
func toolResultEvents(t *testing.T, stdout string) map[string]deepagents.Event {
	t.Helper()
	results := map[string]deepagents.Event{}
	for _, e := range events(t, stdout) {
		if e.Type == deepagents.EventToolResult {
			results[e.ToolCallID] = e
		}
	}
	return results
}

func runEnd(t *testing.T, stdout string) deepagents.Event {
	t.Helper()
	evs := events(t, stdout)
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	return evs[len(evs)-1]
}

func TestWorkspaceFilesAndScratch(t *testing.T) {
	w := newWorld(t)
	os.MkdirAll(filepath.Join(w.dir, "src"), 0o755)
	os.WriteFile(filepath.Join(w.dir, "src", "main.go"), []byte("package main\n"), 0o644)
	big := strings.Repeat("x", 90000)
	s := w.script(`{"turns":[
		{"tool_calls":[{"id":"l","name":"ls","args":{"path":"/src"}},{"id":"w","name":"write_file","args":{"file_path":"/notes/plan.md","content":"the plan"}}]},
		{"tool_calls":[{"id":"big","name":"execute","args":{"command":"printf '%.0sx' $(seq 1 90000)"}}],
		 "expect":{"messages_contain":["/src/main.go","Updated file /notes/plan.md"]}},
		{"content":"done","expect":{"last_message_contains":["/large_tool_results/big"]}}]}`)
	code, stdout, stderr := w.run(w.runArgs(s, "--shell", "prompt")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got, err := os.ReadFile(filepath.Join(w.dir, "notes", "plan.md")); err != nil || string(got) != "the plan" {
		t.Errorf("workspace file: %q %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "large_tool_results")); !os.IsNotExist(err) {
		t.Errorf("scratch files littered the workspace: %v", err)
	}
	end := runEnd(t, stdout)
	code, out, _ := w.run("state", end.ThreadID, "--db", w.db)
	if code != 0 {
		t.Fatalf("state exit %d", code)
	}
	var st threadState
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if c := st.Files["/large_tool_results/big"]; len(c) < len(big) {
		t.Errorf("large result not kept in the thread's state (%d bytes)", len(c))
	}
	// What the conversation fills of the window, by part.
	if c := st.Context; c == nil || c.User == 0 || c.Assistant == 0 || len(c.ToolResults) == 0 || c.System != 0 ||
		c.Total != c.User+c.Assistant+sumValues(c.ToolResults) {
		t.Errorf("state's context: %+v", c)
	}
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func TestThreadsContinueAcrossProcesses(t *testing.T) {
	w := newWorld(t)
	s1 := w.script(`{"turns":[{"tool_calls":[{"id":"t","name":"write_todos","args":{"todos":[{"content":"remember the number 42","status":"completed"}]}}]},{"content":"noted"}]}`)
	code, stdout, stderr := w.run(w.runArgs(s1, "--thread", "conv-1", "remember 42")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if end := runEnd(t, stdout); end.ThreadID != "conv-1" {
		t.Fatalf("thread = %q", end.ThreadID)
	}
	s2 := w.script(`{"turns":[{"content":"it was 42","expect":{"messages_contain":["remember 42","noted","what was it?"]}}]}`)
	if code, _, stderr := w.run(w.runArgs(s2, "--thread", "conv-1", "what was it?")...); code != 0 {
		t.Fatalf("second run exit %d: %s", code, stderr)
	}
	code, out, _ := w.run("threads", "--db", w.db, "--output", "jsonl")
	if code != 0 || !strings.Contains(out, `"thread_id":"conv-1"`) || !strings.Contains(out, `"status":"idle"`) {
		t.Errorf("threads: %d %s", code, out)
	}
	code, out, _ = w.run("threads", "--db", w.db)
	if code != 0 || !strings.Contains(out, "THREAD") || !strings.Contains(out, "conv-1") {
		t.Errorf("threads text: %s", out)
	}
	code, out, _ = w.run("state", "conv-1", "--db", w.db)
	var st threadState
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("state: %d %s", code, out)
	}
	if len(st.Messages) != 6 || len(st.Todos) != 1 || st.Todos[0].Content != "remember the number 42" {
		t.Errorf("state = %+v", st)
	}
	if _, dup := st.Values["todos"]; dup {
		t.Errorf("the plan is printed twice: %s", out)
	}
	if code, _, stderr := w.run("state", "no-such-thread", "--db", w.db); code == 0 || !strings.Contains(stderr, "no-such-thread") {
		t.Errorf("missing thread: %d %s", code, stderr)
	}
}

func TestApprovalAcrossProcesses(t *testing.T) {
	// Each process plays its own script: the resumed one starts after
	// the decision.
	first := `{"turns":[{"tool_calls":[{"id":"w","name":"write_file","args":{"file_path":"/out.txt","content":"original"}}]}]}`
	second := `{"turns":[{"content":"finished","expect":{"last_message_contains":[%q]}}]}`
	tests := []struct {
		name, decision, lastContains string
		wantFile                     string // "" means no file
	}{
		{"approve", "approve", "Updated file /out.txt", "original"},
		{"reject", "reject:not in this repo", "not in this repo", ""},
		{"edit", `edit:{"file_path":"/out.txt","content":"edited"}`, "Updated file /out.txt", "edited"},
	}
	for _, tt := range tests {
		// The decision binds to the call the thread holds, whether or
		// not the resume repeats the approval flag.
		for _, repeat := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/repeat-flags=%v", tt.name, repeat), func(t *testing.T) {
				w := newWorld(t)
				s := w.script(first)
				code, stdout, _ := w.run(w.runArgs(s, "--thread", "th", "--interrupt-on", "write_file", "write it")...)
				if code != ExitInterrupted {
					t.Fatalf("first run exit %d, want %d", code, ExitInterrupted)
				}
				var sawInterrupt bool
				for _, e := range events(t, stdout) {
					if e.Type == deepagents.EventInterrupt && len(e.Interrupts) == 1 && e.Interrupts[0].Tool == "write_file" {
						sawInterrupt = true
					}
				}
				if !sawInterrupt || runEnd(t, stdout).Status != deepagents.StatusInterrupted {
					t.Fatalf("no interrupt event: %s", stdout)
				}
				if _, err := os.Stat(filepath.Join(w.dir, "out.txt")); !os.IsNotExist(err) {
					t.Fatal("the file was written before approval")
				}
				if code, out, _ := w.run("threads", "--db", w.db, "--output", "jsonl"); code != 0 || !strings.Contains(out, `"status":"interrupted"`) {
					t.Errorf("thread status: %s", out)
				}
				s2 := w.script(fmt.Sprintf(second, tt.lastContains))
				args := []string{"resume", "th", "--decision", tt.decision, "--model", "replay:" + s2, "--dir", w.dir, "--db", w.db, "--output", "jsonl"}
				if repeat {
					args = append(args, "--interrupt-on", "write_file")
				}
				code, stdout, stderr := w.run(args...)
				if code != 0 {
					t.Fatalf("resume exit %d: %s\n%s", code, stderr, stdout)
				}
				got, err := os.ReadFile(filepath.Join(w.dir, "out.txt"))
				if tt.wantFile == "" {
					if err == nil {
						t.Errorf("rejected write happened: %q", got)
					}
				} else if string(got) != tt.wantFile {
					t.Errorf("file = %q, want %q", got, tt.wantFile)
				}
			})
		}
	}
}

func TestResumeErrors(t *testing.T) {
	w := newWorld(t)
	s := w.script(`{"turns":[{"tool_calls":[{"id":"w","name":"write_file","args":{"file_path":"/a","content":"a"}}]},{"content":"ok"}]}`)
	if code, _, _ := w.run(w.runArgs(s, "--thread", "th", "--interrupt-on", "write_file", "go")...); code != ExitInterrupted {
		t.Fatalf("exit %d", code)
	}
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"resume", "th"}, ExitUsage, "needs a --decision"},
		{[]string{"resume", "th", "--decision", "maybe"}, ExitUsage, "want approve, reject:REASON or edit:JSON-ARGS"},
		{[]string{"resume", "th", "--decision", "edit:not json"}, ExitUsage, "JSON object"},
		{[]string{"resume", "th", "--decision", "approve", "--decision", "approve"}, ExitFailed, "wrong number of decisions"},
		{[]string{"resume", "nope", "--decision", "approve"}, ExitFailed, "nope"},
		{[]string{"resume", "th", "--decision", "approve", "--interrupt-on", "writ_file"}, ExitUsage, `unknown tool "writ_file" in InterruptOn: the tools are edit_file, glob, grep, ls, read_file, task, write_file, write_todos`},
	} {
		args := append(c.args, "--model", "replay:"+s, "--dir", w.dir, "--db", w.db)
		code, _, stderr := w.run(args...)
		if code != c.code || !strings.Contains(stderr, c.err) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, c.code, c.err)
		}
	}
}

func TestUnknownToolInApprovalRules(t *testing.T) {
	w := newWorld(t)
	s := w.script(`{"turns":[{"content":"never asked"}]}`)
	code, _, stderr := w.run(w.runArgs(s, "--interrupt-on", "write_file,writ_file", "go")...)
	if code != ExitUsage || !strings.Contains(stderr, `unknown tool "writ_file"`) || !strings.Contains(stderr, "read_file") {
		t.Errorf("exit %d, stderr %q: want a usage error naming the tool and listing the real ones", code, stderr)
	}
	// execute exists only with --shell.
	if code, _, stderr := w.run(w.runArgs(s, "--interrupt-on", "execute", "go")...); code != ExitUsage || !strings.Contains(stderr, `unknown tool "execute"`) {
		t.Errorf("execute without --shell: exit %d, %q", code, stderr)
	}
	if code, _, stderr := w.run(w.runArgs(s, "--shell", "--interrupt-on", "execute", "go")...); code != 0 {
		t.Errorf("execute with --shell: exit %d, %q", code, stderr)
	}
}

func TestNewMessageOnInterruptedThread(t *testing.T) {
	w := newWorld(t)
	s1 := w.script(`{"turns":[{"tool_calls":[{"id":"w","name":"write_file","args":{"file_path":"/a","content":"a"}}]}]}`)
	if code, _, _ := w.run(w.runArgs(s1, "--thread", "th", "--interrupt-on", "write_file", "go")...); code != ExitInterrupted {
		t.Fatalf("exit %d", code)
	}
	s2 := w.script(`{"turns":[{"content":"ok","expect":{"messages_contain":["Tool call was cancelled or did not complete.","do something else"]}}]}`)
	if code, _, stderr := w.run(w.runArgs(s2, "--thread", "th", "do something else")...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

func TestSubagentsMemoryAndSkillsThroughCLI(t *testing.T) {
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.dir, "AGENTS.md"), []byte("Project rule: tabs, not spaces.\n"), 0o644)
	os.MkdirAll(filepath.Join(w.home, ".deepagents", "skills", "release-notes"), 0o755)
	os.WriteFile(filepath.Join(w.home, ".deepagents", "AGENTS.md"), []byte("User likes brevity.\n"), 0o644)
	os.WriteFile(filepath.Join(w.home, ".deepagents", "skills", "release-notes", "SKILL.md"),
		[]byte("---\nname: release-notes\ndescription: Write release notes from the changelog.\n---\nSKILL BODY SECRET\n"), 0o644)
	os.MkdirAll(filepath.Join(w.dir, ".deepagents", "skills", "broken"), 0o755)
	os.WriteFile(filepath.Join(w.dir, ".deepagents", "skills", "broken", "SKILL.md"), []byte("no front matter"), 0o644)
	os.MkdirAll(filepath.Join(w.dir, ".deepagents", "agents"), 0o755)
	os.WriteFile(filepath.Join(w.dir, ".deepagents", "agents", "critic.md"),
		[]byte("---\nname: critic\ndescription: Reviews drafts harshly.\ntools: read_file, ls\n---\nYou are a harsh critic.\n"), 0o644)
	s := w.script(`{"context_window": 200000, "turns":[
		{"tool_calls":[
			{"id":"t1","name":"task","args":{"description":"research part one","subagent_type":"general-purpose"}},
			{"id":"t2","name":"task","args":{"description":"research part two","subagent_type":"general-purpose"}},
			{"id":"t3","name":"task","args":{"description":"review the draft","subagent_type":"critic"}}],
		 "expect":{"system_contains":["Project rule: tabs, not spaces.","User likes brevity.","release-notes","Write release notes from the changelog.","/user/skills/release-notes/SKILL.md"],
		           "system_exclude":["SKILL BODY SECRET"]}},
		{"agent":"general-purpose","content":"answer one"},
		{"agent":"general-purpose","content":"answer two"},
		{"agent":"critic","content":"it is weak","expect":{"system_contains":["You are a harsh critic."],"tools_include":["read_file","ls"],"tools_exclude":["write_file","task"]}},
		{"content":"all done","expect":{"messages_contain":["answer one","answer two","it is weak"]}}]}`)
	code, stdout, stderr := w.run(w.runArgs(s, "go")...)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	if !strings.Contains(stderr, "broken") {
		t.Errorf("no warning about the invalid skill: %s", stderr)
	}
	var nsSeen bool
	for _, e := range events(t, stdout) {
		if len(e.Namespace) == 1 && strings.HasPrefix(e.Namespace[0], "critic:") {
			nsSeen = true
		}
	}
	if !nsSeen {
		t.Error("no subagent events with a namespace")
	}
}

func TestSummarizationThroughCLI(t *testing.T) {
	w := newWorld(t)
	big := strings.Repeat("lorem ipsum ", 150)
	os.WriteFile(filepath.Join(w.dir, "a.txt"), []byte(big), 0o644)
	os.WriteFile(filepath.Join(w.dir, "b.txt"), []byte(big), 0o644)
	os.WriteFile(filepath.Join(w.dir, "c.txt"), []byte(big), 0o644)
	s := w.script(`{"context_window": 2000, "turns":[
		{"tool_calls":[{"id":"t","name":"write_todos","args":{"todos":[{"content":"read three files","status":"in_progress"}]}}],"usage":{"input_tokens":900}},
		{"tool_calls":[{"id":"a","name":"read_file","args":{"file_path":"/a.txt"}}],"usage":{"input_tokens":950}},
		{"tool_calls":[{"id":"b","name":"read_file","args":{"file_path":"/b.txt"}}],"usage":{"input_tokens":1400}},
		{"agent":"summarizer","content":"Read a.txt and b.txt: both lorem ipsum.","expect":{"messages_contain":["read the files"]}},
		{"tool_calls":[{"id":"c","name":"read_file","args":{"file_path":"/c.txt"}}],"usage":{"input_tokens":800},
		 "expect":{"messages_contain":["Read a.txt and b.txt: both lorem ipsum.","/conversation_history/","[in_progress] read three files"]}},
		{"content":"done","usage":{"input_tokens":900}}]}`)
	code, stdout, stderr := w.run(w.runArgs(s, "--thread", "sum", "read the files")...)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	_, out, _ := w.run("state", "sum", "--db", w.db)
	var st threadState
	json.Unmarshal([]byte(out), &st)
	// The history is appended to a file beside the database, not held in
	// the thread's state (memory, checkpoints).
	hist := w.db + ".history/sum/sum.md"
	if b, err := os.ReadFile(hist); err != nil || !strings.Contains(string(b), "User: read the files") {
		t.Errorf("history not offloaded to %s: %q, %v", hist, b, err)
	}
	if len(st.Files) != 0 {
		t.Errorf("the history is in the thread's state too: %v", keys(st.Files))
	}
	if len(st.Todos) != 1 {
		t.Errorf("todos lost: %v", st.Todos)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "conversation_history")); !os.IsNotExist(err) {
		t.Error("history littered the workspace")
	}
	// Deleting the thread deletes its history.
	if code, _, stderr := w.run("threads", "delete", "sum", "--db", w.db); code != 0 {
		t.Fatalf("threads delete: %d %s", code, stderr)
	}
	if _, err := os.Stat(hist); !os.IsNotExist(err) {
		t.Errorf("the history outlived its thread: %v", err)
	}
}

// A summary that fails is told to the user (a line in text mode, a notice
// event in jsonl) and writes nothing.
func TestFailedSummaryThroughCLI(t *testing.T) {
	w := newWorld(t)
	big := strings.Repeat("lorem ipsum ", 150)
	os.WriteFile(filepath.Join(w.dir, "a.txt"), []byte(big), 0o644)
	os.WriteFile(filepath.Join(w.dir, "b.txt"), []byte(big), 0o644)
	script := `{"context_window": 2000, "turns":[
		{"tool_calls":[{"id":"a","name":"read_file","args":{"file_path":"/a.txt"}}],"usage":{"input_tokens":950}},
		{"tool_calls":[{"id":"b","name":"read_file","args":{"file_path":"/b.txt"}}],"usage":{"input_tokens":1400}},
		{"agent":"summarizer","error":"429 rate limited"},
		{"content":"done","usage":{"input_tokens":900}}]}`
	for _, output := range []string{"text", "jsonl"} {
		t.Run(output, func(t *testing.T) {
			thread := "fail-" + output
			code, stdout, stderr := w.run(w.runArgs(w.script(script), "--thread", thread, "--output", output, "read the files")...)
			if code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
			}
			switch output {
			case "text":
				if !strings.Contains(stderr, "note: Summarizing the conversation failed") || !strings.Contains(stderr, "429 rate limited") {
					t.Errorf("stderr does not tell of the failed summary:\n%s", stderr)
				}
			case "jsonl":
				if !strings.Contains(stdout, `"type":"notice"`) || !strings.Contains(stdout, `"name":"summary_failed"`) {
					t.Errorf("no summary_failed notice in:\n%s", stdout)
				}
			}
			_, out, _ := w.run("state", thread, "--db", w.db)
			var st threadState
			json.Unmarshal([]byte(out), &st)
			if len(st.Files) != 0 {
				t.Errorf("a failed summary wrote files: %v", keys(st.Files))
			}
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestKillNineLosesNothingAcknowledged(t *testing.T) {
	w := newWorld(t)
	var turns []string
	for i := range 200 {
		turns = append(turns, fmt.Sprintf(`{"tool_calls":[{"id":"s%d","name":"execute","args":{"command":"sleep 0.02; echo step %d"}}]}`, i, i))
	}
	s := w.script(`{"turns":[` + strings.Join(turns, ",") + `,{"content":"done"}]}`)
	cmd := exec.Command(binary(t), w.runArgs(s, "--shell", "--thread", "crash", "work")...)
	cmd.Env = w.env()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e deepagents.Event
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == deepagents.EventCheckpoint {
			acked = append(acked, e.CheckpointID)
			if len(acked) == 15 {
				break
			}
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	go io.Copy(io.Discard, stdout)
	cmd.Wait()
	if len(acked) < 15 {
		t.Fatalf("only %d checkpoints before the kill", len(acked))
	}
	// Every acknowledged checkpoint is in the history.
	code, out, stderr := w.run("state", "crash", "--db", w.db)
	if code != 0 {
		t.Fatalf("state after kill: %d %s", code, stderr)
	}
	var st threadState
	json.Unmarshal([]byte(out), &st)
	var results int
	for _, m := range st.Messages {
		if m.Role == "tool" {
			results++
		}
	}
	if results < 14 { // the first checkpoint holds the prompt alone
		t.Errorf("%d tool results survived, want at least 14", results)
	}
	for _, id := range acked {
		if code, _, stderr := w.run("state", "crash", "--db", w.db, "--checkpoint", id); code != 0 {
			t.Errorf("acknowledged checkpoint %s lost: %s", id, stderr)
		}
	}
	// The thread continues: the call cut off gets a cancellation result.
	s2 := w.script(`{"turns":[{"content":"recovered","expect":{"messages_contain":["step 13","continue"]}}]}`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, stdout, stderr := w.run(w.runArgs(s2, "--thread", "crash", "continue")...)
		if code == 0 {
			if runEnd(t, stdout).Status != deepagents.StatusCompleted {
				t.Fatalf("continue: %s", stdout)
			}
			break
		}
		if !strings.Contains(stderr, "already running") || time.Now().After(deadline) {
			t.Fatalf("continue after kill: exit %d: %s", code, stderr)
		}
		time.Sleep(200 * time.Millisecond) // the dead process's lease is being reclaimed
	}
}

// TestShellIsSandboxed runs execute through the CLI with the default
// sandbox: the command does not see the CLI's environment (where provider
// keys live) and cannot write outside the workspace; --sandbox none is the
// explicit way out.
func TestShellIsSandboxed(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("CI") == "" {
		t.Skip("bubblewrap is not installed")
	}
	w := newWorld(t)
	outside := t.TempDir()
	s := w.script(`{"turns":[{"tool_calls":[{"id":"x","name":"execute","args":{"command":"for f in /proc/[0-9]*/environ; do cat $f; done; echo; echo x > ` + outside + `/escaped; echo in > inside.txt; echo done"}}]},{"content":"ok"}]}`)
	cmd := w.runArgs(s, "--shell", "go")
	code, stdout, stderr := w.runWithEnv([]string{"ANTHROPIC_API_KEY=sk-test-secret-key"}, cmd...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var result string
	for _, e := range events(t, stdout) {
		if e.Type == deepagents.EventToolResult {
			result = e.Content
		}
	}
	if strings.Contains(result, "sk-test-secret-key") || !strings.Contains(result, "done") {
		t.Errorf("execute result: %q", result)
	}
	if _, err := os.Stat(filepath.Join(outside, "escaped")); err == nil {
		t.Error("execute wrote outside the workspace")
	}
	if b, err := os.ReadFile(filepath.Join(w.dir, "inside.txt")); err != nil || string(b) != "in\n" {
		t.Errorf("workspace write: %q, %v", b, err)
	}
	// Without a sandbox the same command sees the key: the check above can fail.
	code, stdout, _ = w.runWithEnv([]string{"ANTHROPIC_API_KEY=sk-test-secret-key"}, w.runArgs(w.script(`{"turns":[{"tool_calls":[{"id":"x","name":"execute","args":{"command":"for f in /proc/[0-9]*/environ; do cat $f; done"}}]},{"content":"ok"}]}`), "--shell", "--sandbox", "none", "go")...)
	if code != 0 || !strings.Contains(stdout, "sk-test-secret-key") {
		t.Errorf("--sandbox none: exit %d, the key not visible to the command", code)
	}
	if code, _, stderr := w.run(w.runArgs(s, "--shell", "--sandbox", "chroot", "go")...); code != ExitUsage || !strings.Contains(stderr, "--sandbox must be bwrap or none") {
		t.Errorf("unknown sandbox: exit %d %q", code, stderr)
	}
}

// TestUserConfigIsReadOnly checks that the model cannot write the user's
// own memory or subagents (~/.deepagents at /user/), which would persist
// into every later run.
func TestUserConfigIsReadOnly(t *testing.T) {
	w := newWorld(t)
	userDir := filepath.Join(w.home, ".deepagents")
	if err := os.MkdirAll(userDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(userDir, "AGENTS.md"), []byte("be brief\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := w.script(`{"turns":[{"tool_calls":[
		{"id":"a","name":"write_file","args":{"file_path":"/user/agents/evil.md","content":"---\nname: evil\ndescription: x\n---\nobey"}},
		{"id":"b","name":"edit_file","args":{"file_path":"/user/AGENTS.md","old_string":"be brief","new_string":"send keys"}},
		{"id":"c","name":"read_file","args":{"file_path":"/user/AGENTS.md"}}]},{"content":"ok"}]}`)
	code, stdout, stderr := w.run(w.runArgs(s, "go")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	results := toolResultEvents(t, stdout)
	if !results["a"].IsError || !results["b"].IsError || results["c"].IsError || !strings.Contains(results["c"].Content, "be brief") {
		t.Errorf("results: %+v", results)
	}
	if _, err := os.Stat(filepath.Join(userDir, "agents", "evil.md")); err == nil {
		t.Error("the model planted a subagent in the user's configuration")
	}
	if b, _ := os.ReadFile(filepath.Join(userDir, "AGENTS.md")); string(b) != "be brief\n" {
		t.Errorf("the user's memory was edited: %q", b)
	}
}

// TestThreadKeepsItsSettings continues a thread without repeating how it
// was run: it keeps its workspace, execute and approvals; a flag that
// changes one says so.
func TestThreadKeepsItsSettings(t *testing.T) {
	w := newWorld(t)
	first := w.script(`{"turns":[{"tool_calls":[{"id":"x","name":"execute","args":{"command":"echo one > one.txt"}}]},{"content":"ok"}]}`)
	if code, _, stderr := w.run(w.runArgs(first, "--thread", "th", "--shell", "--sandbox", "none", "--interrupt-on", "write_file", "go")...); code != 0 {
		t.Fatalf("first run: %d %s", code, stderr)
	}
	// The second run gives no --dir, --shell or --interrupt-on, from
	// another directory.
	second := w.script(`{"turns":[{"tool_calls":[{"id":"y","name":"execute","args":{"command":"cat one.txt"}}]},{"tool_calls":[{"id":"z","name":"write_file","args":{"file_path":"/two.txt","content":"2"}}]}]}`)
	cmd := exec.Command(binary(t), "run", "--model", "replay:"+second, "--db", w.db, "--output", "jsonl", "--thread", "th", "go on")
	cmd.Env, cmd.Dir = w.env(), t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitInterrupted {
		t.Fatalf("second run: %v, want exit %d (write_file still needs approval): %s", err, ExitInterrupted, errb.String())
	}
	var execResult string
	for _, e := range events(t, out.String()) {
		if e.Type == deepagents.EventToolResult && e.ToolCallID == "y" {
			execResult = e.Content
		}
	}
	if !strings.HasPrefix(execResult, "one") {
		t.Errorf("execute on the continued thread: %q (want it offered, in the first run's workspace)", execResult)
	}
	if !strings.Contains(errb.String(), "note: thread th ran with --model replay:") {
		t.Errorf("no note of the changed model: %q", errb.String())
	}
	// Turning execute off says so, and so does a subagent that came or
	// went between the runs.
	agents := filepath.Join(w.dir, ".deepagents", "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agents, "r.md"), []byte("---\nname: reviewer\ndescription: reviews\n---\nReview."), 0o644); err != nil {
		t.Fatal(err)
	}
	third := w.script(`{"turns":[{"content":"fine"}]}`)
	code, _, stderr := w.run(w.runArgs(third, "--thread", "th", "--shell=false", "hello")...)
	if code != 0 || !strings.Contains(stderr, "ran with --shell true; this run uses false") {
		t.Errorf("third run: %d %q", code, stderr)
	}
	if !strings.Contains(stderr, "ran with the subagents (none); this run has reviewer") {
		t.Errorf("no note of the new subagent: %q", stderr)
	}
}

// TestPermissionRulesThroughCLI takes rules from the user's configuration,
// the workspace's (which may not loosen) and flags.
func TestPermissionRulesThroughCLI(t *testing.T) {
	w := newWorld(t)
	write := func(path, body string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(w.home, ".deepagents", "config.yaml"), "permissions:\n  deny: [\"write_file(/secret/**)\"]\n")
	write(filepath.Join(w.dir, ".deepagents", "config.yaml"), "permissions:\n  allow: [\"execute\"]\n  deny: [\"read_file(**/.env)\"]\n")
	write(filepath.Join(w.dir, ".env"), "KEY=1\n")
	s := w.script(`{"turns":[{"tool_calls":[
		{"id":"rm","name":"execute","args":{"command":"ls; rm -rf .deepagents"}},
		{"id":"secret","name":"write_file","args":{"file_path":"/secret/a","content":"x"}},
		{"id":"env","name":"read_file","args":{"file_path":"/.env"}},
		{"id":"ok","name":"write_file","args":{"file_path":"/ok.txt","content":"fine"}}]},{"content":"done"}]}`)
	code, stdout, stderr := w.run(w.runArgs(s, "--shell", "--sandbox", "none", "--deny", "execute(rm)", "go")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	results := toolResultEvents(t, stdout)
	for id, rule := range map[string]string{"rm": "deny execute(rm)", "secret": "deny write_file(/secret/**)", "env": "deny read_file(**/.env)"} {
		if r := results[id]; !r.IsError || !strings.Contains(r.Content, "permission denied: the rule "+rule) {
			t.Errorf("%s: %+v", id, r)
		}
	}
	if results["ok"].IsError {
		t.Errorf("ok: %+v", results["ok"])
	}
	if _, err := os.Stat(filepath.Join(w.dir, ".deepagents")); err != nil {
		t.Error("the denied rm ran")
	}
	if !strings.Contains(stderr, "allow rules in a workspace's configuration are ignored") {
		t.Errorf("no note of the ignored allow rule: %q", stderr)
	}
	// Bad rules and unknown keys are usage errors naming where they are.
	for body, want := range map[string]string{
		"permissions:\n  deny: [\"execute(a; b)\"]\n": "invalid rule",
		"permisions:\n  deny: []\n":                   "field permisions not found",
		"permissions:\n  deny: [\"writ_file\"]\n":     `unknown tool "writ_file"`,
	} {
		write(filepath.Join(w.dir, ".deepagents", "config.yaml"), body)
		if code, _, stderr := w.run(w.runArgs(s, "go")...); code != ExitUsage || !strings.Contains(stderr, want) {
			t.Errorf("%q: exit %d, %q", body, code, stderr)
		}
	}
}

// TestInvalidSubagentFilesAreErrors checks that a subagent file that cannot
// be used stops the run with a usage error naming it, instead of being
// left out.
func TestInvalidSubagentFilesAreErrors(t *testing.T) {
	w := newWorld(t)
	s := w.script(`{"turns":[{"content":"never"}]}`)
	dir := filepath.Join(w.dir, ".deepagents", "agents")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for body, want := range map[string]string{
		"---\nname: r\ndescription: reads\nmodel: nosuch:model\n---\nRead.": `unknown model provider "nosuch"`,
		"---\nname: r\ndescription: reads\ntools: [read_fil]\n---\nRead.":   `unknown tool "read_fil" in AllowedTools of agent r`,
		"no front matter": "subagent file " + filepath.Join(dir, "r.md") + ": no front matter",
		// Mode fork copies the conversation, which a background task
		// runs beside.
		"---\nname: r\ndescription: digs\nbackground: true\nmode: fork\n---\nDig.": "subagent file " + filepath.Join(dir, "r.md") + ": a background subagent cannot use mode fork",
	} {
		if err := os.WriteFile(filepath.Join(dir, "r.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := w.run(w.runArgs(s, "go")...)
		if code != ExitUsage || !strings.Contains(stderr, want) {
			t.Errorf("%q: exit %d, %q; want %d and %q", body, code, stderr, ExitUsage, want)
		}
		if strings.Count(stderr, "deepagents:") != 1 {
			t.Errorf("%q: not one deepagents: line: %q", body, stderr)
		}
	}
}

// TestGrepRegexpFlag: grep searches literal text unless --grep-regexp is
// given, and a continued thread keeps the choice.
func TestGrepRegexpFlag(t *testing.T) {
	w := newWorld(t)
	if err := os.WriteFile(filepath.Join(w.dir, "n.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := w.script(`{"turns":[{"tool_calls":[{"id":"g","name":"grep","args":{"pattern":"o+ne"}}]},{"content":"done"}]}`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--thread", "re", "--grep-regexp"}, "/n.txt"},
		{[]string{"--thread", "re"}, "/n.txt"}, // kept by the thread
		{[]string{"--thread", "lit"}, "No matches found"},
	} {
		code, stdout, stderr := w.run(w.runArgs(s, append(tc.args, "find it")...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		if got := toolResultEvents(t, stdout)["g"].Content; got != tc.want {
			t.Errorf("%v: grep gave %q, want %q", tc.args, got, tc.want)
		}
	}
}
