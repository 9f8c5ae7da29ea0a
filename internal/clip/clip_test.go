package clip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc... (6 bytes)"},
		{"aé", 2, "a... (3 bytes)"}, // é is two bytes: not split
		{"abc", 0, "... (3 bytes)"},
		{"abc", -1, "... (3 bytes)"},
	}
	for _, tt := range tests {
		if got := Text(tt.s, tt.n); got != tt.want {
			t.Errorf("Text(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func FuzzText(f *testing.F) {
	f.Add("héllo wörld", 4)
	f.Fuzz(func(t *testing.T, s string, n int) {
		got := Text(s, n)
		if len(s) <= n {
			if got != s {
				t.Fatalf("changed a short string")
			}
			return
		}
		kept, _, ok := strings.Cut(got, "... (")
		if !ok || !strings.HasPrefix(s, kept) || len(kept) > max(n, 0) {
			t.Fatalf("Text(%q, %d) = %q", s, n, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(kept) {
			t.Fatalf("split a rune: %q", got)
		}
	})
}

func TestRuneOffset(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want int
	}{{"abc", 2, 2}, {"éa", 1, 2}, {"ab", 5, 2}, {"ab", 0, 0}, {"\xffa", 1, 1}} {
		if got := RuneOffset(tt.s, tt.n); got != tt.want {
			t.Errorf("RuneOffset(%q, %d) = %d, want %d", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestPrefix(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{{"short", 10, "short"}, {"abcdef", 3, "abc"}, {"aé", 2, "a"}, {"abc", 0, ""}, {"abc", -1, ""}} {
		if got := Prefix(tt.s, tt.n); got != tt.want {
			t.Errorf("Prefix(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
