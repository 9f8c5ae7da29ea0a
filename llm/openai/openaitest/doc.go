// Package openaitest serves scripted answers over the real Chat Completions
// wire format (server-sent events ending in "data: [DONE]"), for tests that
// run the openai provider, or a whole CLI, without the network.
//
// Point a model at it with Options.BaseURL or OPENAI_BASE_URL set to
// [Server.URL], which ends in /v1 like every OpenAI-compatible base URL
// (the SDK appends chat/completions).
package openaitest
