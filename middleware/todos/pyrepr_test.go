package todos

import (
	"strings"
	"testing"
)

// TestPyRepr holds pyRepr to what Python's repr() prints for each string.
func TestPyRepr(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", `'plain'`},
		{"it's", `"it's"`},
		{`say "hi"`, `'say "hi"'`},
		{`both ' and "`, `'both \' and "'`},
		{`a\b`, `'a\\b'`},
		{"x\ny\tz\r", `'x\ny\tz\r'`},
		{"\x00\x1f\x7f", `'\x00\x1f\x7f'`},
		{"é ✓ 😀", `'é ✓ 😀'`},
		{"\u00a0", `'\xa0'`},
		{"\u200b", `'\u200b'`},
		{"\U000e0001", `'\U000e0001'`},
		{"", `''`},
	} {
		var b strings.Builder
		pyRepr(&b, tc.in)
		if b.String() != tc.want {
			t.Errorf("pyRepr(%q) = %s, want %s", tc.in, b.String(), tc.want)
		}
	}
}
