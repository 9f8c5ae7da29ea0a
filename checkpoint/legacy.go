package checkpoint

import (
	"encoding/json"
	"time"
)

// LegacyTodosValue is the state value that the plan of older versions
// becomes. Those kept it beside the values, in a field of its own (a
// Delta's "todos", a column of the SQL savers); loading such a checkpoint
// puts that list in Values under this key, unless a newer checkpoint of
// the chain wrote the value itself. Only readers of old data use it.
const LegacyTodosValue = "todos"

// UnmarshalJSON decodes a Delta, including one written by an older version
// that kept the plan in a field of its own: that field becomes the value
// LegacyTodosValue, unless the delta also sets the value.
func (d *Delta) UnmarshalJSON(b []byte) error {
	// plain has Delta's fields without this method.
	type plain Delta
	var w struct {
		plain
		Legacy json.RawMessage `json:"todos"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*d = Delta(w.plain)
	if len(w.Legacy) > 0 && string(w.Legacy) != "null" {
		if _, set := d.Values[LegacyTodosValue]; !set {
			if d.Values == nil {
				d.Values = make(map[string]json.RawMessage, 1)
			}
			d.Values[LegacyTodosValue] = w.Legacy
		}
	}
	return nil
}

// UnmarshalJSON decodes a Checkpoint. It is needed because the embedded
// Delta's UnmarshalJSON would otherwise decode the whole checkpoint; the
// checkpoint's own fields and its delta's have different names, so each
// reads its own from b.
func (c *Checkpoint) UnmarshalJSON(b []byte) error {
	var w struct {
		ThreadID  string          `json:"thread_id"`
		ID        string          `json:"id"`
		ParentID  string          `json:"parent_id"`
		Step      int             `json:"step"`
		CreatedAt time.Time       `json:"created_at"`
		Meta      json.RawMessage `json:"meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var d Delta
	if err := d.UnmarshalJSON(b); err != nil {
		return err
	}
	*c = Checkpoint{ThreadID: w.ThreadID, ID: w.ID, ParentID: w.ParentID, Step: w.Step, CreatedAt: w.CreatedAt, Delta: d, Meta: w.Meta}
	return nil
}
