package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

// TestTask runs the task once per provider and checks what the numbers
// rest on: every request recorded and counted, a byte-stable prefix per
// agent, a cache that serves most of the input, and totals that are the
// sums of their parts.
func TestTask(t *testing.T) {
	for _, p := range providers {
		t.Run(p.Name, func(t *testing.T) {
			rep, res, err := measure(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			steps := script()
			if len(res.Bodies) != len(steps) || len(rep.Requests) != len(steps) {
				t.Fatalf("%d requests recorded, %d counted, for %d scripted turns", len(res.Bodies), len(rep.Requests), len(steps))
			}
			if len(steps) != 25 {
				t.Errorf("the task has %d model requests, want 25", len(steps))
			}

			// The same agent sends the same system prompt and tools, byte
			// for byte, in each of its requests; the two agents differ.
			prefix := map[string][2]string{}
			for i, body := range res.Bodies {
				req, err := p.parse(body)
				if err != nil {
					t.Fatal(err)
				}
				agent := steps[i].Agent
				// The prompt-caching middleware marks the last tool, the
				// system prompt and the last message's last block.
				bps := 0
				for _, s := range req.Segments {
					if s.Breakpoint {
						bps++
					}
				}
				if want := map[cacheRule]int{anthropicCache: 3, openaiCache: 0}[p.Cache]; bps != want ||
					p.Cache == anthropicCache && !req.Segments[len(req.Segments)-1].Breakpoint {
					t.Errorf("request %d has %d cache breakpoints, want %d, the last block one of them", i+1, bps, want)
				}
				got := [2]string{req.System, req.Tools}
				if req.System == "" || req.Tools == "" || req.Tools == "null" {
					t.Fatalf("request %d has no system prompt or no tools", i+1)
				}
				if first, ok := prefix[agent]; !ok {
					prefix[agent] = got
				} else if got != first {
					t.Errorf("request %d (%s): the system prompt or tools differ from the agent's first request", i+1, agent)
				}
			}
			if len(prefix) != 2 || prefix[mainAgent] == prefix[subAgent] {
				t.Errorf("want two agents with different prefixes, got %d", len(prefix))
			}
			// Each agent's conversation only grows: a request starts with
			// every segment of the agent's previous request.
			last := map[string]request{}
			for i, body := range res.Bodies {
				req, err := p.parse(body)
				if err != nil {
					t.Fatal(err)
				}
				agent := steps[i].Agent
				if prev, ok := last[agent]; ok {
					if len(req.Segments) <= len(prev.Segments) {
						t.Errorf("request %d (%s) is no longer than the agent's previous one", i+1, agent)
					} else {
						for j, s := range prev.Segments {
							if s.Key != req.Segments[j].Key {
								t.Errorf("request %d (%s): segment %d (%s) differs from the previous request's", i+1, agent, j, s.Kind)
								break
							}
						}
					}
				}
				last[agent] = req
			}
			// The subagent's requests are the subagent's: its task is in
			// its first request.
			if !bytes.Contains(res.Bodies[18], []byte("Find whether anything else depends on the old width")) {
				t.Error("request 19 is not the subagent's first")
			}

			checkSums(t, rep)

			if rep.CacheReadShare < 0.8 {
				t.Errorf("cache-read share %.3f, want at least 0.8", rep.CacheReadShare)
			}
			// After an agent's first request, every request reads at least
			// its fixed prefix from the cache.
			seen := map[string]bool{}
			for _, q := range rep.Requests {
				if seen[q.Agent] && q.CacheRead < min(rep.FixedPrefix[q.Agent], q.Input)-openaiStep {
					t.Errorf("request %d (%s) reads %d tokens from the cache, less than its prefix of %d", q.N, q.Agent, q.CacheRead, rep.FixedPrefix[q.Agent])
				}
				seen[q.Agent] = true
			}
			// Nine files were read, and their results are most of the input.
			if share := float64(rep.Total.Parts[kindResult+"read_file"]) / float64(rep.Total.Input); share < 0.5 {
				t.Errorf("read_file results are %.2f of the input, want most of it", share)
			}
			if strings.Count(string(res.Bodies[len(res.Bodies)-1]), "writeGutter") == 0 {
				t.Error("the last request does not hold the files read")
			}
		})
	}
}

// checkSums checks that each count is the sum of its parts.
func checkSums(t *testing.T, rep *Report) {
	t.Helper()
	var total, main, sub Tokens
	cost := 0.0
	for _, q := range rep.Requests {
		parts := 0
		for _, n := range q.Parts {
			parts += n
		}
		if parts != q.Input {
			t.Errorf("request %d: parts sum to %d, input is %d", q.N, parts, q.Input)
		}
		if q.Uncached+q.CacheWrite+q.CacheRead != q.Input || q.Uncached < 0 || q.CacheWrite < 0 || q.CacheRead < 0 {
			t.Errorf("request %d: uncached %d + write %d + read %d != input %d", q.N, q.Uncached, q.CacheWrite, q.CacheRead, q.Input)
		}
		if q.Output <= 0 {
			t.Errorf("request %d: no output tokens", q.N)
		}
		total.add(q.Tokens)
		if q.Agent == mainAgent {
			main.add(q.Tokens)
		} else {
			sub.add(q.Tokens)
		}
		cost += q.Cost
	}
	for _, c := range []struct {
		name      string
		got, want Tokens
	}{{"total", rep.Total, total}, {"main", rep.Main, main}, {"subagent", rep.Subagent, sub}} {
		gotCost, wantCost := c.got.Cost, c.want.Cost
		c.got.Cost, c.want.Cost = 0, 0
		if !reflect.DeepEqual(c.got, c.want) || math.Abs(gotCost-wantCost) > 1e-9 {
			t.Errorf("%s is not the sum of the requests:\n got %+v\nwant %+v", c.name, c.got, c.want)
		}
	}
	if math.Abs(rep.Total.Cost-cost) > 1e-9 {
		t.Errorf("total cost %f, the requests sum to %f", rep.Total.Cost, cost)
	}
	p := rep.Price
	want := (float64(rep.Total.Uncached)*p.Input + float64(rep.Total.CacheWrite)*cmpOr(p.CacheWrite, p.Input) +
		float64(rep.Total.CacheRead)*cmpOr(p.CacheRead, p.Input) + float64(rep.Total.Output)*p.Output) / 1e6
	if math.Abs(rep.Total.Cost-want) > 1e-9 {
		t.Errorf("total cost %f, the totals at list price make %f", rep.Total.Cost, want)
	}
}

func cmpOr(a, b float64) float64 {
	if a != 0 {
		return a
	}
	return b
}

// TestDeterministic runs the task twice: the benchmark's numbers must not
// depend on the run.
func TestDeterministic(t *testing.T) {
	p := providers[0]
	var out [2][]byte
	for i := range out {
		rep, _, err := measure(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if out[i], err = json.Marshal(rep); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Error("two runs of the task count differently")
	}
}

// blocks returns Anthropic segments of the given token counts, with
// breakpoints where bp is true, and their tokens.
func blocks(sizes []int, bps ...int) ([]segment, [][]uint) {
	segs := make([]segment, len(sizes))
	seq := make([][]uint, len(sizes))
	for i, n := range sizes {
		segs[i] = segment{Kind: kindUser, Key: strings.Repeat("x", i+1)}
		seq[i] = make([]uint, n)
	}
	for _, b := range bps {
		segs[b].Breakpoint = true
	}
	return segs, seq
}

func TestAnthropicCache(t *testing.T) {
	t.Run("write then read", func(t *testing.T) {
		var c cacheState
		segs, seq := blocks([]int{1000, 100, 50}, 1, 2)
		if r, w := c.anthropic(segs, seq); r != 0 || w != 1150 {
			t.Errorf("first request: read %d, write %d; want 0, 1150", r, w)
		}
		// The next request adds two blocks and moves the tail breakpoint.
		segs, seq = blocks([]int{1000, 100, 50, 20, 30}, 1, 4)
		if r, w := c.anthropic(segs, seq); r != 1150 || w != 50 {
			t.Errorf("second request: read %d, write %d; want 1150, 50", r, w)
		}
	})
	t.Run("minimum length", func(t *testing.T) {
		var c cacheState
		segs, seq := blocks([]int{500, 500}, 1)
		for range 2 {
			if r, w := c.anthropic(segs, seq); r != 0 || w != 0 {
				t.Errorf("a prefix of 1,000 tokens: read %d, write %d; want nothing cached", r, w)
			}
		}
	})
	t.Run("look-back of 20 blocks", func(t *testing.T) {
		sizes := make([]int, 40)
		for i := range sizes {
			sizes[i] = 100
		}
		for _, c := range []struct{ blocks, read int }{{35, 1500}, {36, 0}} {
			// An entry at 15 blocks, then a request whose only breakpoint
			// is 20 (found) or 21 (missed) blocks further.
			var cache cacheState
			segs, seq := blocks(sizes[:15], 14)
			cache.anthropic(segs, seq)
			segs, seq = blocks(sizes[:c.blocks], c.blocks-1)
			if r, _ := cache.anthropic(segs, seq); r != c.read {
				t.Errorf("a breakpoint %d blocks after the entry: read %d, want %d", c.blocks-15, r, c.read)
			}
		}
	})
	t.Run("changed prefix", func(t *testing.T) {
		var c cacheState
		segs, seq := blocks([]int{1100, 100}, 0, 1)
		c.anthropic(segs, seq)
		segs, seq = blocks([]int{1100, 100}, 0, 1)
		segs[0].Key = "other tools"
		if r, w := c.anthropic(segs, seq); r != 0 || w != 1200 {
			t.Errorf("after a change of the first block: read %d, write %d; want 0, 1200", r, w)
		}
	})
}

func TestOpenAICache(t *testing.T) {
	ids := func(n, from int) []uint {
		s := make([]uint, n)
		for i := range s {
			s[i] = uint(from + i)
		}
		return s
	}
	var c cacheState
	if got := c.openai([][]uint{ids(2000, 0)}); got != 0 {
		t.Errorf("first request: %d cached, want 0", got)
	}
	// Shares 2,000 tokens: 1,024 + 7 * 128.
	if got := c.openai([][]uint{ids(2000, 0), ids(500, 1_000_000)}); got != 1920 {
		t.Errorf("second request: %d cached, want 1920", got)
	}
	// Shares 1,000 tokens only: below the minimum.
	if got := c.openai([][]uint{ids(1000, 0), ids(1500, 5_000_000)}); got != 0 {
		t.Errorf("a 1,000-token prefix: %d cached, want 0", got)
	}
}

// TestCountText checks the tokenizer counts known text as tiktoken does.
func TestCountText(t *testing.T) {
	for _, c := range []struct {
		enc  tokenizer.Encoding
		text string
		want int
	}{
		{tokenizer.Cl100kBase, "hello world", 2},
		{tokenizer.O200kBase, "hello world", 2},
		{tokenizer.Cl100kBase, "tiktoken is great!", 6}, // OpenAI's cookbook
	} {
		e, err := newEncoder(c.enc)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := e.tokens(c.text)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != c.want {
			t.Errorf("%s: %q is %d tokens, want %d", c.enc, c.text, len(ids), c.want)
		}
	}
}

// TestRun checks the command's output: the tables and the JSON.
func TestRun(t *testing.T) {
	var b bytes.Buffer
	if err := run(context.Background(), &b, "anthropic", true, false); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"### anthropic (claude-sonnet-4-5, counted with cl100k_base)", "tool results: read_file", "cache read", "| 25  | main "} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("the tables lack %q:\n%s", s, b.String())
		}
	}
	b.Reset()
	if err := run(context.Background(), &b, "openai", false, true); err != nil {
		t.Fatal(err)
	}
	var reps []Report
	if err := json.Unmarshal(b.Bytes(), &reps); err != nil || len(reps) != 1 || reps[0].Provider != "openai" || len(reps[0].Requests) != 25 {
		t.Errorf("JSON output: %v, %d reports", err, len(reps))
	}
	if err := run(context.Background(), &b, "gemini", false, false); err == nil {
		t.Error("an unknown provider is not an error")
	}
}

// TestDeepagentsJS runs the task once through deepagents-js on the
// Anthropic stand-in, when node and bench/tokens/js's npm packages are
// installed (npm ci there), and checks it ran as scripted and was counted.
func TestDeepagentsJS(t *testing.T) {
	dir, err := jsDir()
	if err != nil {
		t.Skipf("%v: the deepagents-js side is not run", err)
	}
	rep, res, err := measureJS(context.Background(), providers[0], dir, jsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(jsScript(jsOptions{})); len(res.Bodies) != want || len(rep.Requests) != want || want != 22 {
		t.Errorf("%d requests recorded, %d counted, %d scripted; want 22", len(res.Bodies), len(rep.Requests), want)
	}
	if !bytes.Contains(res.Bodies[len(res.Bodies)-4], []byte("Find whether anything else depends on the old width")) {
		t.Error("the subagent's first request is not where the script has it")
	}
	checkSums(t, rep)
}

// TestJSScript checks the script's adaptations to deepagents-js: without
// write_todos 22 turns, with its pages 17 more reads (15 of the main agent,
// 2 of the subagent), each continuing where the last page ended.
func TestJSScript(t *testing.T) {
	for _, c := range []struct {
		o         jsOptions
		main, sub int
	}{{jsOptions{}, 18, 4}, {jsOptions{KeepTodos: true}, 21, 4}, {jsOptions{Pages: true}, 33, 6}, {jsOptions{Pages: true, KeepTodos: true}, 36, 6}} {
		n := map[string]int{}
		for _, s := range jsScript(c.o) {
			n[s.Agent]++
			for _, call := range s.Calls {
				if call.Name == "write_todos" && !c.o.KeepTodos {
					t.Errorf("%+v: a write_todos call is left", c.o)
				}
			}
		}
		if n[mainAgent] != c.main || n[subAgent] != c.sub {
			t.Errorf("%+v: %d main and %d subagent turns, want %d and %d", c.o, n[mainAgent], n[subAgent], c.main, c.sub)
		}
	}
	steps := jsScript(jsOptions{Pages: true})
	if got, want := steps[4].Calls[0].Args, `{"file_path":"/middleware/filesystem/fsformat.go","offset":100}`; got != want {
		t.Errorf("the page after the first read of fsformat.go: %s, want %s", got, want)
	}
}

// TestCLI runs the task through `deepagents run`, built from this
// repository, and checks that it ran as scripted and that its requests
// count as the library's do but for the CLI's own prompt sections.
func TestCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI")
	}
	bin, err := buildCLI(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := providers[0]
	rep, err := measureCLI(context.Background(), p, bin)
	if err != nil {
		t.Fatal(err)
	}
	lib, _, err := measure(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Requests) != len(lib.Requests) || rep.Total.Parts["result:read_file"] != lib.Total.Parts["result:read_file"] {
		t.Errorf("CLI: %d requests, read_file %d tokens; library: %d, %d", len(rep.Requests), rep.Total.Parts["result:read_file"],
			len(lib.Requests), lib.Total.Parts["result:read_file"])
	}
	if rep.FixedPrefix[mainAgent] < lib.FixedPrefix[mainAgent] || rep.CacheReadShare < 0.8 {
		t.Errorf("CLI: fixed prefix %d (library %d), cache-read share %.3f", rep.FixedPrefix[mainAgent], lib.FixedPrefix[mainAgent], rep.CacheReadShare)
	}
}
