package llm

import "testing"

func TestAppendSystem(t *testing.T) {
	var r Request
	r.AppendSystem("a")
	r.AppendSystem("b")
	if r.System != "a\n\nb" {
		t.Errorf("System = %q, want the sections a blank line apart", r.System)
	}
}
