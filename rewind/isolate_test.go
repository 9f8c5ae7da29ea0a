package rewind_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/rewind"
	"github.com/deepagents-go/deepagents/store"
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

// TestRewindAfterMerge: two parallel subagents work in workspaces of
// their own, merged back into the folder (a file each, one file both
// edited apart, one both edited on the same line); rewinding to the
// prompt puts the folder back as it was, the merge's writes and its
// conflict markers gone.
func TestRewindAfterMerge(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, dir, "same.txt", "1\n2\n3\n4\n5\n")
	write(t, dir, "clash.txt", "x\n")
	original := tree(t, dir)
	m := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{
			call("ta", "task", `{"subagent_type":"alpha","description":"a"}`),
			call("tb", "task", `{"subagent_type":"beta","description":"b"}`),
		}},
		replay.Turn{Agent: "alpha", ToolCalls: []llm.ToolCall{call("a0", "barrier", `{}`)}},
		replay.Turn{Agent: "alpha", ToolCalls: []llm.ToolCall{
			call("a1", "edit_file", `{"file_path":"/same.txt","old_string":"1\n","new_string":"one\n"}`),
			call("a2", "edit_file", `{"file_path":"/clash.txt","old_string":"x","new_string":"alpha"}`),
			call("a3", "write_file", `{"file_path":"/alpha.txt","content":"a\n"}`),
		}},
		replay.Turn{Agent: "alpha", Content: "alpha done"},
		replay.Turn{Agent: "beta", ToolCalls: []llm.ToolCall{call("b0", "barrier", `{}`)}},
		replay.Turn{Agent: "beta", ToolCalls: []llm.ToolCall{
			call("b1", "edit_file", `{"file_path":"/same.txt","old_string":"5\n","new_string":"five\n"}`),
			call("b2", "edit_file", `{"file_path":"/clash.txt","old_string":"x","new_string":"beta"}`),
			call("b3", "write_file", `{"file_path":"/beta.txt","content":"b\n"}`),
		}},
		replay.Turn{Agent: "beta", Content: "beta done"},
		replay.Turn{Content: "both done"},
	)
	st, saver := store.NewMemoryStore(), checkpoint.NewMemorySaver()
	fsb, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := rewind.New(rewind.Config{Dir: dir, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	a, err := deepagents.New(deepagents.Config{Model: m, Backend: fsb, Checkpointer: saver, Store: st, Rewind: tr, WorkspaceDir: t.TempDir(),
		Tools:     []tool.Tool{barrier(2)},
		Subagents: []deepagents.Subagent{{Name: "alpha", Description: "a"}, {Name: "beta", Description: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Invoke(ctx, deepagents.Input{ThreadID: "t", Messages: []llm.Message{llm.UserText("split it")}}); err != nil {
		t.Fatal(err)
	}
	merged := tree(t, dir)
	for _, s := range []string{"alpha.txt", "beta.txt", "one", "five", "<<<<<<<"} {
		if !strings.Contains(merged, s) {
			t.Fatalf("the merged folder lacks %q:\n%s", s, merged)
		}
	}
	if _, err := deepagents.Rewind(ctx, a, "t", 1, rewind.Options{}); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, dir); got != original {
		t.Errorf("after the rewind:\n%s\nwant:\n%s", got, original)
	}
}
