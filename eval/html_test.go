package eval_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/eval"
	"github.com/deepagents-go/deepagents/internal/golden"
)

func TestHTMLGolden(t *testing.T) {
	for _, tt := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"scorecard", func(b *bytes.Buffer) error { return before().HTML(b) }},
		{"compare", func(b *bytes.Buffer) error { return eval.Compare(before(), after()).HTML(b) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			// Self-contained: nothing to fetch, nothing to run.
			for _, bad := range []string{"<script", "src=", "href=", "http:", "https:", "@import", "url("} {
				if strings.Contains(page, bad) {
					t.Errorf("the page holds %q", bad)
				}
			}
			for _, want := range []string{"<svg", "<circle", `class="agent_timeout"`, "alpha", "</html>"} {
				if !strings.Contains(page, want) {
					t.Errorf("the page lacks %q", want)
				}
			}
			golden.Check(t, "testdata/"+tt.name+".html.golden", b.Bytes())
		})
	}
}

// What a dataset names (a task, an error) is escaped wherever it lands:
// the table, the charts' labels and tooltips, the errors.
func TestHTMLEscapesTheDataset(t *testing.T) {
	const hostile = "<script>alert(1)</script>"
	sc := eval.Score("harness", 1, []eval.TrialResult{
		trial(hostile, 0, eval.AgentError, 0.01, 10, `</pre><script>alert(2)</script><img src=x onerror="alert(3)">`),
		trial("plain", 0, eval.Passed, 0.02, 10, ""),
	})
	other := eval.Score(`"><svg onload=alert(4)>`, 1, []eval.TrialResult{trial(hostile, 0, eval.Passed, 0, 0, "")})
	for _, tt := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"scorecard", func(b *bytes.Buffer) error { return sc.HTML(b) }},
		{"compare", func(b *bytes.Buffer) error { return eval.Compare(sc, other).HTML(b) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			for _, bad := range []string{"<script", "<img", "<svg onload"} {
				if strings.Contains(page, bad) {
					t.Errorf("the page holds %q unescaped:\n%s", bad, page)
				}
			}
			if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
				t.Errorf("the hostile task's name is not shown escaped:\n%s", page)
			}
			if tt.name == "scorecard" && !strings.Contains(page, "&lt;/pre&gt;&lt;script&gt;alert(2)") {
				t.Errorf("the hostile error is not shown escaped")
			}
		})
	}
}

// A NaN or infinite cost (a price of inf or nan) is unpriced: the
// scorecard marshals, its HTML draws no NaN, and the cost leaves it out.
func TestNonFiniteCost(t *testing.T) {
	for _, tt := range []struct {
		name string
		cost float64
	}{{"+Inf", math.Inf(1)}, {"-Inf", math.Inf(-1)}, {"NaN", math.NaN()}} {
		t.Run(tt.name, func(t *testing.T) {
			sc := eval.Score("harness", 1, []eval.TrialResult{
				trial("alpha", 0, eval.Passed, tt.cost, 100, ""),
				trial("beta", 0, eval.Failed, 0.5, 100, ""),
			})
			if _, err := json.Marshal(sc); err != nil {
				t.Fatalf("json.Marshal: %v", err)
			}
			if sc.Total.Usage.Cost != 0.5 || sc.Total.Usage.Unpriced != eval.NonFinitePrice {
				t.Errorf("the total's cost %v, unpriced %q", sc.Total.Usage.Cost, sc.Total.Usage.Unpriced)
			}
			var page strings.Builder
			if err := sc.HTML(&page); err != nil {
				t.Fatal(err)
			}
			c := eval.Compare(sc, sc)
			if err := c.HTML(&page); err != nil {
				t.Fatal(err)
			}
			if _, err := json.Marshal(c); err != nil {
				t.Errorf("json.Marshal of the comparison: %v", err)
			}
			if s := page.String(); strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
				t.Errorf("the page draws a non-finite number")
			}
		})
	}
}
