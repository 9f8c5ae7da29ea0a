package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/store"
)

func benchMessages(i int) []llm.Message {
	call := fmt.Sprintf("toolu_%08d", i)
	return []llm.Message{
		{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text(strings.Repeat("thinking about the code ", 8))},
			ToolCalls: []llm.ToolCall{{ID: call, Name: "read_file", Args: []byte(`{"file_path":"/src/main.go","limit":100}`)}}},
		llm.ToolResult(call, "read_file", strings.Repeat("line of source code ", 20), false),
	}
}

// BenchmarkPut measures one step's checkpoint (two messages, ~800 bytes)
// on a growing thread.
func BenchmarkPut(b *testing.B) {
	s := openTemp(b, nil).Saver()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	parent, keep, i := "", 0, 0
	for b.Loop() {
		id := fmt.Sprintf("%08d", i)
		cp := &checkpoint.Checkpoint{ThreadID: "t", ID: id, ParentID: parent, Step: i,
			Delta: checkpoint.Delta{Keep: keep, Messages: benchMessages(i)}}
		if err := s.Put(ctx, cp); err != nil {
			b.Fatal(err)
		}
		parent, keep, i = id, keep+2, i+1
	}
}

// BenchmarkLoad measures loading the head of a 1,000-step thread (2,000
// messages).
func BenchmarkLoad(b *testing.B) {
	s := openTemp(b, nil).Saver()
	ctx := context.Background()
	parent := ""
	for i := range 1000 {
		id := fmt.Sprintf("%08d", i)
		if err := s.Put(ctx, &checkpoint.Checkpoint{ThreadID: "t", ID: id, ParentID: parent, Step: i,
			Delta: checkpoint.Delta{Keep: 2 * i, Messages: benchMessages(i)}}); err != nil {
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

// BenchmarkStore measures a store item's Put, Get and a Search of its
// namespace among 100 items.
func BenchmarkStore(b *testing.B) {
	st := openTemp(b, nil).Store()
	ctx := context.Background()
	ns := []string{"users", "u1"}
	for i := range 100 {
		if err := st.Put(ctx, ns, fmt.Sprintf("k%03d", i), map[string]any{"n": i, "kind": "note"}); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if err := st.Put(ctx, ns, "k000", map[string]any{"n": 0, "kind": "note"}); err != nil {
			b.Fatal(err)
		}
		if _, err := st.Get(ctx, ns, "k050"); err != nil {
			b.Fatal(err)
		}
		if items, err := st.Search(ctx, ns, store.SearchOptions{Limit: 10, Filter: map[string]any{"kind": "note"}}); err != nil || len(items) != 10 {
			b.Fatal(err)
		}
	}
}
