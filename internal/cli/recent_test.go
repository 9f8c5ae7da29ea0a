package cli

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
)

// Subagents' threads newer than a whole page do not hide the user's.
func TestRecentThreadsSkipsSubagentThreads(t *testing.T) {
	ctx := context.Background()
	s := checkpoint.NewMemorySaver()
	put := func(id string) {
		t.Helper()
		cp := &checkpoint.Checkpoint{ThreadID: id, ID: "c1", Delta: checkpoint.Delta{Messages: []llm.Message{llm.UserText("x")}}}
		if err := s.Put(ctx, cp); err != nil {
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
	got, err := recentThreads(ctx, s, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 || got[0].ID != "user11" || got[9].ID != "user02" {
		ids := []string{}
		for _, th := range got {
			ids = append(ids, th.ID)
		}
		t.Errorf("recent threads %v, want user11 down to user02", ids)
	}
}
