package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Scripts' expectations of the tools offered in plan mode, and out of it.
const (
	planTools  = `"expect":{"tools_include":["read_file","exit_plan_mode"],"tools_exclude":["write_file","edit_file"]}`
	writeTools = `"expect":{"tools_include":["write_file","edit_file"],"tools_exclude":["exit_plan_mode"]}`
)

// TestPermissionModeFlagAndConfig: --permission-mode, the user's
// permission_mode (not a workspace's), --auto-approve as auto, and a
// continued thread keeping its mode unless a flag changes it.
func TestPermissionModeFlagAndConfig(t *testing.T) {
	tests := []struct {
		name      string
		user, ws  string // permission_mode of ~/.deepagents/config.yaml and of the workspace's
		args      []string
		expect    string
		code      int
		stderr    string
		notStderr string
	}{
		{name: "flag plan", args: []string{"--permission-mode", "plan"}, expect: planTools},
		{name: "default ask", expect: writeTools},
		{name: "user config plan", user: "plan", expect: planTools},
		{name: "flag over user config", user: "plan", args: []string{"--permission-mode", "accept-edits"}, expect: writeTools},
		{name: "workspace config ignored", ws: "plan", expect: writeTools, stderr: "permission_mode, classifier_model, rewind, loops, verify, budget, local_context and background_approval_wait in a workspace's configuration are ignored"},
		{name: "auto-approve is bypass", user: "plan", args: []string{"--auto-approve"}, expect: writeTools},
		{name: "auto-approve is not auto", args: []string{"--auto-approve", "--permission-mode", "auto"}, code: 2, stderr: "contradict"},
		{name: "Claude Code's name for bypass", args: []string{"--permission-mode", "bypassPermissions", "--auto-approve"}, expect: writeTools},
		{name: "auto-approve and plan contradict", args: []string{"--auto-approve", "--permission-mode", "plan"}, code: 2, stderr: "contradict"},
		{name: "unknown mode", args: []string{"--permission-mode", "yolo"}, code: 2, stderr: "--permission-mode must be ask, accept-edits, plan, auto or bypass"},
		{name: "bad user config", user: "yolo", code: 2, stderr: "permission_mode"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			if tc.user != "" {
				os.MkdirAll(filepath.Join(w.home, ".deepagents"), 0o700)
				os.WriteFile(filepath.Join(w.home, ".deepagents", "config.yaml"), []byte("permission_mode: "+tc.user+"\n"), 0o600)
			}
			if tc.ws != "" {
				os.MkdirAll(filepath.Join(w.dir, ".deepagents"), 0o700)
				os.WriteFile(filepath.Join(w.dir, ".deepagents", "config.yaml"), []byte("permission_mode: "+tc.ws+"\n"), 0o600)
			}
			turn := `{"content":"ok"`
			if tc.expect != "" {
				turn += "," + tc.expect
			}
			script := w.script(`{"turns":[` + turn + `}]}`)
			code, _, stderr := w.run(w.runArgs(script, append(tc.args, "go")...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr)
			}
		})
	}
}

// TestThreadKeepsItsMode: a continued thread goes on in the mode it was
// left in, over the configuration's default, unless a flag changes it.
func TestThreadKeepsItsMode(t *testing.T) {
	w := newWorld(t)
	os.MkdirAll(filepath.Join(w.home, ".deepagents"), 0o700)
	os.WriteFile(filepath.Join(w.home, ".deepagents", "config.yaml"), []byte("permission_mode: accept-edits\n"), 0o600)
	steps := []struct {
		args   []string
		expect string
		stderr string
	}{
		{[]string{"--thread", "t1", "--permission-mode", "plan"}, planTools, ""},
		{[]string{"--thread", "t1"}, planTools, ""},
		{[]string{"--thread", "t1", "--permission-mode", "ask"}, writeTools, "ran with --permission-mode plan; this run uses ask"},
		{[]string{"--thread", "t1"}, writeTools, ""},
		{[]string{"--thread", "t2"}, writeTools, ""}, // a new thread: the configuration's
	}
	for i, st := range steps {
		script := w.script(`{"turns":[{"content":"ok",` + st.expect + `}]}`)
		code, _, stderr := w.run(w.runArgs(script, append(st.args, "go")...)...)
		if code != 0 || !strings.Contains(stderr, st.stderr) {
			t.Fatalf("step %d: exit %d, stderr:\n%s", i+1, code, stderr)
		}
	}
}

// TestShiftTabCyclesModes: the mode shows under the input at all times,
// and shift+tab cycles ask, accept edits, plan, auto.
func TestShiftTabCyclesModes(t *testing.T) {
	w := newWorld(t)
	script := w.script(`{"turns":[{"content":"Planned.",` + planTools + `}]}`)
	s := startTmux(t, w, "--model", "replay:"+script, "--dir", w.dir, "--db", w.db)
	s.waitFor("ask before edits and commands (shift+tab to cycle)")
	s.keys("BTab")
	s.waitFor("⏵⏵ accept edits on (shift+tab to cycle)")
	s.keys("BTab")
	s.waitFor("⏸ plan mode on")
	// The mode goes with the next message: the model is offered only
	// what reads.
	s.typeLine("plan something")
	scr := s.waitFor("Planned.")
	if !strings.Contains(scr, "plan mode on") {
		t.Errorf("the mode line went away:\n%s", scr)
	}
	s.keys("BTab")
	s.waitFor("⏵⏵⏵ auto")
	s.keys("BTab")
	s.waitFor("ask before edits and commands (shift+tab to cycle)")
}

// TestPlanApproveEdit: in plan mode the model reads, is refused a write
// it tries anyway, presents a plan that the user rejects with feedback,
// then a revised one, shown as Markdown, that the user approves with
// accept edits; the edit then runs without asking, and the thread, when
// continued, is still in accept edits.
func TestPlanApproveEdit(t *testing.T) {
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.dir, "notes.md"), []byte("line one\nline two\n"), 0o600)
	script := w.script(`{"turns":[
 {"tool_calls":[{"name":"read_file","args":{"file_path":"/notes.md"}}],` + planTools + `},
 {"tool_calls":[{"name":"write_file","args":{"file_path":"/sneaky.md","content":"x"}}]},
 {"tool_calls":[{"name":"exit_plan_mode","args":{"plan":"# First plan\n\n1. Edit notes.md"}}],"expect":{"last_message_contains":["not available in plan mode"]}},
 {"tool_calls":[{"name":"exit_plan_mode","args":{"plan":"# Revised plan\n\n1. Edit **notes.md**\n2. Add a test"}}],"expect":{"last_message_contains":["add a test"],"tools_exclude":["write_file"]}},
 {"tool_calls":[{"name":"edit_file","args":{"file_path":"/notes.md","old_string":"line two","new_string":"line 2, planned"}}],"expect":{"last_message_contains":["approved your plan","accept-edits"],"tools_include":["edit_file"]}},
 {"content":"Done as planned."}]}`)
	s := startTmux(t, w, "--permission-mode", "plan", "--model", "replay:"+script, "--dir", w.dir, "--db", w.db)
	s.waitFor("plan mode on")
	s.typeLine("improve the notes")
	s.waitFor("approve the plan?")
	scr := s.waitFor("[n] no, keep planning")
	if !strings.Contains(scr, "First plan") || strings.Contains(scr, "# First plan") {
		t.Errorf("the plan is not shown as Markdown:\n%s", scr)
	}
	s.keys("n")
	s.waitFor("reason>")
	s.typeLine("add a test")
	s.waitFor("Revised plan")
	scr = s.waitFor("[y] yes, and accept edits")
	if strings.Contains(scr, "**notes.md**") {
		t.Errorf("the plan's Markdown is not rendered:\n%s", scr)
	}
	s.keys("y")
	scr = s.waitFor("Done as planned.")
	if !strings.Contains(scr, "accept edits on") || strings.Contains(scr, "approve?") {
		t.Errorf("after the plan, accept edits should be on and the edit not asked about:\n%s", scr)
	}
	if data, _ := os.ReadFile(filepath.Join(w.dir, "notes.md")); string(data) != "line one\nline 2, planned\n" {
		t.Errorf("the edit after the plan: %q", data)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "sneaky.md")); err == nil {
		t.Error("a write ran in plan mode")
	}
	s.keys("C-d")
	s.waitFor(exitedMark)

	again := w.script(`{"turns":[{"content":"ok"}]}`)
	s2 := startTmux(t, w, "--continue", "--model", "replay:"+again, "--dir", w.dir, "--db", w.db)
	s2.waitFor("accept edits on")
}

// TestPlanWithoutTerminal: run in plan mode stops (exit 3) at the plan;
// resume approves it, leaving plan mode for the mode --permission-mode
// names (ask without it).
func TestPlanWithoutTerminal(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--permission-mode", "accept-edits"}, "The permission mode is now accept-edits"},
		{nil, "The permission mode is now ask"},
	} {
		t.Run(strings.Join(append([]string{"mode"}, tc.args...), " "), func(t *testing.T) {
			w := newWorld(t)
			script := w.script(`{"turns":[
 {"tool_calls":[{"id":"p1","name":"exit_plan_mode","args":{"plan":"# Plan\n\n1. Write /out.md"}}]},
 {"tool_calls":[{"id":"w1","name":"write_file","args":{"file_path":"/out.md","content":"done"}}],"expect":{"last_message_contains":["approved your plan"],"tools_include":["write_file"]}},
 {"content":"Written."}]}`)
			code, stdout, stderr := w.run(w.runArgs(script, "--thread", "t", "--permission-mode", "plan", "plan it")...)
			if code != 3 || !strings.Contains(stdout, `"tool":"exit_plan_mode"`) {
				t.Fatalf("exit %d, want 3 at the plan; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			// The resuming process's model plays what follows the plan.
			rest := w.script(`{"turns":[
 {"tool_calls":[{"id":"w1","name":"write_file","args":{"file_path":"/out.md","content":"done"}}],"expect":{"last_message_contains":["approved your plan"],"tools_include":["write_file"]}},
 {"content":"Written."}]}`)
			args := append([]string{"resume", "t", "--decision", "approve", "--model", "replay:" + rest, "--db", w.db, "--output", "jsonl"}, tc.args...)
			code, stdout, stderr = w.run(args...)
			if code != 0 {
				t.Fatalf("resume: exit %d\n%s", code, stderr)
			}
			if res := toolResultEvents(t, stdout)["p1"]; !strings.Contains(res.Content, tc.want) {
				t.Errorf("exit_plan_mode's result: %q, want %q", res.Content, tc.want)
			}
			if data, _ := os.ReadFile(filepath.Join(w.dir, "out.md")); string(data) != "done" {
				t.Errorf("/out.md: %q", data)
			}
		})
	}
}

// Auto mode through the binary: the classifier (the session's model,
// scripted as agent "classifier") allows one write and refuses another;
// a configuration still saying auto is told what it means now.
func TestAutoModeThroughCLI(t *testing.T) {
	w := newWorld(t)
	s := w.script(`{"turns":[
		{"tool_calls":[{"id":"a","name":"write_file","args":{"file_path":"/a.txt","content":"a"}}]},
		{"agent":"classifier","content":"{\"decision\":\"allow\"}","expect":{"last_message_contains":["<user_messages>\nwrite two files\n</user_messages>","tool: write_file"]}},
		{"tool_calls":[{"id":"b","name":"write_file","args":{"file_path":"/b.txt","content":"b"}}]},
		{"agent":"classifier","content":"{\"decision\":\"deny\",\"reason\":\"b.txt was not asked for\"}"},
		{"content":"done","expect":{"messages_contain":["auto mode's classifier refused this call: b.txt was not asked for"]}}]}`)
	code, stdout, stderr := w.run(w.runArgs(s, "--permission-mode", "auto", "--interrupt-on", "write_file", "write two files")...)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, stderr, stdout)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "a.txt")); err != nil {
		t.Error("the allowed write did not run")
	}
	if _, err := os.Stat(filepath.Join(w.dir, "b.txt")); err == nil {
		t.Error("the refused write ran")
	}
	if !strings.Contains(stdout, `"name":"auto_mode"`) {
		t.Errorf("no auto_mode notice: %s", stdout)
	}
	os.MkdirAll(filepath.Join(w.home, ".deepagents"), 0o755)
	os.WriteFile(filepath.Join(w.home, ".deepagents", "config.yaml"), []byte("permission_mode: auto\n"), 0o644)
	if _, _, stderr := w.run(w.runArgs(w.script(`{"turns":[{"content":"done"}]}`), "go")...); !strings.Contains(stderr, "permission_mode: auto now has a classifier") {
		t.Errorf("no note about auto: %s", stderr)
	}
	// classifier_model gives the classifier a model of its own.
	own := w.script(`{"turns":[{"agent":"classifier","content":"{\"decision\":\"allow\"}"}]}`)
	os.WriteFile(filepath.Join(w.home, ".deepagents", "config.yaml"), []byte("classifier_model: replay:"+own+"\n"), 0o644)
	main := w.script(`{"turns":[{"tool_calls":[{"id":"c","name":"write_file","args":{"file_path":"/c.txt","content":"c"}}]},{"content":"done"}]}`)
	if code, stdout, stderr := w.run(w.runArgs(main, "--permission-mode", "auto", "--interrupt-on", "write_file", "write c")...); code != 0 {
		t.Errorf("classifier_model: exit %d: %s %s", code, stderr, stdout)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "c.txt")); err != nil {
		t.Error("the write its own model allowed did not run")
	}
}
