// Package llm defines the provider-neutral vocabulary spoken between the agent
// harness and language models: messages and their content parts, tool
// specifications, the streaming [Model] interface, token [Usage], and a
// [Registry] that turns spec strings such as "anthropic:claude-sonnet-4-5"
// into models.
//
// Providers live in sub-packages (llm/anthropic, llm/openai); llm/replay
// holds a scripted model for tests and offline runs.
package llm
