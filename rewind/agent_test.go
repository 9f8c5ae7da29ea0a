package rewind_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/sandbox"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/hooks"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/rewind"
	"github.com/deepagents-go/deepagents/store"
)

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

// folderAgent is a deep agent on model m working in dir (file tools, no
// shell), its points kept by a tracker on st, its threads by saver.
func folderAgent(t *testing.T, dir string, m llm.Model, st store.Store, saver checkpoint.Saver) (*deepagents.Agent, *rewind.Tracker) {
	t.Helper()
	fsb, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return agentOn(t, dir, fsb, m, st, saver)
}

// shellAgent is folderAgent with a shell (execute), unsandboxed.
func shellAgent(t *testing.T, dir string, m llm.Model, st store.Store, saver checkpoint.Saver) (*deepagents.Agent, *rewind.Tracker) {
	t.Helper()
	shell, err := sandbox.NewLocalShell(dir, sandbox.LocalShellOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shell.Close() })
	return agentOn(t, dir, shell, m, st, saver)
}

// agentOn is a deep agent on model m with backend b, its points in dir
// kept by a tracker on st, its threads by saver.
func agentOn(t *testing.T, dir string, b backend.Backend, m llm.Model, st store.Store, saver checkpoint.Saver) (*deepagents.Agent, *rewind.Tracker) {
	t.Helper()
	tr, err := rewind.New(rewind.Config{Dir: dir, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	a, err := deepagents.New(deepagents.Config{Model: m, Backend: b, Checkpointer: saver, Store: st, Rewind: tr})
	if err != nil {
		t.Fatal(err)
	}
	return a, tr
}

// TestRewindAgent: a deep agent edits with edit_file and changes the tree
// with commands (rm, mv, a generated folder); rewinding to a turn puts the
// folder and the conversation back as they were before its prompt, and the
// abandoned branch can be forked back to.
func TestRewindAgent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, dir, "a.txt", "alpha\n")
	write(t, dir, "b.txt", "bravo\n")
	write(t, dir, "c.txt", "charlie\n")
	original := tree(t, dir)
	shell, err := sandbox.NewLocalShell(dir, sandbox.LocalShellOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer shell.Close()
	st, saver := store.NewMemoryStore(), checkpoint.NewMemorySaver()
	tr, err := rewind.New(rewind.Config{Dir: dir, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{call("e", "edit_file", `{"file_path":"/a.txt","old_string":"alpha","new_string":"ALPHA"}`)}},
		replay.Turn{ToolCalls: []llm.ToolCall{call("x", "execute", `{"command":"rm b.txt && mv c.txt d.txt && mkdir -p gen/sub && echo out > gen/sub/out.txt"}`)}},
		replay.Turn{Content: "tidied"},
		replay.Turn{ToolCalls: []llm.ToolCall{call("w", "write_file", `{"file_path":"/e.txt","content":"echo\n"}`)}},
		replay.Turn{Content: "added e"},
	)
	a, err := deepagents.New(deepagents.Config{Model: m, Backend: shell, Checkpointer: saver, Store: st, Middleware: []deepagents.Middleware{tr.Middleware()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Invoke(ctx, deepagents.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("tidy up")}}); err != nil {
		t.Fatal(err)
	}
	afterFirst := tree(t, dir)
	second, err := a.Invoke(ctx, deepagents.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("add e")}})
	if err != nil {
		t.Fatal(err)
	}
	turns, err := tr.Turns(ctx, "t")
	if err != nil || len(turns) != 2 || turns[0].Prompt != "tidy up" || turns[1].Prompt != "add e" {
		t.Fatalf("turns %+v, %v", turns, err)
	}

	res, err := tr.Rewind(ctx, saver, "t", 2, rewind.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tree(t, dir); got != afterFirst {
		t.Errorf("files at turn 2:\n%s\nwant:\n%s", got, afterFirst)
	}
	snap, err := saver.Load(ctx, "t", "")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(snap.Messages); n == 0 || snap.Messages[n-1].Text() != "tidied" {
		t.Errorf("the conversation at turn 2 ends with %q", snap.Messages[n-1].Text())
	}
	if res.Turn.Prompt != "add e" {
		t.Errorf("the prompt to send again: %q", res.Turn.Prompt)
	}

	if _, err := tr.Rewind(ctx, saver, "t", 1, rewind.Options{}); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, dir); got != original {
		t.Errorf("files at turn 1:\n%s\nwant:\n%s", got, original)
	}
	if _, err := os.Stat(filepath.Join(dir, "gen")); !os.IsNotExist(err) {
		t.Errorf("the generated folder is still there: %v", err)
	}
	if snap, _ := saver.Load(ctx, "t", ""); len(snap.Messages) != 0 {
		t.Errorf("the conversation at turn 1 has %d messages", len(snap.Messages))
	}

	// The abandoned branch: the second run's last checkpoint is still
	// there, and the thread can continue from it.
	if _, err := a.Fork(ctx, "t", second.CheckpointID); err != nil {
		t.Fatal(err)
	}
	if snap, _ := saver.Load(ctx, "t", ""); snap.Messages[len(snap.Messages)-1].Text() != "added e" {
		t.Errorf("the abandoned branch: %+v", snap.Messages)
	}
}

// TestRewindStateThread: a thread whose files are in its state rewinds
// through its conversation's checkpoints: files and messages together.
func TestRewindStateThread(t *testing.T) {
	ctx := context.Background()
	st, saver := store.NewMemoryStore(), checkpoint.NewMemorySaver()
	tr, err := rewind.New(rewind.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{call("w1", "write_file", `{"file_path":"/a.txt","content":"one"}`)}},
		replay.Turn{Content: "wrote one"},
		replay.Turn{ToolCalls: []llm.ToolCall{call("w2", "write_file", `{"file_path":"/b.txt","content":"two"}`)}},
		replay.Turn{Content: "wrote two"},
	)
	a, err := deepagents.New(deepagents.Config{Model: m, Checkpointer: saver, Store: st, Middleware: []deepagents.Middleware{tr.Middleware()}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"first", "second"} {
		if _, err := a.Invoke(ctx, deepagents.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText(p)}}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := tr.Rewind(ctx, saver, "t", 2, rewind.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Files == nil || len(res.Files.Written)+len(res.Files.Removed) != 0 {
		t.Errorf("files plan %+v", res.Files)
	}
	snap, err := saver.Load(ctx, "t", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := snap.Files["/a.txt"]; !ok {
		t.Error("/a.txt is gone")
	}
	if _, ok := snap.Files["/b.txt"]; ok {
		t.Error("/b.txt, written after turn 2's prompt, is still there")
	}
}

// TestRestoreAt: the folder as it was at a checkpoint of the
// conversation, the one a run's step or end saved, or an ancestor's.
func TestRestoreAt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, dir, "a.txt", "0\n")
	st, saver := store.NewMemoryStore(), checkpoint.NewMemorySaver()
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{call("w1", "write_file", `{"file_path":"/a.txt","content":"1\n"}`)}},
		replay.Turn{ToolCalls: []llm.ToolCall{call("w2", "edit_file", `{"file_path":"/a.txt","old_string":"1","new_string":"2"}`)}},
		replay.Turn{Content: "done"},
	)
	a, tr := folderAgent(t, dir, m, st, saver)
	if _, err := a.Invoke(ctx, deepagents.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("count")}}); err != nil {
		t.Fatal(err)
	}
	infos, err := saver.History(ctx, "t", checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Each checkpoint's a.txt, from the conversation's own record of it.
	seen := map[string]bool{}
	for _, in := range infos {
		snap, err := saver.Load(ctx, "t", in.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := "0\n"
		for _, msg := range snap.Messages {
			for _, c := range msg.ToolCalls {
				switch c.ID {
				case "w1":
					want = "1\n"
				case "w2":
					want = "2\n"
				}
			}
		}
		// A call is made before its tool runs: the checkpoint holding the
		// call's result is the one that has the tool's change.
		if !hasResult(snap.Messages, "w2") && want == "2\n" {
			want = "1\n"
		}
		if !hasResult(snap.Messages, "w1") && want == "1\n" {
			want = "0\n"
		}
		if _, err := tr.RestoreAt(ctx, saver, "t", in.ID, rewind.RestoreOptions{}); err != nil {
			t.Fatal(err)
		}
		if data, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(data) != want {
			t.Errorf("at checkpoint %s (step %d): a.txt = %q, want %q", in.ID, in.Step, data, want)
		}
		seen[want] = true
	}
	if len(seen) != 3 {
		t.Errorf("the checkpoints covered %v, want the three states of a.txt", seen)
	}
}

func hasResult(msgs []llm.Message, id string) bool {
	for _, m := range msgs {
		if m.Role == llm.RoleTool && m.ToolCallID == id {
			return true
		}
	}
	return false
}

// TestRunFromCheckpointRestoresFolder: a run from an earlier checkpoint
// (how LangGraph clients time-travel) starts with the folder as it was
// there.
func TestRunFromCheckpointRestoresFolder(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, dir, "a.txt", "original\n")
	st, saver := store.NewMemoryStore(), checkpoint.NewMemorySaver()
	m := replay.New(
		replay.Turn{Content: "looked"},
		replay.Turn{ToolCalls: []llm.ToolCall{call("w", "write_file", `{"file_path":"/a.txt","content":"rewritten\n"}`)}},
		replay.Turn{Content: "rewrote"},
		replay.Turn{Content: "read it", Expect: &replay.Expect{LastMessageContains: []string{"instead"}}},
	)
	a, _ := folderAgent(t, dir, m, st, saver)
	first, err := a.Invoke(ctx, deepagents.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("look")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Invoke(ctx, deepagents.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("rewrite")}}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(data) != "rewritten\n" {
		t.Fatalf("a.txt = %q", data)
	}
	// From the end of the first run, another prompt: the second run's
	// write is undone.
	if _, err := a.Invoke(ctx, deepagents.Input{ThreadID: "t", CheckpointID: first.CheckpointID, Messages: []llm.Message{llm.UserText("read it instead")}}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(data) != "original\n" {
		t.Errorf("a.txt = %q after a run from the first run's checkpoint", data)
	}
}

// TestDeepAgentsRewind: deepagents.Config.Rewind and deepagents.Rewind,
// the same rewind on the agent.
func TestDeepAgentsRewind(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, dir, "a.txt", "before\n")
	m := replay.New(replay.Turn{ToolCalls: []llm.ToolCall{call("w", "write_file", `{"file_path":"/a.txt","content":"after\n"}`)}}, replay.Turn{Content: "done"})
	a, _ := folderAgent(t, dir, m, store.NewMemoryStore(), checkpoint.NewMemorySaver())
	if _, err := a.Invoke(ctx, deepagents.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("change it")}}); err != nil {
		t.Fatal(err)
	}
	res, err := deepagents.Rewind(ctx, a, "t", 1, rewind.Options{Files: true})
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(data) != "before\n" || res.CheckpointID != "" {
		t.Errorf("a.txt = %q, conversation forked at %q", data, res.CheckpointID)
	}
	plain, _ := deepagents.New(deepagents.Config{Model: m})
	if _, err := deepagents.Rewind(ctx, plain, "t", 1, rewind.Options{}); err == nil {
		t.Error("an agent without Config.Rewind rewound")
	}
}

// TestTurnPromptIsWhatWasTyped: a UserPromptSubmit hook's context is not
// part of the prompt a rewind gives back. (Found in review.)
func TestTurnPromptIsWhatWasTyped(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemoryStore()
	tr, _ := rewind.New(rewind.Config{Store: st})
	inject := hooks.Hook{Event: hooks.UserPromptSubmit, Func: func(context.Context, *hooks.Input) (*hooks.Output, error) {
		return hooks.Context("SECRET CONTEXT"), nil
	}}
	m := replay.New(replay.Turn{Content: "ok", Expect: &replay.Expect{LastMessageContains: []string{"SECRET CONTEXT"}}})
	a, err := deepagents.New(deepagents.Config{Model: m, Checkpointer: checkpoint.NewMemorySaver(), Rewind: tr, Hooks: hooks.Config{Hooks: []hooks.Hook{inject}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Invoke(ctx, deepagents.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("fix the bug")}}); err != nil {
		t.Fatal(err)
	}
	turns, _ := tr.Turns(ctx, "t")
	if len(turns) != 1 || turns[0].Prompt != "fix the bug" {
		t.Errorf("turns %+v", turns)
	}
}
