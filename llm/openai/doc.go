// Package openai implements [llm.Model] over the streaming Chat
// Completions API, with net/http and encoding/json alone, for OpenAI itself and for every OpenAI-compatible server (Ollama,
// vLLM, LM Studio, llama.cpp, gateways).
//
// What it maps:
//
//   - Text and images in (a tool result's images follow the tool messages
//     in a user message, since tool messages carry text only); text, tool
//     calls and reasoning out. Parallel tool calls stream as fragments
//     keyed by index; each call is assembled, and the calls are yielded
//     once the stream is complete. Arguments that are not valid JSON are
//     kept as a JSON string, so the message stays storable and the tool
//     layer reports the mistake.
//   - Reasoning that compatible servers stream beside the content
//     (reasoning_content from vLLM, DeepSeek and llama.cpp; reasoning from
//     Ollama) becomes a [llm.PartReasoning] part. It is not sent back.
//   - Usage comes from the final chunk (stream_options.include_usage).
//     prompt_tokens already counts cached tokens, so it is
//     [llm.Usage].InputTokens as is; prompt_tokens_details.cached_tokens
//     is CacheReadTokens.
//   - ResponseSchema becomes response_format of type json_schema (not
//     strict, so any schema is accepted).
//   - Finish reasons map to [llm.StopReason]; "stop" with tool calls (some
//     compatible servers) counts as tool use.
//   - The OpenAI API gets max_completion_tokens; other servers get
//     max_tokens, which they all read.
//
// An error response that is not retried is an [*APIError] (status, type,
// code, param, message, request id), wrapped.
//
// Why not the official SDK: github.com/openai/openai-go/v3 costs 20 MB
// of the CLI's binary for this one endpoint (its root package registers
// every OpenAI API's unions with reflection at init); docs/BENCHMARKS.md
// has the measurement. The wire this package speaks is pinned byte for
// byte by the exchanges in testdata.
//
// A stream is complete only when it ends with "data: [DONE]" after a
// finish reason; anything short of that (a dropped connection, an error
// payload, malformed data) ends with an error wrapping [llm.ErrIncomplete]
// and no ChunkDone.
//
// Retries: connection errors, 408, 409, 429 and 5xx are
// retried with exponential backoff or after the server's retry-after-ms /
// retry-after, up to [Options].MaxRetries times; a retry-after longer than
// [Options].MaxRetryDelay is not waited for. A stream that breaks before
// yielding anything is retried the same way; one that breaks after is not.
//
// The registry names ([Register]): "openai:MODEL" (OPENAI_API_KEY,
// OPENAI_BASE_URL), "ollama:MODEL" (OLLAMA_HOST or localhost:11434),
// "vllm:MODEL" (localhost:8000), "lmstudio:MODEL" (localhost:1234), and
// "PROVIDER:MODEL@URL" for a server named in the spec.
package openai
