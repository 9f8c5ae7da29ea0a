package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/tiktoken-go/tokenizer"
)

// encoder tokenizes text, remembering what it tokenized: the same system
// prompt, tool definitions and file contents recur in every request.
type encoder struct {
	name  string
	codec tokenizer.Codec
	memo  map[string][]uint
}

func newEncoder(enc tokenizer.Encoding) (*encoder, error) {
	c, err := tokenizer.Get(enc)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", enc, err)
	}
	return &encoder{name: string(enc), codec: c, memo: map[string][]uint{}}, nil
}

// tokens returns the token ids of text.
func (e *encoder) tokens(text string) ([]uint, error) {
	if ids, ok := e.memo[text]; ok {
		return ids, nil
	}
	ids, _, err := e.codec.Encode(text)
	if err != nil {
		return nil, fmt.Errorf("tokenizing with %s: %w", e.name, err)
	}
	e.memo[text] = ids
	return ids, nil
}

// cacheRule says how a provider caches prompts.
type cacheRule int

const (
	// anthropicCache: cache_control breakpoints, each written as a cache
	// entry when its prefix holds at least min tokens; a request reads the
	// longest prefix written before that ends at a breakpoint or at one of
	// the lookBack block boundaries before it.
	anthropicCache cacheRule = iota
	// openaiCache: automatic; a request reads the longest prefix it shares
	// with an earlier request, counted from min tokens on in steps of
	// openaiStep.
	openaiCache
)

const (
	// anthropicMinTokens is the shortest cacheable prefix of Claude
	// Sonnet 4.5 (and Sonnet 4, Opus 4 and 4.1); Opus 4.5 and Haiku 4.5
	// need 4,096.
	anthropicMinTokens = 1024
	// anthropicLookBack is how many block boundaries before a breakpoint
	// the API checks for an earlier cache entry.
	anthropicLookBack = 20
	// openaiMinTokens and openaiStep: OpenAI caches prompts of 1,024
	// tokens or more, the cached part growing in steps of 128 tokens.
	openaiMinTokens = 1024
	openaiStep      = 128
)

// provider is one side of the benchmark.
type provider struct {
	// Name is the provider ("anthropic", "openai"); Model its model.
	Name, Model string
	// Encoding tokenizes its requests.
	Encoding tokenizer.Encoding
	Cache    cacheRule
	start    func(model string, steps []step) (*standIn, error)
	parse    func(body []byte) (request, error)
}

// providers are the two sides: Claude Sonnet counted with cl100k_base
// (Anthropic publishes no tokenizer), GPT-4.1 with its own o200k_base.
var providers = []provider{
	{Name: "anthropic", Model: "claude-sonnet-4-5", Encoding: tokenizer.Cl100kBase, Cache: anthropicCache, start: startAnthropic, parse: parseAnthropic},
	{Name: "openai", Model: "gpt-4.1", Encoding: tokenizer.O200kBase, Cache: openaiCache, start: startOpenAI, parse: parseOpenAI},
}

// Tokens counts one request, or a run's requests summed.
type Tokens struct {
	// Input is every input token: Uncached + CacheWrite + CacheRead.
	Input      int `json:"input"`
	Uncached   int `json:"uncached"`
	CacheWrite int `json:"cache_write"`
	CacheRead  int `json:"cache_read"`
	Output     int `json:"output"`
	// Parts splits Input by part of the request: "system", "tools",
	// "user", "assistant", "result:<tool>".
	Parts map[string]int `json:"parts"`
	// Cost is the list price of the request, in US dollars.
	Cost float64 `json:"cost_usd"`
}

func (t *Tokens) add(o Tokens) {
	t.Input += o.Input
	t.Uncached += o.Uncached
	t.CacheWrite += o.CacheWrite
	t.CacheRead += o.CacheRead
	t.Output += o.Output
	t.Cost += o.Cost
	if t.Parts == nil {
		t.Parts = map[string]int{}
	}
	for k, v := range o.Parts {
		t.Parts[k] += v
	}
}

// Request is one model request of the run, counted.
type Request struct {
	// N numbers the requests from 1, in the order sent.
	N int `json:"n"`
	// Agent is "main" or the subagent's name.
	Agent string `json:"agent"`
	Tokens
}

// Report is one provider's run of the task, counted.
type Report struct {
	Provider string    `json:"provider"`
	Model    string    `json:"model"`
	Encoding string    `json:"encoding"`
	Price    llm.Price `json:"price_per_mtok"`
	Requests []Request `json:"requests"`
	// Total sums the requests; Main and Subagent those of each agent.
	Total    Tokens `json:"total"`
	Main     Tokens `json:"main"`
	Subagent Tokens `json:"subagent"`
	// CacheReadShare is Total.CacheRead / Total.Input.
	CacheReadShare float64 `json:"cache_read_share"`
	// FixedPrefix is the tokens of the system prompt and tool definitions
	// of each agent's requests, which its every request repeats.
	FixedPrefix map[string]int `json:"fixed_prefix"`
	// Once splits the run's content by part, each piece counted once:
	// what an agent's request adds to its previous request (all of it for
	// an agent's first request). Its read_file part is the files as read.
	Once map[string]int `json:"once"`
}

// measure runs the task once through p's stand-in and counts its requests.
func measure(ctx context.Context, p provider) (*Report, *runResult, error) {
	res, err := runTask(ctx, func(steps []step) (*standIn, error) { return p.start(p.Model, steps) })
	if err != nil {
		return nil, res, fmt.Errorf("%s: %w", p.Name, err)
	}
	rep, err := count(p, res.Bodies, script())
	return rep, res, err
}

// count parses and counts the recorded request bodies, the i-th answered
// by steps[i].
func count(p provider, bodies [][]byte, steps []step) (*Report, error) {
	if len(bodies) != len(steps) {
		return nil, fmt.Errorf("%s: %d requests for %d scripted turns", p.Name, len(bodies), len(steps))
	}
	price, ok := llm.PriceOf(p.Name+":"+p.Model, nil)
	if !ok {
		return nil, fmt.Errorf("%s: no list price for %s", p.Name, p.Model)
	}
	enc, err := newEncoder(p.Encoding)
	if err != nil {
		return nil, err
	}
	rep := &Report{Provider: p.Name, Model: p.Model, Encoding: enc.name, Price: price, FixedPrefix: map[string]int{}, Once: map[string]int{}}
	var cache cacheState
	previous := map[string][]segment{} // each agent's last request
	for i, body := range bodies {
		req, err := p.parse(body)
		if err != nil {
			return nil, fmt.Errorf("request %d: %w", i+1, err)
		}
		t := Tokens{Parts: map[string]int{}}
		seq := make([][]uint, len(req.Segments))
		for j, s := range req.Segments {
			if seq[j], err = enc.tokens(s.Text); err != nil {
				return nil, fmt.Errorf("request %d: %w", i+1, err)
			}
			t.Parts[s.Kind] += len(seq[j])
			t.Input += len(seq[j])
		}
		switch p.Cache {
		case anthropicCache:
			t.CacheRead, t.CacheWrite = cache.anthropic(req.Segments, seq)
		case openaiCache:
			t.CacheRead = cache.openai(seq)
		}
		t.Uncached = t.Input - t.CacheRead - t.CacheWrite
		if t.Output, err = outputTokens(enc, steps[i]); err != nil {
			return nil, err
		}
		t.Cost = price.Cost(llm.Usage{InputTokens: t.Input, OutputTokens: t.Output, CacheReadTokens: t.CacheRead, CacheWriteTokens: t.CacheWrite})
		agent := steps[i].Agent
		for j := sharedSegments(previous[agent], req.Segments); j < len(req.Segments); j++ {
			rep.Once[req.Segments[j].Kind] += len(seq[j])
		}
		previous[agent] = req.Segments
		rep.Requests = append(rep.Requests, Request{N: i + 1, Agent: agent, Tokens: t})
		rep.Total.add(t)
		if agent == mainAgent {
			rep.Main.add(t)
		} else {
			rep.Subagent.add(t)
		}
		if _, ok := rep.FixedPrefix[agent]; !ok {
			rep.FixedPrefix[agent] = t.Parts[kindSystem] + t.Parts[kindTools]
		}
	}
	if rep.Total.Input > 0 {
		rep.CacheReadShare = float64(rep.Total.CacheRead) / float64(rep.Total.Input)
	}
	return rep, nil
}

// sharedSegments returns how many segments b starts with that a starts
// with too.
func sharedSegments(a, b []segment) int {
	n := 0
	for n < len(a) && n < len(b) && a[n].Key == b[n].Key {
		n++
	}
	return n
}

// outputTokens counts a scripted turn as the model would have generated
// it: its text, and each tool call's name and arguments.
func outputTokens(enc *encoder, s step) (int, error) {
	texts := []string{s.Text}
	for _, c := range s.Calls {
		texts = append(texts, c.Name+" "+c.Args)
	}
	n := 0
	for _, t := range texts {
		ids, err := enc.tokens(t)
		if err != nil {
			return 0, err
		}
		n += len(ids)
	}
	return n, nil
}

// cacheState is the provider's prompt cache over one run: what earlier
// requests left in it. Entries never expire: the run takes seconds, the
// shortest lifetime is five minutes.
type cacheState struct {
	// entries are the prefixes written (Anthropic), by hash.
	entries map[[32]byte]bool
	// prompts are the earlier requests' token sequences (OpenAI).
	prompts [][]uint
}

// anthropic models Anthropic's prompt cache for one request of segments
// (blocks) and their tokens: it returns the tokens read from the cache and
// written to it, and records the entries written.
//
// The rules (docs.anthropic.com, "Prompt caching"): the prefix is tools,
// then system, then messages, cut into blocks; a block with cache_control
// is a breakpoint. For each breakpoint the API looks for a cache entry at
// the breakpoint and at up to 20 block boundaries before it; the longest
// hit is read. Everything from there to the last breakpoint is written
// (cache_creation_input_tokens), and each breakpoint's prefix becomes an
// entry. A prefix shorter than the model's minimum (1,024 tokens for
// Sonnet) is neither written nor read.
func (c *cacheState) anthropic(segs []segment, seq [][]uint) (read, write int) {
	if c.entries == nil {
		c.entries = map[[32]byte]bool{}
	}
	n := len(segs)
	// cum[k] and hash[k] describe the prefix of the first k blocks.
	cum := make([]int, n+1)
	hash := make([][32]byte, n+1)
	for k, s := range segs {
		cum[k+1] = cum[k] + len(seq[k])
		h := sha256.New()
		h.Write(hash[k][:])
		h.Write([]byte(s.Kind))
		h.Write([]byte{0})
		h.Write([]byte(s.Key))
		copy(hash[k+1][:], h.Sum(nil))
	}
	hit, last := 0, 0
	for k, s := range segs {
		bp := k + 1
		if !s.Breakpoint {
			continue
		}
		for j := bp; j >= 1 && j >= bp-anthropicLookBack; j-- {
			if c.entries[hash[j]] {
				hit = max(hit, j)
				break
			}
		}
		if cum[bp] >= anthropicMinTokens {
			last = max(last, bp)
		}
	}
	for k, s := range segs {
		if s.Breakpoint && cum[k+1] >= anthropicMinTokens {
			c.entries[hash[k+1]] = true
		}
	}
	read = cum[hit]
	if last > hit {
		write = cum[last] - read
	}
	return read, write
}

// openai models OpenAI's automatic prompt caching for one request's token
// sequence: the cached tokens are the longest prefix it shares with an
// earlier request, when that reaches 1,024 tokens, rounded down to
// 1,024 + a multiple of 128 (platform.openai.com, "Prompt caching").
func (c *cacheState) openai(seq [][]uint) int {
	var prompt []uint
	for _, s := range seq {
		prompt = append(prompt, s...)
	}
	best := 0
	for _, p := range c.prompts {
		n := 0
		for n < len(p) && n < len(prompt) && p[n] == prompt[n] {
			n++
		}
		best = max(best, n)
	}
	c.prompts = append(c.prompts, prompt)
	if best < openaiMinTokens {
		return 0
	}
	return openaiMinTokens + (best-openaiMinTokens)/openaiStep*openaiStep
}

// partNames orders and names the parts of a request for the tables.
func partNames(parts map[string]int) []string {
	order := []string{kindSystem, kindTools, kindUser, kindAssistant, kindResult + "read_file"}
	var rest []string
	for k := range maps.Keys(parts) {
		if !slices.Contains(order, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	var out []string
	for _, k := range append(order, rest...) {
		if _, ok := parts[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// partLabel is how a table names a part.
func partLabel(kind string) string {
	switch kind {
	case kindSystem:
		return "system prompt"
	case kindTools:
		return "tool definitions"
	case kindUser:
		return "user messages"
	case kindAssistant:
		return "assistant messages (text, tool calls)"
	case kindOther:
		return "other blocks"
	}
	if t, ok := strings.CutPrefix(kind, kindResult); ok {
		return "tool results: " + t
	}
	return kind
}
