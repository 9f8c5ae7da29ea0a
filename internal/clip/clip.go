// Package clip shortens text that is echoed back to someone who need not
// read all of it: an argument a model sent, a server's answer in an error.
package clip

import (
	"fmt"
	"unicode/utf8"
)

// Text returns s cut to at most n bytes, at the start of a rune, followed
// by how long s was; s itself when it is not longer than n.
func Text(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Prefix(s, n) + fmt.Sprintf("... (%d bytes)", len(s))
}

// Prefix returns s cut to at most n bytes, at the start of a rune, with
// nothing added.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// RuneOffset returns the byte offset after the first n runes of s (len(s)
// when s has fewer): where to cut s to keep n characters.
func RuneOffset(s string, n int) int {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}
