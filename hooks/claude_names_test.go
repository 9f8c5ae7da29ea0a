package hooks

import (
	"maps"
	"testing"
)

func TestClaudeNames(t *testing.T) {
	for _, c := range []struct {
		matcher string
		want    map[string]string
	}{
		{"Write|Edit", map[string]string{"Write": "write_file", "Edit": "edit_file"}},
		{"write_file|Bash", map[string]string{"Bash": "execute"}},
		{"MultiEdit", map[string]string{"MultiEdit": "edit_file"}},
		{"write_file|edit_file", nil},
		{"mcp__.*", nil},
		{"", nil},
	} {
		if got := ClaudeNames(c.matcher); !maps.Equal(got, c.want) {
			t.Errorf("%q: %v, want %v", c.matcher, got, c.want)
		}
	}
}
