// Package providers registers every model provider of this module in an
// [llm.Registry] and picks a default model from the environment.
//
// Spec strings it makes available:
//
//	anthropic:MODEL         Claude (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL)
//	openai:MODEL            OpenAI (OPENAI_API_KEY, OPENAI_BASE_URL)
//	ollama:MODEL            Ollama at OLLAMA_HOST or localhost:11434, no key
//	vllm:MODEL              vLLM at localhost:8000
//	lmstudio:MODEL          LM Studio at localhost:1234
//	PROVIDER:MODEL@URL      an OpenAI-compatible provider at URL; its key,
//	                        if any, comes from OPENAI_COMPATIBLE_API_KEY
package providers
