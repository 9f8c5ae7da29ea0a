// Package anthropic implements [llm.Model] for Claude with the official
// Anthropic Go SDK (github.com/anthropics/anthropic-sdk-go), over the
// streaming Messages API.
//
// What it maps:
//
//   - Text, images and tool results (with is_error) in; text, extended
//     thinking and tool calls out. Tool input JSON streamed in fragments
//     is assembled before a [llm.ChunkToolCall] is yielded; an empty input
//     becomes {}.
//   - Thinking blocks become [llm.PartReasoning] parts with their
//     Signature, and redacted_thinking blocks parts with Redacted set and
//     the opaque payload in Data. Both are sent back unchanged on later
//     turns, as the API requires; reasoning without a signature (from
//     another provider) is dropped.
//   - [llm.CacheHints]: Prefix puts cache_control on the last tool
//     definition and on the system prompt, Tail on the last content block
//     of the last message; TTL "5m" or "1h" is passed through. The system
//     prompt and tool definitions are serialised deterministically (tool
//     schemas byte for byte as given), so the cached prefix is
//     byte-identical from one request to the next.
//   - Usage: the API's input_tokens excludes cache reads and writes;
//     [llm.Usage].InputTokens is their sum, with cache_read_input_tokens
//     and cache_creation_input_tokens in CacheReadTokens and
//     CacheWriteTokens.
//   - ResponseSchema uses the API's native structured output
//     (output_config.format of type json_schema) rather than a forced tool,
//     so the model can still call tools before its final, schema-shaped
//     answer, and extended thinking stays allowed.
//   - max_tokens defaults per model from a built-in table (see
//     [Options].MaxTokens), as does the context window in [Model.Info].
//
// Retries are the SDK's: connection errors, 408, 409, 429 and 5xx are
// retried with exponential backoff (0.5 s doubling, at most 8 s, with
// jitter) or after the server's retry-after-ms / retry-after, up to
// [Options].MaxRetries times. A retry-after longer than
// [Options].MaxRetryDelay is not waited for: the error is returned at once.
// A stream that breaks before yielding anything (an "overloaded" error
// event right after the headers, a connection lost before the first delta)
// is retried the same way; one that breaks after yielding deltas is not,
// and ends with an error wrapping [llm.ErrIncomplete].
package anthropic
