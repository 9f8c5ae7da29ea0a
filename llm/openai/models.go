package openai

import "strings"

// contextWindows lists known models by id prefix, most specific first:
// the number of input tokens a request may hold.
var contextWindows = []struct {
	prefix string
	tokens int
}{
	{"gpt-5.5", 1_050_000},
	{"gpt-5.4", 1_050_000},
	{"gpt-5-chat", 128_000},
	{"gpt-5.1-chat", 128_000},
	{"gpt-5.2-chat", 128_000},
	{"gpt-5", 272_000}, // 400K in all, of which 128K are output
	{"gpt-4.1", 1_047_576},
	{"gpt-4o", 128_000},
	{"chatgpt-4o", 128_000},
	{"gpt-4-turbo", 128_000},
	{"gpt-4-0125", 128_000},
	{"gpt-4-1106", 128_000},
	{"gpt-4-32k", 32_768},
	{"gpt-4", 8_192},
	{"gpt-3.5-turbo", 16_385},
	{"gpt-oss", 131_072},
	{"o1-mini", 128_000},
	{"o1-preview", 128_000},
	{"o1", 200_000},
	{"o3", 200_000},
	{"o4-mini", 200_000},
}

// contextWindow returns the known context window of a model, or 0.
func contextWindow(model string) int {
	m := strings.ToLower(model)
	for _, k := range contextWindows {
		if strings.HasPrefix(m, k.prefix) {
			return k.tokens
		}
	}
	return 0
}
