package backend

import (
	"slices"
	"strings"
	"testing"
)

// FuzzStringLines checks that reading in-memory content gives what reading
// it through a reader gives.
func FuzzStringLines(f *testing.F) {
	f.Add("a\nb\n", 0, 0)
	f.Add("a\r\nb", 1, 1)
	f.Add("", 0, 5)
	f.Add("\n\n\n", 2, 1)
	f.Add("x", 3, 0)
	f.Fuzz(func(t *testing.T, s string, offset, limit int) {
		offset, limit = offset%50, limit%50
		want, werr := scanLines(strings.NewReader(s), offset, limit)
		got, gerr := stringLines(s, offset, limit)
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Fatalf("%q %d %d: errors %v / %v", s, offset, limit, werr, gerr)
		}
		if !slices.Equal(want.Lines, got.Lines) || want.Offset != got.Offset {
			t.Fatalf("%q %d %d: %q@%d, want %q@%d", s, offset, limit, got.Lines, got.Offset, want.Lines, want.Offset)
		}
	})
}
