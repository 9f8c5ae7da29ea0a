package eval

import (
	"math"
	"testing"
)

func TestPassAtK(t *testing.T) {
	for _, c := range []struct {
		n, c, k int
		want    float64
	}{
		{1, 1, 1, 1}, {1, 0, 1, 0}, {4, 2, 1, 0.5}, {4, 1, 2, 0.5}, {10, 3, 1, 0.3},
		{5, 0, 3, 0}, {5, 5, 3, 1}, {3, 1, 4, 0}, {5, 2, 2, 0.7},
	} {
		if got := PassAtK(c.n, c.c, c.k); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("PassAtK(%d, %d, %d) = %v, want %v", c.n, c.c, c.k, got, c.want)
		}
	}
}
