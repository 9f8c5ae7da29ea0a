package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/sqlite"
)

func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "sqlite-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	db, err := sqlite.Open(ctx, filepath.Join(dir, "agent.db"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	saver := db.Saver()

	lease, err := saver.Acquire(ctx, "thread-1", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = saver.Acquire(ctx, "thread-1", nil)
	fmt.Println("second run busy:", errors.Is(err, checkpoint.ErrBusy))

	_ = saver.Put(ctx, &checkpoint.Checkpoint{ThreadID: "thread-1", ID: "0001", Step: 1,
		Delta: checkpoint.Delta{Messages: []llm.Message{llm.UserText("2+2?"), llm.AssistantText("4")}}})
	_ = lease.Release(ctx, checkpoint.StatusIdle)

	snap, _ := saver.Load(ctx, "thread-1", "")
	fmt.Println(snap.ID, snap.Messages[1].Text())
	// Output:
	// second run busy: true
	// 0001 4
}
