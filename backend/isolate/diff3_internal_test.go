package isolate

import (
	"math/rand/v2"
	"testing"
)

// TestMatchIsLongest holds match to a longest common subsequence (by a
// table of lengths) on random texts over few letters: increasing, pairs
// of equal lines, as many as the longest.
func TestMatchIsLongest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	gen := func() []string {
		out := make([]string, r.IntN(30))
		for i := range out {
			out[i] = string(rune('a' + r.IntN(4)))
		}
		return out
	}
	for range 2000 {
		a, b := gen(), gen()
		m := match(a, b)
		n, last := 0, -1
		for i, j := range m {
			if j < 0 {
				continue
			}
			if j <= last || a[i] != b[j] {
				t.Fatalf("match(%q, %q) = %v: not a common subsequence", a, b, m)
			}
			last = j
			n++
		}
		if want := lcs(a, b); n != want {
			t.Fatalf("match(%q, %q) pairs %d lines, the longest is %d", a, b, n, want)
		}
	}
}

func lcs(a, b []string) int {
	t := make([][]int, len(a)+1)
	for i := range t {
		t[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	return t[0][0]
}
