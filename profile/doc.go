// Package profile shapes the harness for a family of models: a section
// added to the system prompt, tool descriptions in the words a family
// follows best, and how requests are marked for the provider's prompt
// cache.
//
// deepagents.New picks a profile by the model ([For]) unless
// Config.Profile names one. The built-in profiles are
//
//	claude   Anthropic's Claude models: cache breakpoints on the stable
//	         prefix and the conversation; a short section on parallel
//	         tool calls and reading before answering.
//	gpt      OpenAI's GPT and o-series models: a prompt_cache_key per
//	         thread (OpenAI caches prefixes by itself); a short section on
//	         persistence and tool use.
//	codex    OpenAI's Codex models: gpt's caching, and a section on
//	         autonomous work, batched reads and closing the plan.
//	open     open models behind OpenAI-compatible servers (Ollama, vLLM,
//	         LM Studio, a server named by URL): no cache marks (such servers
//	         cache prefixes by themselves, and some refuse fields they do
//	         not know), a section on calling tools exactly, smaller
//	         pages in read_file's description and a shorter glob one, for
//	         the small context windows such servers often run with.
//	default  any other model (a scripted one, your own llm.Model): cache
//	         breakpoints, nothing added.
//
// A profile is a plain value: take one with [For] or [Builtin], change
// what you want, and give it to deepagents.Config.Profile. docs/profiles.md
// says what each changes and why.
package profile
