// Package streamtest cuts scripted answers into the pieces a provider's
// stream delivers them in; the providers' fake servers share it.
package streamtest

import "strings"

// Words cuts text into deltas of about three words, the way the APIs
// stream text.
func Words(text string) []string {
	if text == "" {
		return nil
	}
	words := strings.SplitAfter(text, " ")
	var out []string
	for i := 0; i < len(words); i += 3 {
		out = append(out, strings.Join(words[i:min(i+3, len(words))], ""))
	}
	return out
}

// Fragments cuts s into pieces of n bytes, the way the APIs stream tool
// arguments (a fragment need not end at a token boundary).
func Fragments(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
