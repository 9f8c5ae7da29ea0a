// Command tokens is the benchmark of tokens per task: it runs one scripted
// coding task through the deep agent (deepagents.New with the product's
// defaults and a checkpointer), the model being the real Anthropic and
// OpenAI provider clients talking to in-process stand-ins of their APIs
// that replay the script and record every request. From the recorded
// requests it counts, per request and in total, the input tokens split by
// part (system prompt, tool definitions, messages by kind), what the
// provider's prompt cache would write and read, the output tokens, and the
// list-price cost. See docs/BENCHMARKS.md, "Tokens per task".
//
//	go run ./bench/tokens [-provider anthropic|openai] [-requests] [-json]
//	go run ./bench/tokens -js [-js-todos] [-js-pages] [-provider ...]  # and deepagents-js beside it
//	go run ./bench/tokens -cli [-provider ...]  # through `deepagents run` itself
//
// Tokens are counted with a real BPE tokenizer (cl100k_base for Claude,
// whose tokenizer is not published; o200k_base, GPT-4.1's own, for
// OpenAI) over the text the model reads: each tool's name, description and
// JSON schema; the system prompt; each message's text, each tool call's
// name and JSON arguments, each tool result's text. The framing the
// providers add (role markers, block delimiters, tool-use ids, the hidden
// tool-use preamble) is not counted; it is a few tokens per block, the
// same for every harness.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

func main() {
	only := flag.String("provider", "", "run one provider only: anthropic or openai (default: both)")
	perRequest := flag.Bool("requests", false, "also print a table of every request")
	asJSON := flag.Bool("json", false, "print the reports as JSON instead of tables")
	js := flag.Bool("js", false, "also run the task through deepagents-js (bench/tokens/js, after npm ci there) and print it beside ours")
	jsTodos := flag.Bool("js-todos", false, "with -js: keep the write_todos turns, which deepagents-js answers with an error (it has no such tool by default)")
	jsPages := flag.Bool("js-pages", false, "with -js: read each file deepagents-js reads whole to its end, 100 lines a page (its default limit)")
	flag.IntVar(&readLimit, "read-limit", 0, "pass this limit to every read of a whole file in the script, to both harnesses (with -js: both read the same lines)")
	flag.BoolVar(&localContext, "local-context", false, "turn the local context on (deepagents.Config.LocalContext, off by default), to measure what it costs")
	flag.BoolVar(&verifyPass, "verify", false, "turn the verification pass on (deepagents.Config.Verify, off by default), to measure what it costs")
	cli := flag.Bool("cli", false, "run the task through the deepagents CLI (`deepagents run`, built from this repository) instead of deepagents.New")
	flag.Parse()
	if *cli {
		if err := runCLI(context.Background(), os.Stdout, *only, *perRequest, *asJSON); err != nil {
			fmt.Fprintln(os.Stderr, "tokens:", err)
			os.Exit(1)
		}
		return
	}
	if *js {
		o := jsOptions{KeepTodos: *jsTodos, Pages: *jsPages}
		if err := runSideBySide(context.Background(), os.Stdout, *only, *perRequest, o); err != nil {
			fmt.Fprintln(os.Stderr, "tokens:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(context.Background(), os.Stdout, *only, *perRequest, *asJSON); err != nil {
		fmt.Fprintln(os.Stderr, "tokens:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, only string, perRequest, asJSON bool) error {
	var reports []*Report
	for _, p := range providers {
		if only != "" && only != p.Name {
			continue
		}
		rep, _, err := measure(ctx, p)
		if err != nil {
			return err
		}
		reports = append(reports, rep)
	}
	if len(reports) == 0 {
		return fmt.Errorf("no provider %q (anthropic, openai)", only)
	}
	return writeReports(w, reports, perRequest, asJSON)
}

// runCLI is run with the task through the CLI.
func runCLI(ctx context.Context, w io.Writer, only string, perRequest, asJSON bool) error {
	dir, err := os.MkdirTemp("", "tokens-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := buildCLI(ctx, dir)
	if err != nil {
		return err
	}
	var reports []*Report
	for _, p := range providers {
		if only != "" && only != p.Name {
			continue
		}
		rep, err := measureCLI(ctx, p, bin)
		if err != nil {
			return err
		}
		reports = append(reports, rep)
	}
	if !asJSON {
		fmt.Fprint(w, "Through `deepagents run --auto-approve` (the CLI's configuration).\n\n")
	}
	return writeReports(w, reports, perRequest, asJSON)
}

// writeReports writes the reports as JSON, or as Markdown tables.
func writeReports(w io.Writer, reports []*Report, perRequest, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(reports)
	}
	for i, rep := range reports {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := printReport(w, rep, perRequest); err != nil {
			return err
		}
	}
	return nil
}

// printReport writes a provider's tables in Markdown.
func printReport(w io.Writer, r *Report, perRequest bool) error {
	main, sub := len(r.Requests), 0
	for _, q := range r.Requests {
		if q.Agent != mainAgent {
			main--
			sub++
		}
	}
	fmt.Fprintf(w, "### %s (%s, counted with %s)\n\n", r.Provider, r.Model, r.Encoding)
	fmt.Fprintf(w, "%d requests (main agent %d, subagent %d); fixed prefix per request (system prompt + tools): main %s, subagent %s tokens.\n\n",
		len(r.Requests), main, sub, num(r.FixedPrefix[mainAgent]), num(r.FixedPrefix[subAgent]))

	var t table
	row := t.row
	row("input tokens by part", "main agent", "subagent", "total", "share", "counted once")
	once := 0
	for _, n := range r.Once {
		once += n
	}
	for _, k := range partNames(r.Total.Parts) {
		row(partLabel(k), num(r.Main.Parts[k]), num(r.Subagent.Parts[k]), num(r.Total.Parts[k]), pct(r.Total.Parts[k], r.Total.Input), num(r.Once[k]))
	}
	row("**input, all**", num(r.Main.Input), num(r.Subagent.Input), num(r.Total.Input), pct(r.Total.Input, r.Total.Input), num(once))
	t.write(w)
	fmt.Fprintln(w)

	p := r.Price
	t = table{}
	row = t.row
	row("tokens and cost", "tokens", "share of input", "$/MTok", "cost")
	cost := func(n int, price float64) string { return fmt.Sprintf("$%.4f", float64(n)*price/1e6) }
	write := p.CacheWrite
	if write == 0 {
		write = p.Input
	}
	read := p.CacheRead
	if read == 0 {
		read = p.Input
	}
	row("uncached input", num(r.Total.Uncached), pct(r.Total.Uncached, r.Total.Input), money(p.Input), cost(r.Total.Uncached, p.Input))
	row("cache write", num(r.Total.CacheWrite), pct(r.Total.CacheWrite, r.Total.Input), money(write), cost(r.Total.CacheWrite, write))
	row("cache read", num(r.Total.CacheRead), pct(r.Total.CacheRead, r.Total.Input), money(read), cost(r.Total.CacheRead, read))
	row("output", num(r.Total.Output), "", money(p.Output), cost(r.Total.Output, p.Output))
	row("**total**", num(r.Total.Input+r.Total.Output), "", "", fmt.Sprintf("**$%.4f**", r.Total.Cost))
	t.write(w)
	if !perRequest {
		return nil
	}
	fmt.Fprintln(w)
	t = table{left: 2}
	row = t.row
	row("#", "agent", "input", "system", "tools", "messages", "uncached", "cache write", "cache read", "output", "cost")
	for _, q := range r.Requests {
		msgs := q.Input - q.Parts[kindSystem] - q.Parts[kindTools]
		row(fmt.Sprint(q.N), q.Agent, num(q.Input), num(q.Parts[kindSystem]), num(q.Parts[kindTools]), num(msgs),
			num(q.Uncached), num(q.CacheWrite), num(q.CacheRead), num(q.Output), fmt.Sprintf("$%.4f", q.Cost))
	}
	t.write(w)
	return nil
}

// table is a Markdown table: its first row the header, its columns
// right-aligned but the first (or the left first ones).
type table struct {
	rows [][]string
	left int // how many columns are left-aligned; 0 means 1
}

func (t *table) row(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) {
	left := max(t.left, 1)
	var width []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 3)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		for i, c := range cells {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i < left {
				c += pad
			} else {
				c = pad + c
			}
			b.WriteString("| " + c + " ")
		}
		fmt.Fprintln(w, b.String()+"|")
	}
	for i, r := range t.rows {
		line(r)
		if i == 0 {
			sep := make([]string, len(r))
			for j := range sep {
				sep[j] = strings.Repeat("-", width[j]-1) + ":"
				if j < left {
					sep[j] = strings.Repeat("-", width[j])
				}
			}
			line(sep)
		}
	}
}

// num writes n with thousands separators.
func num(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + num(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func pct(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}

func money(perMTok float64) string { return fmt.Sprintf("$%.2f", perMTok) }

// runSideBySide runs the task through this project's agent and through
// deepagents-js on each provider's stand-in and prints both, then a table of
// the two side by side.
func runSideBySide(ctx context.Context, w io.Writer, only string, perRequest bool, o jsOptions) error {
	dir, err := jsDir()
	if err != nil {
		return err
	}
	var t table
	t.row("on the task", "provider", "this project", "deepagents-js", "ratio")
	for _, p := range providers {
		if only != "" && only != p.Name {
			continue
		}
		ours, _, err := measure(ctx, p)
		if err != nil {
			return err
		}
		theirs, _, err := measureJS(ctx, p, dir, o)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "## this project\n\n")
		if err := printReport(w, ours, perRequest); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n## deepagents-js\n\n")
		if err := printReport(w, theirs, perRequest); err != nil {
			return err
		}
		fmt.Fprintln(w)
		ratio := func(a, b float64) string { return fmt.Sprintf("%.3f", a/b) }
		t.row("model requests", p.Name, num(len(ours.Requests)), num(len(theirs.Requests)), "")
		t.row("input tokens", p.Name, num(ours.Total.Input), num(theirs.Total.Input), ratio(float64(ours.Total.Input), float64(theirs.Total.Input)))
		t.row("fixed prefix main / subagent", p.Name, num(ours.FixedPrefix[mainAgent])+" / "+num(ours.FixedPrefix[subAgent]),
			num(theirs.FixedPrefix[mainAgent])+" / "+num(theirs.FixedPrefix[subAgent]), "")
		t.row("read_file results", p.Name, num(ours.Total.Parts[kindResult+"read_file"]), num(theirs.Total.Parts[kindResult+"read_file"]), "")
		t.row("cache-read share", p.Name, pct(ours.Total.CacheRead, ours.Total.Input), pct(theirs.Total.CacheRead, theirs.Total.Input), "")
		t.row("output tokens", p.Name, num(ours.Total.Output), num(theirs.Total.Output), "")
		t.row("cost", p.Name, fmt.Sprintf("$%.4f", ours.Total.Cost), fmt.Sprintf("$%.4f", theirs.Total.Cost), ratio(ours.Total.Cost, theirs.Total.Cost))
	}
	if len(t.rows) == 1 {
		return fmt.Errorf("no provider %q (anthropic, openai)", only)
	}
	fmt.Fprintf(w, "## side by side\n\n")
	t.write(w)
	return nil
}
