package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Two task calls of one turn through deepagents run, in a git repository,
// whose subagents edit one file (apart, and on the same line) and a file
// each: each works in a worktree of its own, both from the folder as the
// turn found it (whichever runs first), merged back into --dir; the
// events show the merges, the model the conflict, and no workspace is
// left.
func TestParallelSubagentsMergeThroughCLI(t *testing.T) {
	w := newWorld(t)
	agents := filepath.Join(w.dir, ".deepagents", "agents")
	mustWrite(t, filepath.Join(agents, "alpha.md"), "---\nname: alpha\ndescription: Edits the top.\n---\nYou edit.\n")
	mustWrite(t, filepath.Join(agents, "beta.md"), "---\nname: beta\ndescription: Edits the bottom.\nisolation: worktree\n---\nYou edit.\n")
	mustWrite(t, filepath.Join(w.dir, "notes.txt"), "top\nmiddle 1\nmiddle 2\nmiddle 3\nbottom\n")
	mustWrite(t, filepath.Join(w.dir, "shared.txt"), "same line\n")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "base"}} {
		if out, err := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-C", w.dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	tmp := t.TempDir()
	s := w.script(`{"turns":[
		{"tool_calls":[{"id":"ta","name":"task","args":{"description":"edit the top","subagent_type":"alpha"}},
		               {"id":"tb","name":"task","args":{"description":"edit the bottom","subagent_type":"beta"}}]},
		{"agent":"alpha","tool_calls":[{"id":"a1","name":"edit_file","args":{"file_path":"/notes.txt","old_string":"top\n","new_string":"TOP (alpha)\n"}},
		                               {"id":"a2","name":"edit_file","args":{"file_path":"/shared.txt","old_string":"same line","new_string":"alpha's line"}},
		                               {"id":"a3","name":"write_file","args":{"file_path":"/alpha.txt","content":"from alpha\n"}}]},
		{"agent":"alpha","content":"alpha edited"},
		{"agent":"beta","tool_calls":[{"id":"b1","name":"edit_file","args":{"file_path":"/notes.txt","old_string":"bottom\n","new_string":"BOTTOM (beta)\n"}},
		                              {"id":"b2","name":"edit_file","args":{"file_path":"/shared.txt","old_string":"same line","new_string":"beta's line"}},
		                              {"id":"b3","name":"write_file","args":{"file_path":"/beta.txt","content":"from beta\n"}}]},
		{"agent":"beta","content":"beta edited"},
		{"content":"merged","expect":{"messages_contain":["alpha edited","beta edited","CONFLICT in /shared.txt","merged back into the folder"]}}]}`)
	code, stdout, stderr := w.runWithEnv([]string{"TMPDIR=" + tmp}, w.runArgs(s, "--auto-approve", "split the work")...)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(w.dir, p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got, want := read("notes.txt"), "TOP (alpha)\nmiddle 1\nmiddle 2\nmiddle 3\nBOTTOM (beta)\n"; got != want {
		t.Errorf("notes.txt = %q, want %q", got, want)
	}
	if read("alpha.txt") != "from alpha\n" || read("beta.txt") != "from beta\n" {
		t.Error("a subagent's new file is missing")
	}
	if shared := read("shared.txt"); !strings.Contains(shared, "alpha's line") || !strings.Contains(shared, "beta's line") || !strings.Contains(shared, "<<<<<<<") {
		t.Errorf("shared.txt lost a version: %q", shared)
	}
	merges := 0
	for _, e := range events(t, stdout) {
		if e.Type == "notice" && e.Name == "workspace_merge" {
			merges++
		}
	}
	if merges != 2 {
		t.Errorf("%d workspace_merge notices, want 2:\n%s", merges, stdout)
	}
	if ents, _ := filepath.Glob(filepath.Join(tmp, "deepagents-isolate-*")); len(ents) != 0 {
		t.Errorf("workspaces left: %v", ents)
	}
}
