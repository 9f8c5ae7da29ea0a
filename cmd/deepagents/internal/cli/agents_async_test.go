package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A subagent file with "background: true" gives the run the background
// tools; a project file may not define a remote subagent.
func TestBackgroundSubagentsThroughCLI(t *testing.T) {
	w := newWorld(t)
	agents := filepath.Join(w.dir, ".deepagents", "agents")
	os.MkdirAll(agents, 0o755)
	os.WriteFile(filepath.Join(agents, "digger.md"), []byte("---\nname: digger\ndescription: Digs in the background.\nbackground: true\n---\nYou dig.\n"), 0o644)
	s := w.script(`{"turns":[
		{"tool_calls":[{"id":"s","name":"start_async_task","args":{"description":"dig here","subagent_type":"digger"}}],
		 "expect":{"tools_include":["start_async_task","check_async_task","wait_async_task","update_async_task","cancel_async_task","list_async_tasks","task"],
		           "system_contains":["## Background tasks"]}},
		{"tool_calls":[{"id":"l","name":"list_async_tasks","args":{}}],"expect":{"messages_contain":["Launched async subagent. task_id: "]}},
		{"content":"started","expect":{"messages_contain":["1 tracked task(s):","agent: digger"]}}],
	 "defaults":{"digger":{"content":"dug"}}}`)
	if code, stdout, stderr := w.run(w.runArgs(s, "go")...); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}

	os.WriteFile(filepath.Join(agents, "far.md"), []byte("---\nname: far\ndescription: Far away.\nurl: http://127.0.0.1:1\ngraph_id: g\n---\n"), 0o644)
	if code, _, stderr := w.run(w.runArgs(s, "go")...); code != ExitUsage || !strings.Contains(stderr, "a remote subagent (url) can only be defined in") {
		t.Errorf("a project's remote subagent: exit %d, %q", code, stderr)
	}
}

// A run that ends while background tasks still run cancels them, says so
// on stderr, and records them cancelled: the next run of the thread lists
// them as cancelled, not lost.
func TestRunCancelsItsBackgroundTasks(t *testing.T) {
	w := newWorld(t)
	agents := filepath.Join(w.dir, ".deepagents", "agents")
	os.MkdirAll(agents, 0o755)
	os.WriteFile(filepath.Join(agents, "digger.md"), []byte("---\nname: digger\ndescription: Digs in the background.\nbackground: true\n---\nYou dig.\n"), 0o644)
	s := w.script(`{"turns":[
		{"tool_calls":[{"id":"s","name":"start_async_task","args":{"description":"dig here","subagent_type":"digger"}}]},
		{"content":"started; I will report later"}],
	 "defaults":{"digger":{"content":"dug","delay_ms":60000}}}`)
	start := time.Now()
	code, stdout, stderr := w.run(w.runArgs(s, "--thread", "bg", "go")...)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the run took %s: it waited for its background task", d)
	}
	if !regexp.MustCompile(`deepagents: warning: the run ended 1 background task\(s\) still running, now cancelled: [0-9a-f-]{36} \(digger\)`).MatchString(stderr) {
		t.Errorf("stderr does not name the task cancelled: %s", stderr)
	}
	s2 := w.script(`{"turns":[
		{"tool_calls":[{"id":"l","name":"list_async_tasks","args":{}}]},
		{"content":"listed","expect":{"messages_contain":["status: cancelled"],"messages_exclude":["status: lost"]}}]}`)
	if code, stdout, stderr := w.run(w.runArgs(s2, "--thread", "bg", "and?")...); code != 0 {
		t.Fatalf("the next run: exit %d: %s\n%s", code, stderr, stdout)
	}
}
