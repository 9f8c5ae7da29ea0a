package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"

	"github.com/deepagents-go/deepagents/agent"
)

// loopScript is a script of one call a turn, then an answer.
func loopScript(calls ...string) string {
	var turns []string
	for i, c := range calls {
		name, args, _ := strings.Cut(c, " ")
		turns = append(turns, fmt.Sprintf(`{"tool_calls":[{"id":"c%d","name":%q,"args":%s}]}`, i, name, args))
	}
	return `{"turns":[` + strings.Join(append(turns, `{"content":"done"}`), ",") + `]}`
}

func times(n int, calls ...string) []string {
	var out []string
	for range n {
		out = append(out, calls...)
	}
	return out
}

// The loop guard through the real CLI, with its defaults: it nudges the
// model in the result of the call that repeats, never for polling, and
// ends a run that keeps on with exit status 4 and the code loop.
func TestLoopGuardThroughCLI(t *testing.T) {
	read := `read_file {"file_path":"/a.txt"}`
	tests := []struct {
		name  string
		calls []string
		agent bool   // a background subagent, for its polling tools
		note  string // in the result of the call that gets it; "" for none
		at    int    // that call
	}{
		{"three identical calls", times(3, read), false, "called read_file 3 times", 2},
		{"ping-pong", times(3, read, `ls {"path":"/"}`), false, "take turns between the same two", 4},
		{"polling a background task", times(6, `list_async_tasks {}`), true, "", 0},
		{"no-op writes", times(3, `write_file {"file_path":"/b.txt","content":"same\n"}`), false, "changes nothing", 2},
		{"the same error", []string{`read_file {"file_path":"/no1"}`, `read_file {"file_path":"/no2"}`, `read_file {"file_path":"/no3"}`}, false, "failed 3 times with this same error", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			os.WriteFile(filepath.Join(w.dir, "a.txt"), []byte("alpha\n"), 0o644)
			if tt.agent {
				agents := filepath.Join(w.dir, ".deepagents", "agents")
				os.MkdirAll(agents, 0o755)
				os.WriteFile(filepath.Join(agents, "digger.md"), []byte("---\nname: digger\ndescription: Digs.\nbackground: true\n---\nYou dig.\n"), 0o644)
			}
			code, stdout, stderr := w.run(w.runArgs(w.script(loopScript(tt.calls...)), "go")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			results := toolResultEvents(t, stdout)
			for i := range tt.calls {
				got := results[fmt.Sprint("c", i)].Content
				has := strings.Contains(got, "\n\nNote: ")
				if want := tt.note != "" && i == tt.at; has != want || want && !strings.Contains(got, tt.note) {
					t.Errorf("call %d: result %q (a note wanted: %v, saying %q)", i, got, want, tt.note)
				}
			}
		})
	}
}

func TestLoopGuardStopsTheRun(t *testing.T) {
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.dir, "a.txt"), []byte("alpha\n"), 0o644)
	s := w.script(loopScript(times(12, `read_file {"file_path":"/a.txt"}`)...))
	code, stdout, stderr := w.run(w.runArgs(s, "go")...)
	if code != ExitStopped {
		t.Fatalf("exit %d, want %d: %s", code, ExitStopped, stderr)
	}
	var end deepagents.Event
	calls := 0
	for _, e := range events(t, stdout) {
		switch e.Type {
		case deepagents.EventRunEnd:
			end = e
		case deepagents.EventToolResult:
			calls++
		}
	}
	if end.Status != deepagents.StatusCompleted || end.EndCode != agent.EndLoop || !strings.Contains(end.EndReason, "read_file repeated 8 times") {
		t.Errorf("run_end %+v", end)
	}
	if calls != 8 {
		t.Errorf("%d calls ran, want the run to end at the eighth", calls)
	}
	// The text output says why, and the thread keeps the calls.
	code, _, stderr = w.run("run", "--model", "replay:"+s, "--dir", w.dir, "--db", w.db, "go")
	if code != ExitStopped || !strings.Contains(stderr, "deepagents: stopped (loop): read_file repeated 8 times") {
		t.Errorf("text output: exit %d, %q", code, stderr)
	}

	// The user's configuration turns it off; a workspace's cannot.
	os.MkdirAll(filepath.Join(w.home, ".deepagents"), 0o755)
	os.WriteFile(filepath.Join(w.home, ".deepagents", "config.yaml"), []byte("loops:\n  off: true\n"), 0o644)
	if code, stdout, stderr := w.run(w.runArgs(s, "go")...); code != 0 || strings.Contains(stdout, `Note: `) {
		t.Errorf("loops off: exit %d, %s", code, stderr)
	}
	os.WriteFile(filepath.Join(w.home, ".deepagents", "config.yaml"), []byte("loops:\n  nudge: 5\n  stop: 4\n"), 0o644)
	if code, _, stderr := w.run(w.runArgs(s, "go")...); code != ExitUsage || !strings.Contains(stderr, "loops: Stop (4) must be above Nudge (5)") {
		t.Errorf("a bad configuration: exit %d, %q", code, stderr)
	}
	os.Remove(filepath.Join(w.home, ".deepagents", "config.yaml"))
	os.MkdirAll(filepath.Join(w.dir, ".deepagents"), 0o755)
	os.WriteFile(filepath.Join(w.dir, ".deepagents", "config.yaml"), []byte("loops:\n  off: true\n"), 0o644)
	if code, _, stderr := w.run(w.runArgs(s, "go")...); code != ExitStopped || !strings.Contains(stderr, "rewind, loops, verify, budget, local_context and background_approval_wait in a workspace's configuration are ignored") {
		t.Errorf("a workspace's loops: exit %d, %q", code, stderr)
	}
}

// With verify in the user's configuration, a premature answer with open
// todos gets one verification turn, then the answer stands.
func TestVerifyThroughCLI(t *testing.T) {
	w := newWorld(t)
	os.MkdirAll(filepath.Join(w.home, ".deepagents"), 0o755)
	os.WriteFile(filepath.Join(w.home, ".deepagents", "config.yaml"), []byte("verify: {passes: 1}\n"), 0o644)
	s := w.script(`{"turns":[
		{"tool_calls":[{"id":"p","name":"write_todos","args":{"todos":[{"content":"fix the bug","status":"completed"},{"content":"run the tests","status":"pending"}]}}]},
		{"content":"done"},
		{"content":"The tests are left: no command runs here.","expect":{"last_message_contains":["Your plan still has open items: \"run the tests\" (pending)"]}}]}`)
	code, stdout, stderr := w.run(w.runArgs(s, "go")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, `"text":"The tests are left: no command runs here."`) {
		t.Errorf("the last answer is not the run's: %s", stdout)
	}
	// A rubric has the answer graded; a FAIL sends the agent back, and its
	// one pass spent, the next answer stands ungraded.
	os.WriteFile(filepath.Join(w.home, ".deepagents", "config.yaml"), []byte("verify: {rubric: \"Say which file changed.\"}\n"), 0o644)
	graded := w.script(`{"turns":[{"content":"done"},
		{"agent":"grader","content":"FAIL\nIt does not say which file changed.","expect":{"last_message_contains":["<rubric>\nSay which file changed.\n</rubric>"]}},
		{"content":"Changed a.txt.","expect":{"last_message_contains":["It does not say which file changed."]}}]}`)
	code, stdout, stderr = w.run(w.runArgs(graded, "go")...)
	if code != 0 || strings.Count(stdout, `"name":"grade"`) != 1 || !strings.Contains(stdout, `"text":"Changed a.txt."`) {
		t.Errorf("rubric: exit %d: %s %s", code, stderr, stdout)
	}
	// Without it, the first answer ends the run (the script's third turn
	// is never asked for).
	os.Remove(filepath.Join(w.home, ".deepagents", "config.yaml"))
	if code, stdout, _ := w.run(w.runArgs(s, "go")...); code != 0 || strings.Contains(stdout, "The tests are left") {
		t.Errorf("verify off: exit %d", code)
	}
}

// With local_context in the user's configuration, every request of the
// thread carries the same section, which says what the workspace is: a Go
// module, a Node package, a Python project, an empty folder.
func TestLocalContextThroughCLI(t *testing.T) {
	for name, c := range map[string]struct {
		files   map[string]string
		section []string
	}{
		"go":     {map[string]string{"go.mod": "module x\n\ngo 1.24\n", "cmd/main.go": "package main\n"}, []string{"- Top level: cmd/ ", " go.mod\n", "- Build files: go.mod (Go module)", "`go build ./... && go test ./...`"}},
		"node":   {map[string]string{"package.json": `{"scripts":{"test":"vitest"}}`, "src/a.js": ""}, []string{"package.json (Node package)", "`npm test`"}},
		"python": {map[string]string{"pyproject.toml": "[tool.pytest.ini_options]\n", "x/__init__.py": ""}, []string{"pyproject.toml (Python project)", "`python3 -m pytest`"}},
		"none":   {nil, []string{"Worked out when this conversation started"}}, // no build file, no check
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			os.MkdirAll(filepath.Join(w.home, ".deepagents"), 0o755)
			os.WriteFile(filepath.Join(w.home, ".deepagents", "config.yaml"), []byte("local_context: true\n"), 0o644)
			for p, body := range c.files {
				os.MkdirAll(filepath.Dir(filepath.Join(w.dir, p)), 0o755)
				os.WriteFile(filepath.Join(w.dir, p), []byte(body), 0o644)
			}
			want := map[string]any{"system_contains": append([]string{"## The workspace"}, c.section...), "system_exclude": []string{"new.txt"}}
			if c.files == nil {
				want["system_exclude"] = []string{"new.txt", "Build files", "The check"}
			}
			expect, _ := json.Marshal(want)
			// The second request, after a new file, carries the same
			// section: worked out once per thread.
			s := w.script(`{"turns":[{"tool_calls":[{"id":"w","name":"write_file","args":{"file_path":"/new.txt","content":"x"}}],"expect":` + string(expect) + `},
				{"content":"done","expect":` + string(expect) + `}]}`)
			if code, stdout, stderr := w.run(w.runArgs(s, "--auto-approve", "go")...); code != 0 {
				t.Fatalf("exit %d: %s %s", code, stderr, stdout)
			}
		})
	}
}

// run --goal gives the thread a goal, graded before the final answer; the
// thread keeps it for its later runs, and --goal "" removes it.
func TestGoalThroughCLI(t *testing.T) {
	w := newWorld(t)
	rubric := `"expect":{"last_message_contains":["<rubric>\nSay which file changed.\n</rubric>"]}`
	s := w.script(`{"turns":[{"content":"done"},
		{"agent":"grader","content":"FAIL\nIt does not say which file changed.",` + rubric + `},
		{"content":"Changed a.txt.","expect":{"last_message_contains":["It does not say which file changed."]}}]}`)
	code, stdout, stderr := w.run(w.runArgs(s, "--thread", "g1", "--goal", "Say which file changed.", "go")...)
	if code != 0 || strings.Count(stdout, `"name":"grade"`) != 1 || !strings.Contains(stdout, `"text":"Changed a.txt."`) {
		t.Fatalf("exit %d: %s %s", code, stderr, stdout)
	}
	// A script per run: each run is a process of its own.
	later := w.script(`{"turns":[{"content":"again"},{"agent":"grader","content":"PASS",` + rubric + `}]}`)
	if code, stdout, stderr := w.run(w.runArgs(later, "--thread", "g1", "go on")...); code != 0 || strings.Count(stdout, `"name":"grade"`) != 1 {
		t.Errorf("the thread's goal was not kept: exit %d: %s %s", code, stderr, stdout)
	}
	// deepagents -p takes it too.
	printed := w.script(`{"turns":[{"content":"done"},{"agent":"grader","content":"PASS","expect":{"last_message_contains":["<rubric>\nBe brief.\n</rubric>"]}}]}`)
	if code, stdout, stderr := w.run("--model", "replay:"+printed, "--dir", w.dir, "--db", w.db, "--output", "jsonl", "--goal", "Be brief.", "-p", "go"); code != 0 || strings.Count(stdout, `"name":"grade"`) != 1 {
		t.Errorf("-p --goal: exit %d: %s %s", code, stderr, stdout)
	}
	none := w.script(`{"turns":[{"content":"no goal"}]}`)
	if code, stdout, stderr := w.run(w.runArgs(none, "--thread", "g1", "--goal", "", "go on")...); code != 0 || strings.Contains(stdout, `"name":"grade"`) {
		t.Errorf("--goal \"\" kept the goal: exit %d: %s %s", code, stderr, stdout)
	}
}
