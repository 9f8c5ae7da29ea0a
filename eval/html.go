package eval

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"time"
)

//go:embed html.tmpl
var htmlSource string

// pages are the HTML pages: html/template escapes what a dataset names
// (tasks, errors) in each context it lands in.
var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"f": func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) },
}).Parse(htmlSource))

// outcomeOrder is the order outcomes are drawn and counted in.
var outcomeOrder = []Outcome{Passed, Failed, AgentTimeout, AgentError, VerifierError}

// HTML writes the scorecard as one self-contained HTML page (no script,
// nothing fetched, the charts inline SVG): the table of Markdown, a
// scatter plot of each task's pass@k against its cost, each task's
// outcomes as a stacked bar, and the trials that did not pass with their
// errors.
func (sc *Scorecard) HTML(w io.Writer) error {
	d := scorecardPage{Agent: sc.Agent, K: sc.K, Partial: sc.Partial, Elapsed: sc.Elapsed.Round(time.Millisecond).String()}
	var pts []svgPoint
	var in []barInput
	for _, ts := range sc.Tasks {
		d.Rows = append(d.Rows, scoreRow(ts))
		pts = append(pts, svgPoint{Task: ts.Task, Cost: ts.Usage.Cost, Score: ts.PassAtK,
			Title: fmt.Sprintf("%s: pass@%d %.3f, $%.4f", ts.Task, sc.K, ts.PassAtK, ts.Usage.Cost)})
		in = append(in, barInput{Label: ts.Task, Title: ts.Task, Outcomes: ts.Outcomes, Trials: ts.Trials})
		for _, r := range ts.Results {
			if r.Outcome != Passed {
				d.Failures = append(d.Failures, failure{Task: r.Task, N: r.N, Outcome: string(r.Outcome), Reward: r.Reward, Error: clipRunes(r.Error, 2000)})
			}
		}
	}
	d.Total = scoreRow(sc.Total)
	d.Scatter = scatter(fmt.Sprintf("pass@%d", sc.K), []svgSeries{{Name: sc.Agent, Class: "a", Points: pts}}, false)
	d.Outcomes = bars(in)
	return pages.ExecuteTemplate(w, "scorecard", d)
}

// HTML writes the comparison as one self-contained HTML page: the table
// of Markdown, each task's pass@k against its cost in A and in B (a line
// from A to B for a task in both), and each task's outcomes in A and B.
func (c *Comparison) HTML(w io.Writer) error {
	d := comparePage{A: c.A.title(), B: c.B.title(), Notes: c.Notes, Total: c.Total, TotalCI: c.Total.CI.String()}
	var pa, pb []svgPoint
	var in []barInput
	for _, tc := range c.Tasks {
		row := compareRow{Task: tc.Task, CI: tc.CI.String()}
		if tc.CIMethod == CIBootstrap {
			row.CI += " †"
		}
		if tc.A != nil && tc.B != nil {
			row.Diff = fmt.Sprintf("%+.3f", tc.Diff)
		}
		for _, s := range []struct {
			side *TaskSide
			name string
			k    int
			pts  *[]svgPoint
			cell *compareCell
		}{{tc.A, "A", c.A.K, &pa, &row.A}, {tc.B, "B", c.B.K, &pb, &row.B}} {
			if s.side == nil {
				row.Only = map[string]string{"A": "B only", "B": "A only"}[s.name]
				continue
			}
			*s.cell = compareCell{In: true, PassAtK: fmt.Sprintf("%.3f", s.side.PassAtK), Passed: fmt.Sprintf("%d/%d", s.side.Passed, s.side.Trials),
				Cost: fmt.Sprintf("$%.4f", s.side.Cost), Tokens: strconv.Itoa(s.side.Tokens)}
			*s.pts = append(*s.pts, svgPoint{Task: tc.Task, Cost: s.side.Cost, Score: s.side.PassAtK,
				Title: fmt.Sprintf("%s (%s): pass@%d %.3f, $%.4f", tc.Task, s.name, s.k, s.side.PassAtK, s.side.Cost)})
			in = append(in, barInput{Label: s.name + " · " + tc.Task, Title: tc.Task + " (" + s.name + ")", Outcomes: s.side.Outcomes, Trials: s.side.Trials})
		}
		d.Rows = append(d.Rows, row)
	}
	d.Scatter = scatter("pass@k", []svgSeries{{Name: "A", Class: "a", Points: pa}, {Name: "B", Class: "b", Points: pb}}, true)
	d.Outcomes = bars(in)
	return pages.ExecuteTemplate(w, "compare", d)
}

type scorecardPage struct {
	Agent    string
	K        int
	Partial  bool
	Elapsed  string
	Rows     []scoreRowData
	Total    scoreRowData
	Scatter  svgScatter
	Outcomes svgBars
	Failures []failure
}

type scoreRowData struct {
	Task                                  string
	Trials, Passed                        int
	PassAtK, AvgAtK, Cost, Wall, Outcomes string
	Input, CacheWrite, CacheRead, Output  int
	Steps                                 int
}

func scoreRow(ts TaskScore) scoreRowData {
	u := ts.Usage
	return scoreRowData{Task: ts.Task, Trials: ts.Trials, Passed: ts.Passed, PassAtK: fmt.Sprintf("%.3f", ts.PassAtK), AvgAtK: fmt.Sprintf("%.3f", ts.AvgAtK),
		Cost: fmt.Sprintf("$%.4f", u.Cost), Wall: ts.Wall.Round(time.Millisecond).String(), Outcomes: outcomes(ts.Outcomes),
		Input: u.InputTokens, CacheWrite: u.CacheWriteTokens, CacheRead: u.CacheReadTokens, Output: u.OutputTokens, Steps: u.Steps}
}

type failure struct {
	Task    string
	N       int
	Outcome string
	Reward  float64
	Error   string
}

type comparePage struct {
	A, B     string
	Notes    []string
	Rows     []compareRow
	Total    TotalComparison
	TotalCI  string
	Scatter  svgScatter
	Outcomes svgBars
}

type compareRow struct {
	Task, Only, Diff, CI string
	A, B                 compareCell
}

type compareCell struct {
	In                            bool
	PassAtK, Passed, Cost, Tokens string
}

// The scatter plot's geometry, in SVG's pixels.
const (
	plotW, plotH                             = 640, 360
	plotLeft, plotRight, plotTop, plotBottom = 56, 24, 30, 44
)

type svgScatter struct {
	W, H           int
	X0, X1, Y0, Y1 float64
	XTicks, YTicks []svgTick
	XLabel, YLabel string
	Series         []svgSeries
	Links          []svgLine
}

type svgTick struct {
	Pos   float64
	Label string
}

type svgSeries struct {
	Name, Class string
	Points      []svgPoint
	// MarkX, MarkY, TextX, TextY are where the legend names it.
	MarkX, MarkY, TextX, TextY float64
}

type svgPoint struct {
	Task        string
	Cost, Score float64
	// X, Y are where it is drawn; LX, LY where its label is.
	X, Y, LX, LY float64
	Label, Title string
}

type svgLine struct{ X1, Y1, X2, Y2 float64 }

// scatter lays out pass@k (y, 0 to 1) against cost (x, 0 to a round
// maximum); link draws a line between a task's points of the first two
// series.
func scatter(ylabel string, series []svgSeries, link bool) svgScatter {
	s := svgScatter{W: plotW, H: plotH, X0: plotLeft, X1: plotW - plotRight, Y0: plotTop, Y1: plotH - plotBottom, YLabel: ylabel, XLabel: "cost per task (USD)"}
	// A point of no finite place (a NaN or infinite cost or score) is
	// left out: it would put NaN in the SVG, and the axis at infinity.
	for si := range series {
		series[si].Points = slices.DeleteFunc(slices.Clone(series[si].Points), func(p svgPoint) bool {
			return !isFinite(p.Cost) || !isFinite(p.Score)
		})
	}
	var maxCost float64
	for _, se := range series {
		for _, p := range se.Points {
			maxCost = max(maxCost, p.Cost)
		}
	}
	top := niceCeil(maxCost)
	if maxCost == 0 {
		s.XLabel = "cost per task (USD; none recorded)"
	}
	for i := range 5 {
		v := top * float64(i) / 4
		s.XTicks = append(s.XTicks, svgTick{Pos: s.X0 + (s.X1-s.X0)*v/top, Label: "$" + strconv.FormatFloat(v, 'g', 4, 64)})
		y := float64(i) / 4
		s.YTicks = append(s.YTicks, svgTick{Pos: s.Y1 - (s.Y1-s.Y0)*y, Label: strconv.FormatFloat(y, 'f', 2, 64)})
	}
	// Labels of points drawn at the same place are stacked.
	stacked := map[[2]int]int{}
	at := map[string][]svgPoint{}
	for si := range series {
		se := &series[si]
		se.MarkX, se.MarkY = s.X1-70+40*float64(si), s.Y0-16
		se.TextX, se.TextY = se.MarkX+10, se.MarkY+4
		for i := range se.Points {
			p := &se.Points[i]
			p.X = s.X0 + (s.X1-s.X0)*p.Cost/top
			p.Y = s.Y1 - (s.Y1-s.Y0)*p.Score
			key := [2]int{int(math.Round(p.X / 4)), int(math.Round(p.Y / 4))}
			p.LX, p.LY = p.X+7, p.Y+4+12*float64(stacked[key])
			stacked[key]++
			p.Label = clipRunes(p.Task, 24)
			at[p.Task] = append(at[p.Task], *p)
		}
	}
	if link && len(series) >= 2 {
		for _, p := range series[0].Points {
			if q := at[p.Task]; len(q) == 2 {
				s.Links = append(s.Links, svgLine{q[0].X, q[0].Y, q[1].X, q[1].Y})
			}
		}
	}
	s.Series = series
	return s
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// niceCeil is the least of 1, 2 or 5 times a power of ten at or above x
// (1 for x ≤ 0).
func niceCeil(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if x <= m*p*(1+1e-9) {
			return m * p
		}
	}
	return 10 * p
}

type barInput struct {
	Label, Title string
	Outcomes     map[Outcome]int
	Trials       int
}

type svgBars struct {
	W, H   int
	Rows   []svgBarRow
	Legend []svgLegend
}

type svgBarRow struct {
	Y, TextY     float64
	Label, Title string
	Segs         []svgSeg
	Count        string
	CountX       float64
}

type svgSeg struct {
	X, W         float64
	Class, Title string
}

type svgLegend struct {
	X, TextX     float64
	Class, Label string
}

// The outcome bars' geometry.
const (
	barLabelW, barW, barRowH, barLegendH = 200, 380, 20, 28
)

// bars lays out a stacked bar of outcomes per row, as shares of its
// trials.
func bars(in []barInput) svgBars {
	b := svgBars{W: barLabelW + barW + 90, H: barLegendH + barRowH*len(in) + 4}
	for i, o := range outcomeOrder {
		x := float64(i) * 120
		b.Legend = append(b.Legend, svgLegend{X: x, TextX: x + 16, Class: string(o), Label: string(o)})
	}
	for i, r := range in {
		y := float64(barLegendH + barRowH*i)
		row := svgBarRow{Y: y, TextY: y + 13, Label: clipRunes(r.Label, 30), Title: r.Title, Count: trials(r.Trials), CountX: barLabelW + barW + 6}
		x := float64(barLabelW)
		for _, o := range outcomeOrder {
			n := r.Outcomes[o]
			if n == 0 || r.Trials == 0 {
				continue
			}
			w := barW * float64(n) / float64(r.Trials)
			row.Segs = append(row.Segs, svgSeg{X: x, W: w, Class: string(o), Title: fmt.Sprintf("%s: %s %d of %d", r.Title, o, n, r.Trials)})
			x += w
		}
		b.Rows = append(b.Rows, row)
	}
	return b
}

func trials(n int) string {
	if n == 1 {
		return "1 trial"
	}
	return strconv.Itoa(n) + " trials"
}

// clipRunes keeps the first n runes of s, marking a cut with "…".
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
