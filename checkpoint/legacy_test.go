package checkpoint_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
)

// An older version wrote the plan as a field of the delta: it loads as the
// value, which a value of the same delta overrides.
func TestLegacyDeltaJSON(t *testing.T) {
	var cp checkpoint.Checkpoint
	old := `{"thread_id":"t","id":"c2","parent_id":"c1","step":3,"created_at":"2025-01-02T03:04:05Z","keep":1,` +
		`"todos":[{"content":"a","status":"pending"}],"values":{"k":1},"meta":{"m":1}}`
	if err := json.Unmarshal([]byte(old), &cp); err != nil {
		t.Fatal(err)
	}
	if cp.ThreadID != "t" || cp.ID != "c2" || cp.ParentID != "c1" || cp.Step != 3 || !cp.CreatedAt.Equal(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)) ||
		cp.Keep != 1 || string(cp.Meta) != `{"m":1}` || string(cp.Values["k"]) != "1" ||
		string(cp.Values[checkpoint.LegacyTodosValue]) != `[{"content":"a","status":"pending"}]` {
		t.Errorf("decoded %+v", cp)
	}

	var d checkpoint.Delta
	if err := json.Unmarshal([]byte(`{"keep":2,"todos":[1],"values":{"todos":[2]}}`), &d); err != nil {
		t.Fatal(err)
	}
	if d.Keep != 2 || len(d.Values) != 1 || string(d.Values[checkpoint.LegacyTodosValue]) != "[2]" {
		t.Errorf("decoded %+v", d)
	}

	// A new delta round-trips, without the old field.
	d = checkpoint.Delta{Keep: 1, Values: map[string]json.RawMessage{"todos": json.RawMessage(`[]`)}}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back checkpoint.Delta
	if err := json.Unmarshal(b, &back); err != nil || string(b) != `{"keep":1,"values":{"todos":[]}}` || string(back.Values["todos"]) != "[]" {
		t.Errorf("round trip: %s, %+v, %v", b, back, err)
	}
}
