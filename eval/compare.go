package eval

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
)

// ReadScorecard reads a scorecard that deepagents eval --json wrote, and
// checks that it is one: an agent, k of at least 1, tasks with names, no
// task twice, no more passed than trials.
func ReadScorecard(path string) (*Scorecard, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	sc, err := ParseScorecard(b)
	if err != nil {
		return nil, fmt.Errorf("eval: %s: %w", path, err)
	}
	return sc, nil
}

// ErrScorecard is returned for JSON that is not a scorecard.
var ErrScorecard = errors.New("not a scorecard (deepagents eval --json writes one)")

// ParseScorecard is ReadScorecard on a file's bytes.
func ParseScorecard(b []byte) (*Scorecard, error) {
	var sc Scorecard
	if err := json.Unmarshal(b, &sc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrScorecard, err)
	}
	switch {
	case sc.Agent == "":
		return nil, fmt.Errorf("%w: no agent", ErrScorecard)
	case sc.K < 1:
		return nil, fmt.Errorf("%w: k is %d", ErrScorecard, sc.K)
	}
	seen := map[string]bool{}
	for i, ts := range sc.Tasks {
		switch {
		case ts.Task == "":
			return nil, fmt.Errorf("%w: task %d has no name", ErrScorecard, i)
		case seen[ts.Task]:
			return nil, fmt.Errorf("%w: the task %q is there twice", ErrScorecard, ts.Task)
		case ts.Trials < 1 || ts.Passed < 0 || ts.Passed > ts.Trials:
			return nil, fmt.Errorf("%w: the task %q has %d passed of %d trials", ErrScorecard, ts.Task, ts.Passed, ts.Trials)
		case ts.PassAtK < 0 || ts.PassAtK > 1:
			return nil, fmt.Errorf("%w: the task %q has a pass@k of %v", ErrScorecard, ts.Task, ts.PassAtK)
		}
		seen[ts.Task] = true
	}
	return &sc, nil
}

// Comparison is two scorecards side by side, B against A (differences
// are B − A): what Compare returns.
type Comparison struct {
	A Side `json:"a"`
	B Side `json:"b"`
	// Notes say what makes the two less comparable: another agent,
	// another k, a partial eval, tasks that only one has.
	Notes []string         `json:"notes,omitempty"`
	Tasks []TaskComparison `json:"tasks"`
	// Total is over the tasks both have.
	Total TotalComparison `json:"total"`
}

// Side is one of the scorecards compared.
type Side struct {
	Agent   string `json:"agent"`
	K       int    `json:"k"`
	Partial bool   `json:"partial,omitempty"`
	// Tasks is how many tasks it scored; PassAtK its own total's pass@k,
	// over all of them.
	Tasks   int     `json:"tasks"`
	PassAtK float64 `json:"pass_at_k"`
}

// TaskSide is one task's score in one of the scorecards compared.
type TaskSide struct {
	Trials  int     `json:"trials"`
	Passed  int     `json:"passed"`
	PassAtK float64 `json:"pass_at_k"`
	Cost    float64 `json:"cost"`
	// Tokens adds up the input, cache write, cache read and output tokens.
	Tokens   int             `json:"tokens"`
	Usage    Usage           `json:"usage"`
	Outcomes map[Outcome]int `json:"outcomes"`
}

// Interval is a confidence interval.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// TaskComparison is one task in A, in B or in both.
type TaskComparison struct {
	Task string `json:"task"`
	// A and B are the task's scores; nil where that scorecard lacks it.
	A *TaskSide `json:"a,omitempty"`
	B *TaskSide `json:"b,omitempty"`
	// Diff is B's pass@k − A's (0 unless both have the task).
	Diff float64 `json:"diff"`
	// CI is a 95% interval for Diff, the difference of the pass@k
	// printed. When both sides score pass@1 (k = 1, or one trial) it is
	// Newcombe's hybrid score interval for the difference of the pass
	// rates; otherwise a percentile bootstrap of the task's trials (see
	// TotalComparison.CI), Resamples draws from a seed of the task's
	// name. CIMethod says which. Nil unless both have the task.
	CI       *Interval `json:"ci95,omitempty"`
	CIMethod string    `json:"ci_method,omitempty"`
}

// The methods of a task's interval, in TaskComparison.CIMethod.
const (
	CINewcombe  = "newcombe"
	CIBootstrap = "bootstrap"
)

// TotalComparison is the comparison over the tasks A and B both have.
type TotalComparison struct {
	Tasks int `json:"tasks"`
	// A and B are the mean pass@k over those tasks; Diff is B − A.
	A    float64 `json:"a_pass_at_k"`
	B    float64 `json:"b_pass_at_k"`
	Diff float64 `json:"diff"`
	// CI is a 95% interval for Diff: a two-stage percentile bootstrap.
	// Each of Resamples draws takes the tasks with replacement (paired:
	// a task drawn is drawn on both sides) and, within each task drawn,
	// draws each side's trials anew: a pass rate from the Jeffreys
	// posterior of its passed of trials, Beta(passed + ½, failed + ½),
	// then that many trials passing at that rate, scored with PassAtK.
	// (The rate is drawn, not passed/trials, so that 0 of 1 and 1 of 1
	// are not certainties.) The 2.5th and 97.5th percentiles of the
	// draws' mean differences, widened if need be to hold Diff, are the
	// interval. The seed is fixed, so that the same scorecards give the
	// same interval. Nil with no task in common.
	CI        *Interval `json:"ci95,omitempty"`
	Resamples int       `json:"resamples"`
	// Cost and tokens summed over those tasks.
	ACost   float64 `json:"a_cost"`
	BCost   float64 `json:"b_cost"`
	ATokens int     `json:"a_tokens"`
	BTokens int     `json:"b_tokens"`
}

// Resamples is how many times the total's bootstrap draws the tasks.
const Resamples = 10000

// bootstrapSeed seeds the total's bootstrap: a fixed seed, so that a
// comparison's output is the same each time.
const bootstrapSeed = 45

// z95 is the standard normal's 97.5th percentile.
const z95 = 1.959963984540054

// Compare compares scorecard b with scorecard a, task by task and in all.
func Compare(a, b *Scorecard) *Comparison {
	c := &Comparison{
		A: Side{Agent: a.Agent, K: a.K, Partial: a.Partial, Tasks: len(a.Tasks), PassAtK: a.Total.PassAtK},
		B: Side{Agent: b.Agent, K: b.K, Partial: b.Partial, Tasks: len(b.Tasks), PassAtK: b.Total.PassAtK},
	}
	if a.Agent != b.Agent {
		c.Notes = append(c.Notes, fmt.Sprintf("the agents differ: A is %s, B is %s", a.Agent, b.Agent))
	}
	if a.K != b.K {
		c.Notes = append(c.Notes, fmt.Sprintf("k differs: A's pass@%d is compared with B's pass@%d", a.K, b.K))
	}
	for _, s := range []struct {
		name string
		sc   *Scorecard
	}{{"A", a}, {"B", b}} {
		if s.sc.Partial {
			c.Notes = append(c.Notes, s.name+" is partial: its eval was cut short, and its tasks are scored on the trials they have")
		}
	}
	byTask := map[string]*TaskComparison{}
	get := func(name string) *TaskComparison {
		if tc, ok := byTask[name]; ok {
			return tc
		}
		tc := &TaskComparison{Task: name}
		byTask[name] = tc
		return tc
	}
	for _, ts := range a.Tasks {
		get(ts.Task).A = taskSide(ts)
	}
	for _, ts := range b.Tasks {
		get(ts.Task).B = taskSide(ts)
	}
	var onlyA, onlyB int
	var pairs []taskPair
	for _, tc := range byTask {
		c.Tasks = append(c.Tasks, *tc)
	}
	slices.SortFunc(c.Tasks, func(x, y TaskComparison) int { return cmp.Compare(x.Task, y.Task) })
	t := &c.Total
	var sumA, sumB float64
	for i := range c.Tasks {
		tc := &c.Tasks[i]
		switch {
		case tc.B == nil:
			onlyA++
			continue
		case tc.A == nil:
			onlyB++
			continue
		}
		tc.Diff = tc.B.PassAtK - tc.A.PassAtK
		p := taskPair{a: sideTrials{tc.A.Passed, tc.A.Trials, min(a.K, tc.A.Trials)}, b: sideTrials{tc.B.Passed, tc.B.Trials, min(b.K, tc.B.Trials)}}
		pairs = append(pairs, p)
		if p.a.k <= 1 && p.b.k <= 1 {
			lo, hi := newcombe(tc.A.Passed, tc.A.Trials, tc.B.Passed, tc.B.Trials)
			tc.CI, tc.CIMethod = &Interval{Low: lo, High: hi}, CINewcombe
		} else {
			lo, hi := bootstrapDiff([]taskPair{p}, tc.Diff, Resamples, nameSeed(tc.Task))
			tc.CI, tc.CIMethod = &Interval{Low: lo, High: hi}, CIBootstrap
		}
		sumA += tc.A.PassAtK
		sumB += tc.B.PassAtK
		t.ACost += tc.A.Cost
		t.BCost += tc.B.Cost
		t.ATokens += tc.A.Tokens
		t.BTokens += tc.B.Tokens
	}
	for _, o := range []struct {
		n    int
		side string
	}{{onlyA, "A"}, {onlyB, "B"}} {
		switch {
		case o.n == 1:
			c.Notes = append(c.Notes, "1 task is in "+o.side+" only, left out of the total")
		case o.n > 1:
			c.Notes = append(c.Notes, fmt.Sprintf("%d tasks are in %s only, left out of the total", o.n, o.side))
		}
	}
	t.Tasks = len(pairs)
	t.Resamples = Resamples
	if n := float64(len(pairs)); n > 0 {
		t.A, t.B = sumA/n, sumB/n
		t.Diff = t.B - t.A
		lo, hi := bootstrapDiff(pairs, t.Diff, Resamples, bootstrapSeed)
		t.CI = &Interval{Low: lo, High: hi}
	}
	return c
}

func taskSide(ts TaskScore) *TaskSide {
	u := ts.Usage
	return &TaskSide{Trials: ts.Trials, Passed: ts.Passed, PassAtK: ts.PassAtK, Cost: u.Cost,
		Tokens: u.InputTokens + u.CacheWriteTokens + u.CacheReadTokens + u.OutputTokens, Usage: u, Outcomes: ts.Outcomes}
}

// wilson is the Wilson score interval for x successes of n at 95%.
func wilson(x, n int) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	nf := float64(n)
	p := float64(x) / nf
	z2 := z95 * z95
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := z95 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	return max(0, center-half), min(1, center+half)
}

// newcombe is Newcombe's hybrid score interval (1998, method 10) at 95%
// for p2 − p1, p1 = x1/n1 and p2 = x2/n2, independent: from each
// proportion's Wilson interval,
//
//	lower = d − sqrt((p2 − l2)² + (u1 − p1)²)
//	upper = d + sqrt((u2 − p2)² + (p1 − l1)²)
func newcombe(x1, n1, x2, n2 int) (lo, hi float64) {
	if n1 <= 0 || n2 <= 0 {
		return -1, 1 // no trials: nothing is known
	}
	p1, p2 := float64(x1)/float64(n1), float64(x2)/float64(n2)
	l1, u1 := wilson(x1, n1)
	l2, u2 := wilson(x2, n2)
	d := p2 - p1
	lo = d - math.Sqrt((p2-l2)*(p2-l2)+(u1-p1)*(u1-p1))
	hi = d + math.Sqrt((u2-p2)*(u2-p2)+(p1-l1)*(p1-l1))
	return max(-1, lo), min(1, hi)
}

// sideTrials is one side's trials of a task: passed of trials, scored
// as pass@k.
type sideTrials struct{ passed, trials, k int }

// taskPair is a task's trials in A and in B.
type taskPair struct{ a, b sideTrials }

// redraw draws s's trials anew: a pass rate from the Jeffreys posterior
// Beta(passed + ½, failed + ½), then trials trials passing at that rate,
// scored as pass@k.
func (s sideTrials) redraw(rng *rand.Rand) float64 {
	if s.trials <= 0 {
		return 0
	}
	p := betaHalf(rng, s.passed, s.trials-s.passed)
	c := 0
	for range s.trials {
		if rng.Float64() < p {
			c++
		}
	}
	return PassAtK(s.trials, c, s.k)
}

// betaHalf draws from Beta(a + ½, b + ½), as X/(X+Y) with X and Y of
// Gamma(a + ½) and Gamma(b + ½).
func betaHalf(rng *rand.Rand, a, b int) float64 {
	x, y := gammaHalf(rng, a), gammaHalf(rng, b)
	return x / (x + y)
}

// gammaHalf draws from Gamma(n + ½, 1): n exponentials and half a
// squared normal (Gamma(½)).
func gammaHalf(rng *rand.Rand, n int) float64 {
	z := rng.NormFloat64()
	g := z * z / 2
	for range n {
		g += rng.ExpFloat64()
	}
	return g
}

// bootstrapDiff is a 95% two-stage percentile bootstrap interval for the
// mean over pairs of B's pass@k less A's (diff, what was observed): r
// draws, by a PCG generator seeded with seed, each of len(pairs) pairs
// with replacement and, within each, of each side's trials (redraw);
// the draws' means sorted, the 2.5th and 97.5th percentiles read off
// (linear interpolation between order statistics), and the interval
// widened to hold diff.
func bootstrapDiff(pairs []taskPair, diff float64, r int, seed uint64) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(seed, seed))
	means := make([]float64, r)
	for i := range means {
		var sum float64
		for range pairs {
			p := pairs[rng.IntN(len(pairs))]
			a := p.a.redraw(rng)
			sum += p.b.redraw(rng) - a
		}
		means[i] = sum / float64(len(pairs))
	}
	slices.Sort(means)
	lo, hi = quantile(means, 0.025), quantile(means, 0.975)
	return min(lo, diff), max(hi, diff)
}

// nameSeed is the seed of a task's own bootstrap: its name's FNV-1a
// hash, so that a task's interval does not depend on the other tasks.
func nameSeed(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// quantile is the q-quantile of sorted xs, interpolated linearly.
func quantile(xs []float64, q float64) float64 {
	pos := q * float64(len(xs)-1)
	i := int(pos)
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	f := pos - float64(i)
	return xs[i] + f*(xs[i+1]-xs[i])
}

// Markdown writes the comparison as Markdown: the two scorecards, what
// makes them less comparable, a row per task and the total.
func (c *Comparison) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Eval comparison: A %s, B %s\n\n", c.A.title(), c.B.title())
	for _, n := range c.Notes {
		fmt.Fprintf(&b, "- Note: %s.\n", n)
	}
	if len(c.Notes) > 0 {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "| task | A pass@%d | B pass@%d | B − A | 95%% CI | A passed | B passed | A cost | B cost | A tokens | B tokens |\n", c.A.K, c.B.K)
	b.WriteString("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, tc := range c.Tasks {
		name, diff, ci := tc.Task, "", ""
		switch {
		case tc.A == nil:
			name += " (B only)"
		case tc.B == nil:
			name += " (A only)"
		default:
			diff, ci = fmt.Sprintf("%+.3f", tc.Diff), tc.CI.String()
			if tc.CIMethod == CIBootstrap {
				ci += " †"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", mdCell(name),
			tc.A.cell(func(s *TaskSide) string { return fmt.Sprintf("%.3f", s.PassAtK) }),
			tc.B.cell(func(s *TaskSide) string { return fmt.Sprintf("%.3f", s.PassAtK) }),
			diff, ci,
			tc.A.cell(func(s *TaskSide) string { return fmt.Sprintf("%d/%d", s.Passed, s.Trials) }),
			tc.B.cell(func(s *TaskSide) string { return fmt.Sprintf("%d/%d", s.Passed, s.Trials) }),
			tc.A.cell(func(s *TaskSide) string { return fmt.Sprintf("$%.4f", s.Cost) }),
			tc.B.cell(func(s *TaskSide) string { return fmt.Sprintf("$%.4f", s.Cost) }),
			tc.A.cell(func(s *TaskSide) string { return fmt.Sprint(s.Tokens) }),
			tc.B.cell(func(s *TaskSide) string { return fmt.Sprint(s.Tokens) }))
	}
	t := c.Total
	if t.Tasks > 0 {
		fmt.Fprintf(&b, "| **all** (%d in both) | %.3f | %.3f | %+.3f | %s | | | $%.4f | $%.4f | %d | %d |\n",
			t.Tasks, t.A, t.B, t.Diff, t.CI, t.ACost, t.BCost, t.ATokens, t.BTokens)
	} else {
		b.WriteString("| **all** (no task in both) | | | | | | | | | | |\n")
	}
	fmt.Fprintf(&b, "\nB − A is B's pass@k less A's, and each 95%% CI is for it. A task's is Newcombe's hybrid score interval when both sides score pass@1 (k = 1, or one trial), otherwise a bootstrap of its trials (marked †: %d draws, each side's pass rate from its Jeffreys posterior, then its trials); the total's is a two-stage bootstrap over the tasks in both, paired, and the trials within each (%d resamples, fixed seed).\n", t.Resamples, t.Resamples)
	return b.String()
}

func (s Side) title() string {
	tasks := fmt.Sprintf("%d tasks", s.Tasks)
	if s.Tasks == 1 {
		tasks = "1 task"
	}
	t := fmt.Sprintf("%s (k = %d, %s, pass@%d %.3f", s.Agent, s.K, tasks, s.K, s.PassAtK)
	if s.Partial {
		t += ", partial"
	}
	return t + ")"
}

func (s *TaskSide) cell(f func(*TaskSide) string) string {
	if s == nil {
		return "–"
	}
	return f(s)
}

// String writes the interval as [low, high], signed.
func (i *Interval) String() string {
	if i == nil {
		return ""
	}
	return fmt.Sprintf("[%+.3f, %+.3f]", i.Low, i.High)
}

// mdCell keeps a task's name from breaking its Markdown table row.
func mdCell(s string) string {
	s = strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
	return s
}
