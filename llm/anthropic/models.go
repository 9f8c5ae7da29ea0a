package anthropic

import "strings"

// modelLimits are the published limits of a model family.
type modelLimits struct {
	prefix        string
	contextWindow int // input tokens
	maxOutput     int // the API's max_tokens ceiling
}

// knownModels lists Claude model families by id prefix, most specific
// first. Dated ids ("claude-sonnet-4-5-20250929") match their family.
var knownModels = []modelLimits{
	// Claude 5 and later generations: 1M context, 128K output.
	{"claude-fable-", 1_000_000, 128_000},
	{"claude-mythos-", 1_000_000, 128_000},
	{"claude-opus-5", 1_000_000, 128_000},
	{"claude-sonnet-5", 1_000_000, 128_000},
	{"claude-haiku-5", 1_000_000, 128_000},
	// Claude 4.6 and later 4.x: 1M context, 128K output.
	{"claude-opus-4-6", 1_000_000, 128_000},
	{"claude-opus-4-7", 1_000_000, 128_000},
	{"claude-opus-4-8", 1_000_000, 128_000},
	{"claude-sonnet-4-6", 1_000_000, 128_000},
	// Claude 4.5: 200K context, 64K output.
	{"claude-opus-4-5", 200_000, 64_000},
	{"claude-sonnet-4-5", 200_000, 64_000},
	{"claude-haiku-4-5", 200_000, 64_000},
	// Claude 4 and 4.1.
	{"claude-opus-4-1", 200_000, 32_000},
	{"claude-opus-4", 200_000, 32_000},
	{"claude-sonnet-4", 200_000, 64_000},
	// Claude 3.x.
	{"claude-3-7-sonnet", 200_000, 64_000},
	{"claude-3-5-sonnet", 200_000, 8_192},
	{"claude-3-5-haiku", 200_000, 8_192},
	{"claude-3-opus", 200_000, 4_096},
	{"claude-3-haiku", 200_000, 4_096},
}

const (
	// maxDefaultTokens caps the max_tokens sent when neither the request nor
	// the options set one: large enough for an agent writing a whole file,
	// small enough to stay well inside every current model's ceiling.
	maxDefaultTokens = 32_000
	// unknownClaudeContext and unknownClaudeMaxTokens apply to a "claude-"
	// model missing from the table (a newer release): every Claude model
	// so far has at least this much.
	unknownClaudeContext   = 200_000
	unknownClaudeMaxTokens = 16_384
	// unknownMaxTokens applies to a model name that is not Claude's at all
	// (an alias on a proxy): a value every Messages API model accepts.
	unknownMaxTokens = 8_192
)

// limitsFor returns the context window and default max_tokens of a model.
// A zero context window means unknown.
func limitsFor(model string) (contextWindow, defaultMaxTokens int) {
	m := strings.ToLower(model)
	for _, k := range knownModels {
		if strings.HasPrefix(m, k.prefix) {
			return k.contextWindow, min(k.maxOutput, maxDefaultTokens)
		}
	}
	if strings.HasPrefix(m, "claude-") {
		return unknownClaudeContext, unknownClaudeMaxTokens
	}
	return 0, unknownMaxTokens
}
