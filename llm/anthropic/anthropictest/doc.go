// Package anthropictest serves scripted Claude answers over the real
// Messages API wire format (server-sent events), for tests that run the
// anthropic provider, or a whole CLI, without the network.
//
// Point a model at it with Options.BaseURL or ANTHROPIC_BASE_URL set to
// [Server.URL] (the SDK appends /v1/messages), and any non-empty key.
package anthropictest
