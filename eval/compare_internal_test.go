package eval

import (
	"math"
	"math/rand/v2"
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

func TestBootstrapDiff(t *testing.T) {
	side := func(passed, trials, k int) sideTrials { return sideTrials{passed, trials, k} }
	for _, tt := range []struct {
		name   string
		pairs  []taskPair
		diff   float64
		lo, hi float64 // bounds the interval must lie within
	}{
		{"no trials to draw", []taskPair{{side(0, 0, 1), side(0, 0, 1)}}, 0, 0, 0},
		{"spread", []taskPair{{side(5, 10, 1), side(5, 10, 1)}, {side(5, 10, 1), side(5, 10, 1)}}, 0, -0.6, 0.6},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := bootstrapDiff(tt.pairs, tt.diff, Resamples, bootstrapSeed)
			if lo < tt.lo-1e-12 || hi > tt.hi+1e-12 || lo > hi || lo > tt.diff || hi < tt.diff {
				t.Errorf("[%v, %v], want within [%v, %v] and holding %v", lo, hi, tt.lo, tt.hi, tt.diff)
			}
			if tt.name == "spread" && (lo > -0.1 || hi < 0.1) {
				t.Errorf("[%v, %v] is too narrow for 5 of 10 against 5 of 10", lo, hi)
			}
			if lo2, hi2 := bootstrapDiff(tt.pairs, tt.diff, Resamples, bootstrapSeed); lo2 != lo || hi2 != hi {
				t.Error("not deterministic")
			}
		})
	}
}

// betaHalf draws Beta(a + ½, b + ½): its mean is (a + ½)/(a + b + 1).
func TestBetaHalf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, ab := range [][2]int{{0, 0}, {0, 1}, {3, 1}, {10, 0}} {
		var sum float64
		const n = 20000
		for range n {
			sum += betaHalf(rng, ab[0], ab[1])
		}
		want := (float64(ab[0]) + 0.5) / float64(ab[0]+ab[1]+1)
		if got := sum / n; math.Abs(got-want) > 0.01 {
			t.Errorf("Beta(%d+½, %d+½): mean %.4f, want %.4f", ab[0], ab[1], got, want)
		}
	}
}

// The scatter plot leaves out a point of no finite place.
func TestScatterSkipsNonFinite(t *testing.T) {
	for _, p := range []svgPoint{{Task: "nan", Cost: math.NaN()}, {Task: "inf", Cost: math.Inf(1)}, {Task: "score", Cost: 1, Score: math.NaN()}} {
		s := scatter("pass@1", []svgSeries{{Points: []svgPoint{{Task: "ok", Cost: 0.5, Score: 1}, p}}}, false)
		if len(s.Series[0].Points) != 1 || s.Series[0].Points[0].Task != "ok" || s.XTicks[4].Label != "$0.5" {
			t.Errorf("%s: %+v", p.Task, s.Series[0].Points)
		}
		for _, q := range s.Series[0].Points {
			if math.IsNaN(q.X) || math.IsNaN(q.Y) || math.IsInf(q.X, 0) {
				t.Errorf("%s: a point at %v, %v", p.Task, q.X, q.Y)
			}
		}
	}
}
