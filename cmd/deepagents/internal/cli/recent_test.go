package cli

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/persist"
)

// Subagents' threads newer than a whole page do not hide the user's: the
// session's /threads shows the ten most recent of the user's own (what
// recentThreads gives it; tui.TestThreadsCommand checks it shows them).
func TestThreadsCommandSkipsSubagentThreads(t *testing.T) {
	ctx := context.Background()
	db, err := persist.Open(ctx, "memory:", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	put := func(id string) {
		t.Helper()
		cp := &checkpoint.Checkpoint{ThreadID: id, ID: "c1", Delta: checkpoint.Delta{Messages: []llm.Message{llm.UserText("x")}}}
		if err := db.Saver.Put(ctx, cp); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // distinct update times
	}
	for i := range 12 {
		put(fmt.Sprintf("user%02d", i))
	}
	for i := range 60 {
		put(fmt.Sprintf("user11/call%02d", i))
	}
	threads, err := recentThreads(ctx, db, 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, th := range threads {
		ids = append(ids, th.ID)
	}
	if len(ids) != 10 || ids[0] != "user11" || ids[9] != "user02" {
		t.Errorf("/threads listed %v, want user11 down to user02", ids)
	}
}
