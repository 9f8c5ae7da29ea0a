package server

import (
	"testing"

	"github.com/deepagents-go/deepagents/store"
)

// TestRecordOfBadTime checks that a run record whose time does not parse
// keeps its other fields: encoding/json would stop at the time.
func TestRecordOfBadTime(t *testing.T) {
	rec := recordOf(&store.Item{Key: "r1", Value: map[string]any{
		"created_at": "yesterday",
		"thread_id":  "t1",
		"status":     "running",
		"replica":    "a",
		"updated_at": "2026-11-26T10:00:00Z",
	}})
	if rec.RunID != "r1" || rec.ThreadID != "t1" || rec.Status != "running" || rec.Replica != "a" ||
		!rec.CreatedAt.IsZero() || rec.UpdatedAt.IsZero() {
		t.Errorf("record %+v", rec)
	}
}
