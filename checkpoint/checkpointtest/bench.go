package checkpointtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
)

// The savers' benchmarks, run by each implementation on its own database
// (sqlite's and postgres' bench_test.go), so that their numbers measure
// the same work.

// stepMessages is one agent step's two messages (~800 bytes): a tool call
// and its result.
func stepMessages(i int) []llm.Message {
	call := fmt.Sprintf("toolu_%08d", i)
	return []llm.Message{
		{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text(strings.Repeat("thinking about the code ", 8))},
			ToolCalls: []llm.ToolCall{{ID: call, Name: "read_file", Args: []byte(`{"file_path":"/src/main.go","limit":100}`)}}},
		llm.ToolResult(call, "read_file", strings.Repeat("line of source code ", 20), false),
	}
}

// BenchmarkPut measures one step's checkpoint on a growing thread, with a
// cancellable context as a run's is.
func BenchmarkPut(b *testing.B, s checkpoint.Saver) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	parent, keep, i := "", 0, 0
	for b.Loop() {
		id := fmt.Sprintf("%08d", i)
		cp := &checkpoint.Checkpoint{ThreadID: "t", ID: id, ParentID: parent, Step: i,
			Delta: checkpoint.Delta{Keep: keep, Messages: stepMessages(i)}}
		if err := s.Put(ctx, cp); err != nil {
			b.Fatal(err)
		}
		parent, keep, i = id, keep+2, i+1
	}
}

// BenchmarkLoad measures loading the head of a 1,000-step thread (2,000
// messages).
func BenchmarkLoad(b *testing.B, s checkpoint.Saver) {
	ctx := context.Background()
	parent := ""
	for i := range 1000 {
		id := fmt.Sprintf("%08d", i)
		if err := s.Put(ctx, &checkpoint.Checkpoint{ThreadID: "t", ID: id, ParentID: parent, Step: i,
			Delta: checkpoint.Delta{Keep: 2 * i, Messages: stepMessages(i)}}); err != nil {
			b.Fatal(err)
		}
		parent = id
	}
	for b.Loop() {
		snap, err := s.Load(ctx, "t", "")
		if err != nil || len(snap.Messages) != 2000 {
			b.Fatal(err)
		}
	}
}
