package checkpoint_test

import (
	"context"
	"fmt"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
)

// A thread of two steps, then a branch from the first one (time travel).
func ExampleMemorySaver() {
	ctx := context.Background()
	s := checkpoint.NewMemorySaver()
	lease, err := s.Acquire(ctx, "thread-1", nil)
	if err != nil {
		panic(err)
	}
	_ = s.Put(ctx, &checkpoint.Checkpoint{ThreadID: "thread-1", ID: "001", Step: 1,
		Delta: checkpoint.Delta{Messages: []llm.Message{llm.UserText("hi"), llm.AssistantText("hello")}}})
	_ = s.Put(ctx, &checkpoint.Checkpoint{ThreadID: "thread-1", ID: "002", ParentID: "001", Step: 2,
		Delta: checkpoint.Delta{Keep: 2, Messages: []llm.Message{llm.UserText("bye"), llm.AssistantText("bye!")}}})
	_ = lease.Release(ctx, checkpoint.StatusIdle)

	snap, _ := s.Load(ctx, "thread-1", "")
	fmt.Println(snap.ID, len(snap.Messages))

	// Resume from 001: a new branch; 002 stays loadable.
	_ = s.Put(ctx, &checkpoint.Checkpoint{ThreadID: "thread-1", ID: "003", ParentID: "001", Step: 2,
		Delta: checkpoint.Delta{Keep: 2, Messages: []llm.Message{llm.UserText("tell me more")}}})
	snap, _ = s.Load(ctx, "thread-1", "")
	fmt.Println(snap.ID, len(snap.Messages), snap.Messages[2].Text())
	old, _ := s.Load(ctx, "thread-1", "002")
	fmt.Println(old.ID, old.Messages[2].Text())
	// Output:
	// 002 4
	// 003 3 tell me more
	// 002 bye
}
