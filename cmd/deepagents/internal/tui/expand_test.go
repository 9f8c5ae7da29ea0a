package tui

import (
	"encoding/json"
	"testing"
)

// A folded read_file result names the file and the lines read, not the
// header the model reads.
func TestReadSummary(t *testing.T) {
	args := json.RawMessage(`{"file_path":"/notes.md"}`)
	for _, c := range []struct{ name, content, want string }{
		{"whole", "@@ lines 1-2 @@\nline one\nline two", "read /notes.md, lines 1-2"},
		{"more", "@@ lines 1-2000 | next offset 2000 @@\nx", "read /notes.md, lines 1-2000 (more from line 2001)"},
		{"notice", "[line 5 is longer than the page]\n@@ lines 5-5 | next offset 5 @@\nxxx", "read /notes.md, lines 5-5 (more from line 6)\n[line 5 is longer than the page]"},
		{"empty file", "@@ lines 1-1 @@\n", "read /notes.md, lines 1-1"},
		{"no header", "a file's text", "a file's text"},
	} {
		if got := readSummary(args, c.content); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if got := readSummary(nil, "@@ lines 3-4 @@\nx"); got != "read the file, lines 3-4" {
		t.Errorf("without arguments: %q", got)
	}
}
