package llm

import (
	"net"
	"net/url"
	"strings"
)

// Price is what a model charges, in US dollars per million tokens.
type Price struct {
	Input      float64 `json:"input" yaml:"input"`
	Output     float64 `json:"output" yaml:"output"`
	CacheRead  float64 `json:"cache_read,omitempty" yaml:"cache_read"`
	CacheWrite float64 `json:"cache_write,omitempty" yaml:"cache_write"`
}

// Cost returns what u costs at p. Cache reads and writes are priced as
// such (InputTokens includes them); a price that leaves them zero charges
// them as input.
func (p Price) Cost(u Usage) float64 {
	read, write := p.CacheRead, p.CacheWrite
	if read == 0 {
		read = p.Input
	}
	if write == 0 {
		write = p.Input
	}
	plain := u.InputTokens - u.CacheReadTokens - u.CacheWriteTokens
	return (float64(plain)*p.Input + float64(u.CacheReadTokens)*read +
		float64(u.CacheWriteTokens)*write + float64(u.OutputTokens)*p.Output) / 1e6
}

// listPrices are the providers' published list prices for their common
// models (2025). They change: extra prices passed to PriceOf win.
var listPrices = map[string]Price{
	"anthropic:claude-opus-4-5":   {Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
	"anthropic:claude-opus-4-1":   {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
	"anthropic:claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	"anthropic:claude-sonnet-4":   {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	"anthropic:claude-haiku-4-5":  {Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
	"openai:gpt-5":                {Input: 1.25, Output: 10, CacheRead: 0.125},
	"openai:gpt-5-mini":           {Input: 0.25, Output: 2, CacheRead: 0.025},
	"openai:gpt-4.1":              {Input: 2, Output: 8, CacheRead: 0.5},
	"openai:gpt-4.1-mini":         {Input: 0.4, Output: 1.6, CacheRead: 0.1},
	"openai:gpt-4.1-nano":         {Input: 0.1, Output: 0.4, CacheRead: 0.025},
	"openai:gpt-4o":               {Input: 2.5, Output: 10, CacheRead: 1.25},
}

// freeProviders run on the user's own machine or play scripts.
var freeProviders = map[string]bool{"ollama": true, "vllm": true, "lmstudio": true, "llamacpp": true, "replay": true}

// selfHosted reports whether a base URL names a server on this machine or
// its local network (a loopback or private address, or a host name with no
// dot or under .local, .lan, .internal or .localhost), whose models cost
// nothing. Any other provider:model@URL (a hosted OpenAI-compatible API)
// is priced like the rest: unknown unless given.
func selfHosted(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast()
	}
	if host == "" {
		return false
	}
	if !strings.Contains(host, ".") {
		return true
	}
	for _, suffix := range []string{".local", ".lan", ".internal", ".localhost"} {
		if strings.HasSuffix(host, suffix) {
			return true
		}
	}
	return false
}

// PriceOf returns the price of the model spec ("provider:model"): from
// extra first, then the built-in list prices, which also know a dated
// snapshot by its family ("claude-sonnet-4-5-20250929"). Models served on
// the user's own machine or local network cost nothing. ok is false for a model of unknown
// price.
func PriceOf(spec string, extra map[string]Price) (p Price, ok bool) {
	for _, table := range []map[string]Price{extra, listPrices} {
		if p, ok := table[spec]; ok {
			return p, true
		}
	}
	provider, model, _ := strings.Cut(spec, ":")
	if _, url, ok := strings.Cut(model, "@"); freeProviders[provider] || ok && selfHosted(url) {
		return Price{}, true
	}
	for _, table := range []map[string]Price{extra, listPrices} {
		best := ""
		for known := range table {
			if strings.HasPrefix(spec, known+"-") && len(known) > len(best) {
				best = known
			}
		}
		if best != "" {
			return table[best], true
		}
	}
	return Price{}, false
}
