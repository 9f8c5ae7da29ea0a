package thread

import "testing"

func TestRootID(t *testing.T) {
	for id, want := range map[string]string{"t": "t", ChildID("t", "c1"): "t", ChildID(ChildID("t", "c1"), "c2"): "t", "": ""} {
		if got := RootID(id); got != want {
			t.Errorf("RootID(%q) = %q, want %q", id, got, want)
		}
	}
}
