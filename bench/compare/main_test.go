package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSameLines(t *testing.T) {
	tests := []struct {
		a, b string
		ok   bool
	}{
		{`{"id":"c","args":{"x":1,"y":"z"}}` + "\n", `{"args":{"y":"z","x":1},"id":"c"}`, true},
		{"{\"a\":1}\n{\"b\":2}\n", "{\"a\":1}\n{\"b\":2}\n", true},
		{"{\"a\":1}\n{\"b\":2}\n", "{\"a\":1}\n", false},
		{`{"a":"x\n"}`, `{"a":"x"}`, false},
		{`{"a":1}`, `not json`, false},
	}
	for _, tc := range tests {
		if err := sameLines([]byte(tc.a), []byte(tc.b)); (err == nil) != tc.ok {
			t.Errorf("sameLines(%q, %q) = %v, want ok=%v", tc.a, tc.b, err, tc.ok)
		}
	}
}

// events returns a CLI event stream of an n-step workload run.
func events(n int, mutate func(i int, ev string) string) []byte {
	var b strings.Builder
	b.WriteString(`{"v":1,"type":"run_start"}` + "\n")
	for i := range n {
		w := i / 3
		var ev string
		switch i % 3 {
		case 0:
			ev = fmt.Sprintf(`{"type":"tool_result","name":"write_file","content":"Updated file /d0/f%d.txt","is_error":false}`, w)
		case 1:
			ev = fmt.Sprintf(`{"type":"tool_result","name":"read_file","content":"     1\tfile %d: the quick","is_error":false}`, w)
		default:
			ev = fmt.Sprintf(`{"type":"tool_result","name":"ls","content":"/d0/f%d.txt","is_error":false}`, w)
		}
		if mutate != nil {
			ev = mutate(i, ev)
		}
		b.WriteString(ev + "\n")
	}
	b.WriteString(`{"v":1,"type":"run_end","status":"completed"}` + "\n")
	return []byte(b.String())
}

func TestCheckEvents(t *testing.T) {
	if err := checkEvents(7, events(7, nil)); err != nil {
		t.Fatalf("good stream: %v", err)
	}
	bad := map[string][]byte{
		"missing result": events(7, func(i int, ev string) string {
			if i == 3 {
				return `{"type":"usage"}`
			}
			return ev
		}),
		"error result": events(7, func(i int, ev string) string {
			if i == 1 {
				return strings.Replace(ev, `"is_error":false`, `"is_error":true`, 1)
			}
			return ev
		}),
		"wrong file read": events(7, func(i int, ev string) string {
			if i == 4 {
				return strings.Replace(ev, "file 1:", "file 0:", 1)
			}
			return ev
		}),
		"failed run": []byte(strings.Replace(string(events(7, nil)), `"completed"`, `"failed"`, 1)),
		"not json":   append(events(7, nil), "oops\n"...),
	}
	for name, out := range bad {
		if err := checkEvents(7, out); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestReadTimeRSS(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		content string
		want    int64
		ok      bool
	}{
		{"12345\n", 12345 * 1024, true},
		{"Command terminated by signal 9\n2048\n", 2048 * 1024, true},
		{"", 0, false},
		{"12 MB\n", 0, false},
	}
	for i, tc := range tests {
		p := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readTimeRSS(p)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("readTimeRSS(%q) = %d, %v; want %d, ok=%v", tc.content, got, err, tc.want, tc.ok)
		}
	}
}

func TestFormatting(t *testing.T) {
	for x, want := range map[float64]string{0.5: "0.5", 99.94: "99.9", 100: "100", 1234.4: "1,234", 1234567: "1,234,567"} {
		if got := thousands(x); got != want {
			t.Errorf("thousands(%v) = %q, want %q", x, got, want)
		}
	}
	a, b := cell{ok: true, rate: 2000, rss: 10}, cell{ok: true, rate: 10, rss: 250}
	if got := ratio(a, b, false); got != "200×" {
		t.Errorf("rate ratio %q", got)
	}
	if got := ratio(a, b, true); got != "25.0×" {
		t.Errorf("rss ratio %q", got)
	}
	if got := ratio(a, cell{why: statusTimeout}, false); got != "–" {
		t.Errorf("ratio with a timeout %q", got)
	}
	if got := median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median %v", got)
	}
	if got := median([]float64{4, 1, 2, 3}); got != 2.5 {
		t.Errorf("median %v", got)
	}
	if got := rotate([]string{"a", "b", "c"}, 4); !slices.Equal(got, []string{"b", "c", "a"}) {
		t.Errorf("rotate %v", got)
	}
}

func TestSummarize(t *testing.T) {
	rs := []result{
		{Impl: "go", N: 10, Status: statusOK, Seconds: 1, RSS: 10 << 20},
		{Impl: "go", N: 10, Status: statusOK, Seconds: 2, RSS: 30 << 20},
		{Impl: "go", N: 10, Status: statusOK, Seconds: 4, RSS: 20 << 20},
		{Impl: "go", N: 10, Checkpoint: true, Status: statusOK, Seconds: 100},
		{Impl: "js", N: 10, Status: statusTimeout},
	}
	c := summarize(rs, "go", 10, false)
	if !c.ok || c.rate != 5 || c.rss != 20 || c.runs != 3 || c.min != 2.5 || c.max != 10 {
		t.Errorf("summarize = %+v", c)
	}
	if c := summarize(rs, "js", 10, false); c.ok || c.why != statusTimeout {
		t.Errorf("summarize of a timeout = %+v", c)
	}
	if c := summarize(rs, "eino", 10, false); c.ok || c.why != "n/a" {
		t.Errorf("summarize of nothing = %+v", c)
	}
	// The whole process's rate counts its start-up: a loop timed at 1 s in
	// a process of 2 s runs 5 steps/s, not 10.
	whole := []result{
		{Impl: "eino", N: 10, Status: statusOK, Seconds: 1, Wall: 2, RSS: 1 << 20},
		{Impl: "cli", N: 10, Status: statusOK, Seconds: 2, Wall: 2, RSS: 1 << 20},
	}
	if c := summarizeBy(whole, "eino", 10, false, result.ProcessStepsPerSec); !c.ok || c.rate != 5 {
		t.Errorf("the whole process's rate = %+v", c)
	}
	if c := summarize(whole, "eino", 10, false); !c.ok || c.rate != 10 {
		t.Errorf("the loop's rate = %+v", c)
	}
}

// TestPrintTablesTimesProcessesAlike checks the table of whole processes:
// a loop timed at 1 s in a process of 2 s counts as 2 s there, as the
// CLI's process does.
func TestPrintTablesTimesProcessesAlike(t *testing.T) {
	e := &env{config: config{impls: []string{"cli", "eino"}, sizes: []int{10}, reps: 1, timeout: time.Minute}}
	var b bytes.Buffer
	printTables(&b, e, []result{
		{Impl: "cli", N: 10, Status: statusOK, Seconds: 2, Wall: 2, RSS: 1 << 20},
		{Impl: "eino", N: 10, Status: statusOK, Seconds: 1, Wall: 2, RSS: 1 << 20},
	})
	out := b.String()
	_, whole, ok := strings.Cut(out, "over each whole process")
	if !ok {
		t.Fatalf("no table of whole processes:\n%s", out)
	}
	if !strings.Contains(out, "| 10.0 | 5.0 | 10.0 | 0.50× |") {
		t.Errorf("the loops' table:\n%s", out)
	}
	if !strings.Contains(whole, "| 10.0 | 5.0 | 5.0 | 1.00× |") {
		t.Errorf("the whole processes' table:\n%s", whole)
	}
}
