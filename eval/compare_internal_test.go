package eval

import (
	"math"
	"testing"
)

// Newcombe's hybrid score interval, against the examples of Newcombe
// (1998), Statistics in Medicine 17, table II, method 10.
func TestNewcombe(t *testing.T) {
	for _, tt := range []struct {
		x1, n1, x2, n2 int
		lo, hi         float64
	}{
		{48, 80, 56, 70, 0.0524, 0.3339},
		{3, 10, 9, 10, 0.1705, 0.8090},
		{0, 29, 5, 56, -0.0381, 0.1926},
		{0, 20, 0, 10, -0.1611, 0.2775},
		{0, 10, 0, 10, -0.2775, 0.2775},
		{0, 20, 10, 10, 0.6791, 1},
		{0, 10, 10, 10, 0.6075, 1}, // all against none: clamped at 1
		{0, 0, 1, 1, -1, 1},        // no trials
	} {
		lo, hi := newcombe(tt.x1, tt.n1, tt.x2, tt.n2)
		if math.Abs(lo-tt.lo) > 5e-4 || math.Abs(hi-tt.hi) > 5e-4 {
			t.Errorf("%d/%d − %d/%d: [%.4f, %.4f], want [%.4f, %.4f]", tt.x2, tt.n2, tt.x1, tt.n1, lo, hi, tt.lo, tt.hi)
		}
	}
}

func TestBootstrapMean(t *testing.T) {
	for _, tt := range []struct {
		name   string
		xs     []float64
		lo, hi float64 // bounds the interval must lie within
	}{
		{"all the same", []float64{0.5, 0.5, 0.5}, 0.5, 0.5},
		{"one task", []float64{-1}, -1, -1},
		{"spread", []float64{0, 1, 0, 1, 0, 1, 0, 1}, 0.1, 0.9},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := bootstrapMean(tt.xs, Resamples, bootstrapSeed)
			if lo < tt.lo-1e-12 || hi > tt.hi+1e-12 || lo > hi {
				t.Errorf("[%v, %v], want within [%v, %v]", lo, hi, tt.lo, tt.hi)
			}
			if tt.name == "spread" && (lo > 0.25 || hi < 0.75) {
				t.Errorf("[%v, %v] is too narrow for a mean of 0.5 over 8 coin flips", lo, hi)
			}
			if lo2, hi2 := bootstrapMean(tt.xs, Resamples, bootstrapSeed); lo2 != lo || hi2 != hi {
				t.Error("not deterministic")
			}
		})
	}
}
