package llm

// Usage counts the tokens of one or more model calls.
//
// InputTokens counts every input token, including those read from or
// written to the prompt cache; CacheReadTokens and CacheWriteTokens say how
// many of them were.
type Usage struct {
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
}

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheReadTokens += o.CacheReadTokens
	u.CacheWriteTokens += o.CacheWriteTokens
}

// Total returns input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// IsZero reports whether u counts nothing.
func (u Usage) IsZero() bool { return u == Usage{} }
