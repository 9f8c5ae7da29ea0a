package gitignore

import (
	"strings"
	"testing"
)

func TestIgnored(t *testing.T) {
	var m Matcher
	m.Add("", []byte("# build output\n*.o\n/build/\nnode_modules/\n!keep.o\ndocs/**/*.tmp\nlogs/\n\\#notes\ntrailing   \n"))
	m.Add("sub", []byte("local.txt\n/anchored.txt\n"))
	tests := []struct {
		path string
		dir  bool
		want bool
	}{
		{"a.o", false, true},
		{"deep/in/a.o", false, true},
		{"keep.o", false, false},
		{"build", true, true},
		{"build", false, false},
		{"src/build", true, false},
		{"node_modules", true, true},
		{"web/node_modules", true, true},
		{"docs/x/y/z.tmp", false, true},
		{"docs/z.tmp", false, true},
		{"other/z.tmp", false, false},
		{"#notes", false, true},
		{"trailing", false, true},
		{"sub/local.txt", false, true},
		{"sub/deeper/local.txt", false, true},
		{"local.txt", false, false},
		{"sub/anchored.txt", false, true},
		{"sub/x/anchored.txt", false, false},
		{"main.go", false, false},
	}
	for _, tc := range tests {
		if got := m.Ignored(tc.path, tc.dir); got != tc.want {
			t.Errorf("Ignored(%q, dir=%v) = %v, want %v", tc.path, tc.dir, got, tc.want)
		}
	}
}

func FuzzIgnored(f *testing.F) {
	f.Add("*.o\n!a/**/b\n/x/", "a/b/c.o", true)
	f.Fuzz(func(t *testing.T, gitignore, p string, dir bool) {
		var m Matcher
		m.Add("", []byte(gitignore))
		m.Add("a", []byte(gitignore))
		m.Ignored(p, dir)
	})
}

// TestBounded: a hostile repository's patterns are read up to the bounds.
func TestBounded(t *testing.T) {
	var m Matcher
	big := strings.Repeat("**/a/**/b/**/c*\n", MaxPatterns+5)
	for i := range 5 {
		m.Add(strings.Repeat("d/", i), []byte(big))
	}
	n := 0
	for _, r := range m.rules {
		n += len(r.patterns)
	}
	if !m.Truncated || n > MaxTotal || len(m.rules[0].patterns) > MaxPatterns {
		t.Errorf("truncated %v, %d patterns in all, %d in the first file", m.Truncated, n, len(m.rules[0].patterns))
	}
}
