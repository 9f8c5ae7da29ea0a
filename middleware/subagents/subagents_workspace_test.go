//go:build unix

package subagents_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/isolate"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/filesystem"
	"github.com/deepagents-go/deepagents/middleware/subagents"
	"github.com/deepagents-go/deepagents/tool"
)

// barrier is a tool each of n calls of waits in until all n are there:
// parallel subagents that call it first have all started (and forked)
// before any goes on.
func barrier(n int) tool.Tool {
	var wg sync.WaitGroup
	wg.Add(n)
	return tool.Must(tool.New("barrier", "Waits for the others.", func(ctx context.Context, _ struct{}) (string, error) {
		wg.Done()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
			return "all here", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}))
}

func editCall(id, path, old, new string) llm.ToolCall {
	args, _ := json.Marshal(map[string]string{"file_path": path, "old_string": old, "new_string": new})
	return llm.ToolCall{ID: id, Name: filesystem.EditFileTool, Args: args}
}

func writeCall(id, path, content string) llm.ToolCall {
	args, _ := json.Marshal(map[string]string{"file_path": path, "content": content})
	return llm.ToolCall{ID: id, Name: filesystem.WriteFileTool, Args: args}
}

// TestParallelSubagentsWorkspaces runs two task calls in one turn whose
// subagents edit the same files and different ones in a real folder, with
// git and without: each works in a workspace of its own, and the folder
// ends with both files made, both separate hunks of one file, and the
// overlapping hunk of another as a conflict that keeps both versions; the
// parent's task results and the notices say so.
func TestParallelSubagentsWorkspaces(t *testing.T) {
	for _, withGit := range []bool{false, true} {
		t.Run(map[bool]string{false: "copy", true: "git"}[withGit], func(t *testing.T) {
			dir, tmp := t.TempDir(), t.TempDir()
			same := "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
			write := func(p, s string) {
				if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("same.txt", same)
			write("clash.txt", "a\nb\nc\n")
			if withGit {
				for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "base"}} {
					cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-C", dir}, args...)...)
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("git %v: %v\n%s", args, err, out)
					}
				}
			}
			fsb, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{})
			if err != nil {
				t.Fatal(err)
			}
			files, err := filesystem.New(filesystem.Config{Backend: fsb})
			if err != nil {
				t.Fatal(err)
			}
			m := replay.New(
				replay.Turn{ToolCalls: []llm.ToolCall{taskCall("ta", "alpha", "edit A"), taskCall("tb", "beta", "edit B")}},
				replay.Turn{Agent: "alpha", ToolCalls: []llm.ToolCall{{ID: "a0", Name: "barrier", Args: json.RawMessage(`{}`)}}},
				replay.Turn{Agent: "alpha", ToolCalls: []llm.ToolCall{
					editCall("a1", "/same.txt", "two\n", "TWO by alpha\n"),
					editCall("a2", "/clash.txt", "b\n", "alpha's b\n"),
					writeCall("a3", "/alpha.txt", "alpha\n"),
				}},
				replay.Turn{Agent: "alpha", Content: "alpha done"},
				replay.Turn{Agent: "beta", ToolCalls: []llm.ToolCall{{ID: "b0", Name: "barrier", Args: json.RawMessage(`{}`)}}},
				replay.Turn{Agent: "beta", ToolCalls: []llm.ToolCall{
					editCall("b1", "/same.txt", "six\n", "SIX by beta\n"),
					editCall("b2", "/clash.txt", "b\n", "beta's b\n"),
					writeCall("b3", "/beta.txt", "beta\n"),
				}},
				replay.Turn{Agent: "beta", Content: "beta done"},
				replay.Turn{Content: "merged", Expect: &replay.Expect{MessagesContain: []string{"alpha done", "beta done", "CONFLICT in /clash.txt", "merged back into the folder"}}},
			)
			subs, err := subagents.New(subagents.Config{
				Parent: subagents.Parent{
					Agent:      agent.Config{Model: m, Tools: []tool.Tool{barrier(2)}},
					Middleware: func() []agent.Middleware { return []agent.Middleware{files} },
				},
				Subagents:        []subagents.Subagent{{Name: "alpha", Description: "a"}, {Name: "beta", Description: "b"}},
				NoGeneralPurpose: true,
				Workspace:        dir,
				WorkspaceOptions: isolate.Options{TempDir: tmp},
			})
			if err != nil {
				t.Fatal(err)
			}
			a, err := agent.New(agent.Config{Model: m, Middleware: []agent.Middleware{subs}})
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var notices []agent.Event
			res, err := a.Invoke(context.Background(), agent.Input{Messages: []llm.Message{llm.UserText("go")}, Events: func(e agent.Event) {
				if e.Type == agent.EventNotice && e.Name == subagents.NoticeMerge {
					mu.Lock()
					notices = append(notices, e)
					mu.Unlock()
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			if n := m.Remaining(); n != 0 {
				t.Fatalf("%d turns of the script left", n)
			}
			if res.LastMessage().Text() != "merged" {
				t.Fatalf("the run ended with %q", res.LastMessage().Text())
			}
			read := func(p string) string {
				b, err := os.ReadFile(filepath.Join(dir, p))
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			if got, want := read("same.txt"), "one\nTWO by alpha\nthree\nfour\nfive\nSIX by beta\nseven\n"; got != want {
				t.Errorf("same.txt = %q, want %q", got, want)
			}
			if read("alpha.txt") != "alpha\n" || read("beta.txt") != "beta\n" {
				t.Error("a file a subagent made is missing")
			}
			clash := read("clash.txt")
			for _, s := range []string{"<<<<<<< the folder\n", "alpha's b\n", "=======\n", "beta's b\n", ">>>>>>> "} {
				if !strings.Contains(clash, s) {
					t.Errorf("clash.txt lacks %q:\n%s", s, clash)
				}
			}
			if len(notices) != 2 {
				t.Fatalf("notices: %+v", notices)
			}
			conflicts := 0
			for _, n := range notices {
				if strings.Contains(n.Content, "1 conflict(s)") {
					conflicts++
				}
			}
			if conflicts != 1 {
				t.Errorf("notices: %+v", notices)
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Errorf("workspaces left: %v", ents)
			}
		})
	}
}

// TestSingleSubagentSharesFolder: a task call alone in its turn works in
// the folder itself (isolate.Auto); isolate.Copy gives it a workspace
// anyway, merged back.
func TestSingleSubagentSharesFolder(t *testing.T) {
	for _, mode := range []isolate.Mode{isolate.Auto, isolate.Copy} {
		t.Run(string(mode), func(t *testing.T) {
			dir := t.TempDir()
			fsb, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{})
			if err != nil {
				t.Fatal(err)
			}
			files, err := filesystem.New(filesystem.Config{Backend: fsb})
			if err != nil {
				t.Fatal(err)
			}
			want := "merged back"
			if mode == isolate.Auto {
				want = "done"
			}
			m := replay.New(
				replay.Turn{ToolCalls: []llm.ToolCall{taskCall("t", "alpha", "write")}},
				replay.Turn{Agent: "alpha", ToolCalls: []llm.ToolCall{writeCall("w", "/f.txt", "f\n")}},
				replay.Turn{Agent: "alpha", Content: "done"},
				replay.Turn{Content: "ok", Expect: &replay.Expect{LastMessageContains: []string{want}}},
			)
			subs, err := subagents.New(subagents.Config{
				Parent:           subagents.Parent{Agent: agent.Config{Model: m}, Middleware: func() []agent.Middleware { return []agent.Middleware{files} }},
				Subagents:        []subagents.Subagent{{Name: "alpha", Description: "a", Isolation: mode}},
				NoGeneralPurpose: true,
				Workspace:        dir,
				WorkspaceOptions: isolate.Options{TempDir: t.TempDir()},
			})
			if err != nil {
				t.Fatal(err)
			}
			a, err := agent.New(agent.Config{Model: m, Middleware: []agent.Middleware{subs}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Invoke(context.Background(), agent.Input{Messages: []llm.Message{llm.UserText("go")}})
			if err != nil {
				t.Fatal(err)
			}
			if n := m.Remaining(); n != 0 {
				t.Fatalf("%d turns of the script left", n)
			}
			msgs := res.State.Messages
			if got := msgs[len(msgs)-2].Text(); strings.Contains(got, "merged back") != (mode == isolate.Copy) {
				t.Errorf("the task's result: %q", got)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "f.txt")); err != nil || string(b) != "f\n" {
				t.Errorf("f.txt: %q, %v", b, err)
			}
		})
	}
}

// TestIsolationMode refuses a mode that is none.
func TestIsolationMode(t *testing.T) {
	_, err := subagents.New(subagents.Config{Subagents: []subagents.Subagent{{Name: "x", Description: "x", Isolation: "sideways"}}, Parent: subagents.Parent{Agent: agent.Config{Model: replay.New()}}})
	if err == nil || !strings.Contains(err.Error(), "sideways") {
		t.Fatalf("New: %v", err)
	}
}
