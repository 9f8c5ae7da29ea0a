package store

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// TestCloneValueAsJSON: a value is stored as a round trip through JSON
// would leave it, whether it is copied directly or goes through JSON.
func TestCloneValueAsJSON(t *testing.T) {
	type point struct{ X int }
	values := []map[string]any{
		{"s": "text", "b": true, "n": nil, "f": 1.5},
		{"i": 7, "i64": int64(1796166909894293273), "i32": int32(-3), "u32": uint32(4)},
		{"nested": map[string]any{"list": []any{1, "two", map[string]any{"three": 3.0}}, "empty": map[string]any{}}},
		{"nilmap": map[string]any(nil), "nillist": []any(nil), "emptylist": []any{}},
		{"bad utf-8": "a\xffb", "\xfekey": 1},
		{"struct": point{X: 2}, "strings": []string{"a", "b"}, "int slice": []int{1}},
	}
	for _, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		got, err := cloneValue(v)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("cloneValue(%#v) = %#v, %v; want %#v", v, got, err, want)
		}
	}
	if _, err := cloneValue(map[string]any{"nan": math.NaN()}); err == nil {
		t.Error("a NaN was stored: JSON has no text for it")
	}
}
