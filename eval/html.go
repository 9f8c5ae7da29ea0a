package eval

import (
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The pages are written by hand, not with html/template: text/template's
// reflection (reflect.Value.MethodByName) turns the linker's dead-method
// elimination off for the whole program, which put 17 MiB on the CLI
// (docs/ARCHITECTURE.md, "Modules"). Whatever a dataset names (a task, an
// agent, an error, a note) goes through esc, and every attribute's value
// is quoted.

// esc escapes s for HTML text and quoted attribute values: html.EscapeString,
// and as html/template did, "+" as "&#43;" and NUL as U+FFFD (so that the
// pages stay as they were).
func esc(s string) string {
	return escExtra.Replace(html.EscapeString(s))
}

var escExtra = strings.NewReplacer("+", "&#43;", "\x00", "\uFFFD")

// f formats a coordinate.
func f(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// itoa formats a count.
func itoa(n int) string { return strconv.Itoa(n) }

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
	return writePage(w, d.write)
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
	return writePage(w, d.write)
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

// writePage builds a page with write and writes it to w.
func writePage(w io.Writer, write func(*strings.Builder)) error {
	var b strings.Builder
	write(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// cat writes its pieces to b.
func cat(b *strings.Builder, pieces ...string) {
	for _, p := range pieces {
		b.WriteString(p)
	}
}

const pageStyle = `<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 2px 6px; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.total td { font-weight: bold; }
svg { display: block; margin: 1em 0; font-size: 11px; }
svg .axis { stroke: #888; }
svg .grid { stroke: #eee; }
svg circle.a { fill: #1f77b4; fill-opacity: 0.8; }
svg rect.b { fill: #ff7f0e; fill-opacity: 0.8; }
svg line.link { stroke: #999; stroke-dasharray: 3 3; }
.passed { fill: #2ca02c; }
.failed { fill: #d62728; }
.agent_timeout { fill: #ff7f0e; }
.agent_error { fill: #9467bd; }
.verifier_error { fill: #7f7f7f; }
pre { white-space: pre-wrap; background: #f6f6f6; padding: 4px; margin: 0; }
.note { color: #a33; }
</style>`

func (d *scorecardPage) write(b *strings.Builder) {
	agent, k := esc(d.Agent), itoa(d.K)
	cat(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Eval: ", agent, ", k = ", k, "</title>\n",
		pageStyle, "\n</head>\n<body>\n<h1>Eval: ", agent, ", k = ", k, "</h1>\n<p>", itoa(len(d.Rows)), " tasks in ", esc(d.Elapsed), ".")
	if d.Partial {
		b.WriteString(` <span class="note">Partial: the eval was cut short, and a task is scored on the trials it has.</span>`)
	}
	cat(b, "</p>\n<table>\n<thead><tr><th>task</th><th>trials</th><th>passed</th><th>pass@", k, "</th><th>avg@", k,
		"</th><th>input</th><th>cache write</th><th>cache read</th><th>output</th><th>cost</th><th>steps</th><th>wall</th><th>outcomes</th></tr></thead>\n<tbody>")
	for _, r := range d.Rows {
		b.WriteString("\n<tr>")
		r.write(b, esc(r.Task))
	}
	b.WriteString("\n<tr class=\"total\">")
	d.Total.write(b, "all")
	b.WriteString("\n</tbody>\n</table>\n<h2>Score against cost</h2>\n")
	d.Scatter.write(b)
	b.WriteString("\n<h2>Outcomes</h2>\n")
	d.Outcomes.write(b)
	if len(d.Failures) > 0 {
		b.WriteString("\n<h2>Trials that did not pass</h2>\n<table>\n<thead><tr><th>task</th><th>trial</th><th>outcome</th><th>reward</th><th>error</th></tr></thead>\n<tbody>")
		for _, x := range d.Failures {
			cat(b, "\n<tr><td>", esc(x.Task), `</td><td class="n">`, itoa(x.N), "</td><td>", esc(x.Outcome), `</td><td class="n">`,
				esc(fmt.Sprintf("%.2f", x.Reward)), "</td><td>")
			if x.Error != "" {
				cat(b, "<pre>", esc(x.Error), "</pre>")
			}
			b.WriteString("</td></tr>")
		}
		b.WriteString("\n</tbody>\n</table>")
	}
	b.WriteString("\n</body>\n</html>\n")
}

// write writes the row's cells after its <tr>, the first (its task)
// already escaped, and its </tr>.
func (r scoreRowData) write(b *strings.Builder, task string) {
	const n = `</td><td class="n">`
	cat(b, "<td>", task, n, itoa(r.Trials), n, itoa(r.Passed), n, esc(r.PassAtK), n, esc(r.AvgAtK),
		n, itoa(r.Input), n, itoa(r.CacheWrite), n, itoa(r.CacheRead), n, itoa(r.Output),
		n, esc(r.Cost), n, itoa(r.Steps), n, esc(r.Wall), "</td><td>", esc(r.Outcomes), "</td></tr>")
}

func (d *comparePage) write(b *strings.Builder) {
	cat(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Eval comparison</title>\n",
		pageStyle, "\n</head>\n<body>\n<h1>Eval comparison</h1>\n<p>A: ", esc(d.A), "<br>B: ", esc(d.B), "</p>")
	for _, note := range d.Notes {
		cat(b, "\n<p class=\"note\">Note: ", esc(note), ".</p>")
	}
	b.WriteString("\n<table>\n<thead><tr><th>task</th><th>A pass@k</th><th>B pass@k</th><th>B − A</th><th>95% CI</th><th>A passed</th><th>B passed</th><th>A cost</th><th>B cost</th><th>A tokens</th><th>B tokens</th></tr></thead>\n<tbody>")
	for _, r := range d.Rows {
		cat(b, "\n<tr><td>", esc(r.Task))
		if r.Only != "" {
			cat(b, " <em>(", esc(r.Only), ")</em>")
		}
		b.WriteString("</td>")
		cell := func(c compareCell, v string) {
			if !c.In {
				v = "–"
			}
			cat(b, `<td class="n">`, esc(v), "</td>")
		}
		cell(r.A, r.A.PassAtK)
		cell(r.B, r.B.PassAtK)
		cat(b, `<td class="n">`, esc(r.Diff), `</td><td class="n">`, esc(r.CI), "</td>")
		cell(r.A, r.A.Passed)
		cell(r.B, r.B.Passed)
		cell(r.A, r.A.Cost)
		cell(r.B, r.B.Cost)
		cell(r.A, r.A.Tokens)
		cell(r.B, r.B.Tokens)
		b.WriteString("</tr>")
	}
	t := d.Total
	cat(b, "\n<tr class=\"total\"><td>all (", itoa(t.Tasks), " in both)</td>")
	if t.Tasks != 0 {
		const n = `</td><td class="n">`
		cat(b, `<td class="n">`, esc(fmt.Sprintf("%.3f", t.A)), n, esc(fmt.Sprintf("%.3f", t.B)), n, esc(fmt.Sprintf("%+.3f", t.Diff)),
			n, esc(d.TotalCI), "</td><td></td><td></td><td class=\"n\">", esc(fmt.Sprintf("$%.4f", t.ACost)), n, esc(fmt.Sprintf("$%.4f", t.BCost)),
			n, itoa(t.ATokens), n, itoa(t.BTokens), "</td>")
	} else {
		b.WriteString(`<td colspan="10"></td>`)
	}
	resamples := itoa(t.Resamples)
	cat(b, "</tr>\n</tbody>\n</table>\n<p>B − A is B's pass@k less A's, and each 95% CI is for it. A task's is Newcombe's hybrid score interval when both sides score pass@1 (k = 1, or one trial), otherwise a bootstrap of its trials (marked †: ",
		resamples, " draws, each side's pass rate from its Jeffreys posterior, then its trials); the total's is a two-stage bootstrap over the tasks in both, paired, and the trials within each (",
		resamples, " resamples, fixed seed).</p>\n<h2>Score against cost</h2>\n")
	d.Scatter.write(b)
	b.WriteString("\n<h2>Outcomes</h2>\n")
	d.Outcomes.write(b)
	b.WriteString("\n</body>\n</html>\n")
}

func (s *svgScatter) write(b *strings.Builder) {
	w, h := itoa(s.W), itoa(s.H)
	x0, x1, y0, y1 := f(s.X0), f(s.X1), f(s.Y0), f(s.Y1)
	cat(b, `<svg width="`, w, `" height="`, h, `" viewBox="0 0 `, w, " ", h, `" role="img" aria-label="pass@k against cost per task">`)
	for _, t := range s.YTicks {
		pos := f(t.Pos)
		cat(b, "\n<line class=\"grid\" x1=\"", x0, `" y1="`, pos, `" x2="`, x1, `" y2="`, pos, `"/><text x="`, x0, `" dx="-4" y="`, pos, `" dy="4" text-anchor="end">`, esc(t.Label), "</text>")
	}
	for _, t := range s.XTicks {
		pos := f(t.Pos)
		cat(b, "\n<line class=\"grid\" x1=\"", pos, `" y1="`, y0, `" x2="`, pos, `" y2="`, y1, `"/><text x="`, pos, `" y="`, y1, `" dy="14" text-anchor="middle">`, esc(t.Label), "</text>")
	}
	cat(b, "\n<line class=\"axis\" x1=\"", x0, `" y1="`, y1, `" x2="`, x1, `" y2="`, y1, `"/>`,
		"\n<line class=\"axis\" x1=\"", x0, `" y1="`, y0, `" x2="`, x0, `" y2="`, y1, `"/>`,
		"\n<text x=\"", x1, `" y="`, h, `" dy="-4" text-anchor="end">`, esc(s.XLabel), "</text>",
		"\n<text x=\"4\" y=\"", y0, `" dy="-16">`, esc(s.YLabel), "</text>")
	for _, l := range s.Links {
		cat(b, "\n<line class=\"link\" x1=\"", f(l.X1), `" y1="`, f(l.Y1), `" x2="`, f(l.X2), `" y2="`, f(l.Y2), `"/>`)
	}
	for _, se := range s.Series {
		square := se.Class == "b"
		if len(s.Series) > 1 {
			b.WriteString("\n<g>")
			if square {
				cat(b, `<rect class="b" x="`, f(se.MarkX), `" y="`, f(se.MarkY), `" width="8" height="8" transform="translate(-4 -4)"/>`)
			} else {
				cat(b, `<circle class="a" cx="`, f(se.MarkX), `" cy="`, f(se.MarkY), `" r="4"/>`)
			}
			cat(b, `<text x="`, f(se.TextX), `" y="`, f(se.TextY), `">`, esc(se.Name), "</text></g>")
		}
		for _, p := range se.Points {
			b.WriteString("\n<g>")
			if square {
				cat(b, `<rect class="b" x="`, f(p.X), `" y="`, f(p.Y), `" width="8" height="8" transform="translate(-4 -4)">`)
			} else {
				cat(b, `<circle class="a" cx="`, f(p.X), `" cy="`, f(p.Y), `" r="4">`)
			}
			cat(b, "<title>", esc(p.Title), "</title>")
			if square {
				b.WriteString("</rect>")
			} else {
				b.WriteString("</circle>")
			}
			cat(b, `<text x="`, f(p.LX), `" y="`, f(p.LY), `">`, esc(p.Label), "</text></g>")
		}
	}
	b.WriteString("\n</svg>")
}

func (s *svgBars) write(b *strings.Builder) {
	w, h := itoa(s.W), itoa(s.H)
	cat(b, `<svg width="`, w, `" height="`, h, `" viewBox="0 0 `, w, " ", h, `" role="img" aria-label="outcomes per task">`)
	for _, l := range s.Legend {
		cat(b, "\n<rect class=\"", esc(l.Class), `" x="`, f(l.X), `" y="4" width="12" height="12"/><text x="`, f(l.TextX), `" y="14">`, esc(l.Label), "</text>")
	}
	for _, r := range s.Rows {
		y := f(r.Y)
		cat(b, "\n<g><text x=\"0\" y=\"", f(r.TextY), `">`, esc(r.Label), "<title>", esc(r.Title), "</title></text>")
		for _, sg := range r.Segs {
			cat(b, `<rect class="`, esc(sg.Class), `" x="`, f(sg.X), `" y="`, y, `" width="`, f(sg.W), `" height="16"><title>`, esc(sg.Title), "</title></rect>")
		}
		cat(b, `<text x="`, f(r.CountX), `" y="`, f(r.TextY), `">`, esc(r.Count), "</text></g>")
	}
	b.WriteString("\n</svg>")
}
