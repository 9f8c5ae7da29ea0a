package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"
)

// writeAgentFile writes a subagent file in the workspace.
func (w *world) writeAgentFile(name, body string) {
	w.t.Helper()
	dir := filepath.Join(w.dir, ".deepagents", "agents")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte(body), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// TestSubagentApprovalAcrossProcesses: `deepagents run` stops when a
// subagent's call needs approval, says which subagent asks (text and
// jsonl), and exits; a second process resumes the thread with a decision,
// and the subagent continues from where it stopped, its sibling's answer
// kept. The resume repeats no flag: the thread's settings keep the
// approvals.
func TestSubagentApprovalAcrossProcesses(t *testing.T) {
	first := `{"turns":[
		{"tool_calls":[
			{"id":"t1","name":"task","args":{"description":"write the plan","subagent_type":"planner"}},
			{"id":"t2","name":"task","args":{"description":"say hi","subagent_type":"general-purpose"}}]},
		{"agent":"planner","tool_calls":[{"id":"w","name":"write_file","args":{"file_path":"/plan.md","content":"step 1"}}]},
		{"agent":"general-purpose","content":"hi from the sibling"}]}`
	second := `{"turns":[
		{"agent":"planner","content":"plan handled","expect":{"last_message_contains":[%q],"messages_contain":["write the plan"]}},
		{"content":"finished","expect":{"messages_contain":["hi from the sibling","plan handled"]}}]}`
	tests := []struct {
		name, output, decision, sees string
		file                         string // "" for none
	}{
		{"approve, text output", "text", "approve", "Updated file /plan.md", "step 1"},
		{"reject, jsonl output", "jsonl", "reject:not now", "not now", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.writeAgentFile("planner", "---\nname: planner\ndescription: Writes plans.\n---\nYou plan.\n")
			s1 := w.script(first)
			code, stdout, stderr := w.run("run", "--model", "replay:"+s1, "--dir", w.dir, "--db", w.db, "--output", tt.output,
				"--thread", "th", "--interrupt-on", "write_file", "plan and greet")
			if code != ExitInterrupted {
				t.Fatalf("first run exit %d, want %d: %s\n%s", code, ExitInterrupted, stderr, stdout)
			}
			if tt.output == "text" {
				if want := `? approval needed from subagent planner: write_file {"file_path":"/plan.md","content":"step 1"}`; !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
				if strings.Count(stderr, "approval needed") != 1 {
					t.Errorf("the request is shown more than once:\n%s", stderr)
				}
			} else {
				var req *deepagents.ActionRequest
				for _, e := range events(t, stdout) {
					if e.Type == deepagents.EventInterrupt && len(e.Namespace) == 0 && len(e.Interrupts) == 1 {
						req = &e.Interrupts[0]
					}
				}
				if req == nil || req.Tool != "write_file" || strings.Join(req.Namespace, "/") != "planner:t1" || !strings.HasPrefix(req.Description, "The subagent planner wants") {
					t.Errorf("the interrupt does not name the subagent: %+v\n%s", req, stdout)
				}
			}
			if _, err := os.Stat(filepath.Join(w.dir, "plan.md")); !os.IsNotExist(err) {
				t.Fatal("the file was written before approval")
			}

			s2 := w.script(fmt.Sprintf(second, tt.sees))
			code, stdout, stderr = w.run("resume", "th", "--decision", tt.decision, "--model", "replay:"+s2, "--db", w.db, "--output", "jsonl")
			if code != 0 {
				t.Fatalf("resume exit %d: %s\n%s", code, stderr, stdout)
			}
			var inside bool
			for _, e := range events(t, stdout) {
				if strings.Join(e.Namespace, "/") == "planner:t1" && e.Type == deepagents.EventToolResult && e.Name == "write_file" {
					inside = true
				}
			}
			if !inside {
				t.Errorf("the resume did not run the call inside the subagent:\n%s", stdout)
			}
			got, err := os.ReadFile(filepath.Join(w.dir, "plan.md"))
			switch {
			case tt.file == "" && err == nil:
				t.Errorf("the rejected write happened: %q", got)
			case tt.file != "" && string(got) != tt.file:
				t.Errorf("plan.md = %q, %v; want %q", got, err, tt.file)
			}
			if end := runEnd(t, stdout); end.Status != deepagents.StatusCompleted {
				t.Errorf("resumed run: %+v", end)
			}
		})
	}
}

// TestForkSubagentThroughCLI: a subagent file with mode: fork starts from
// the thread's conversation, so it knows what an earlier run was told; an
// isolated one called in the same turn does not. An unknown mode is a
// usage error naming the file.
func TestForkSubagentThroughCLI(t *testing.T) {
	w := newWorld(t)
	w.writeAgentFile("twin", "---\nname: twin\ndescription: Carries on with what we discussed.\nmode: fork\n---\nYou are the twin.\n")
	w.writeAgentFile("stranger", "---\nname: stranger\ndescription: Knows nothing.\nmode: isolated\n---\nYou are a stranger.\n")
	s1 := w.script(`{"turns":[{"content":"noted"}]}`)
	if code, _, stderr := w.run(w.runArgs(s1, "--thread", "th", "the locker code is 4417")...); code != 0 {
		t.Fatalf("first run: %d %s", code, stderr)
	}
	s2 := w.script(`{"turns":[
		{"tool_calls":[
			{"id":"f","name":"task","args":{"description":"open the locker","subagent_type":"twin"}},
			{"id":"i","name":"task","args":{"description":"open the locker","subagent_type":"stranger"}}],
		 "expect":{"tools_include":["task"]}},
		{"agent":"twin","content":"opened with 4417","expect":{"messages_contain":["the locker code is 4417","noted"],"last_message_contains":["open the locker"],"system_contains":["You are the twin."]}},
		{"agent":"stranger","content":"what code?","expect":{"messages_exclude":["4417"]}},
		{"content":"done","expect":{"messages_contain":["opened with 4417","what code?"]}}]}`)
	if code, stdout, stderr := w.run(w.runArgs(s2, "--thread", "th", "open it")...); code != 0 {
		t.Fatalf("second run: %d %s\n%s", code, stderr, stdout)
	}
	w.writeAgentFile("twin", "---\nname: twin\ndescription: x\nmode: clone\n---\nx\n")
	if code, _, stderr := w.run(w.runArgs(s1, "go")...); code != ExitUsage || !strings.Contains(stderr, "twin.md") || !strings.Contains(stderr, `mode must be isolated or fork, not "clone"`) {
		t.Errorf("unknown mode: exit %d, %s", code, stderr)
	}
}

// TestApprovalPromptsNameTheSubagent: the text log and the terminal
// prompt say which subagent asks (tui.TestApprovalNamesTheSubagent: the
// interactive session's approval too).
func TestApprovalPromptsNameTheSubagent(t *testing.T) {
	req := deepagents.ActionRequest{Tool: "write_file", Args: json.RawMessage(`{"file_path":"/a","content":"x"}`), Namespace: []string{"planner:t1"}}
	var out, log bytes.Buffer
	r := &textRenderer{out: &out, log: &log}
	// The subagent's own interrupt event is not repeated; the main run's
	// lists its request.
	r.event(deepagents.Event{Type: deepagents.EventInterrupt, Namespace: []string{"planner:t1"}, Interrupts: []deepagents.ActionRequest{req}})
	r.event(deepagents.Event{Type: deepagents.EventInterrupt, Interrupts: []deepagents.ActionRequest{req, {Tool: "execute", Args: json.RawMessage(`{}`)}}})
	want := "? approval needed from subagent planner: write_file {\"file_path\":\"/a\",\"content\":\"x\"}\n? approval needed: execute {}\n"
	if log.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", log.String(), want)
	}
	var stderr bytes.Buffer
	if _, err := askDecisions(Env{Stdin: strings.NewReader("a\n"), Stderr: &stderr}, []deepagents.ActionRequest{req}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "Approval needed (1 of 1) from subagent planner: write_file") {
		t.Errorf("prompt: %s", stderr.String())
	}
	// tui.TestApprovalNamesTheSubagent checks the interactive session's.
}
