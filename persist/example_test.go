package persist_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/persist"
)

// Open a SQLite file from a --db value, save a step and read it back.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "persist-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	db, err := persist.Open(ctx, filepath.Join(dir, "agent.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()

	lease, err := db.Saver.Acquire(ctx, "thread-1", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = db.Saver.Put(ctx, &checkpoint.Checkpoint{ThreadID: "thread-1", ID: "0001", Step: 1,
		Delta: checkpoint.Delta{Messages: []llm.Message{llm.UserText("hello"), llm.AssistantText("hi!")}}})
	_ = lease.Release(ctx, checkpoint.StatusIdle)
	_ = db.Store.Put(ctx, []string{"memories"}, "user", map[string]any{"name": "Ada"})

	snap, _ := db.Saver.Load(ctx, "thread-1", "")
	item, _ := db.Store.Get(ctx, []string{"memories"}, "user")
	fmt.Println(db.Kind, snap.ID, snap.Messages[1].Text(), item.Value["name"])
	// Output: sqlite 0001 hi! Ada
}
