package openai_test

import (
	"testing"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/internal/providertest"
	"github.com/deepagents-go/deepagents/llm/openai"
)

func TestLimits(t *testing.T) {
	providertest.RunLimits(t, providertest.LimitsCase{
		New: func(t *testing.T, baseURL string, l llm.Limits, maxRetries int) llm.Model {
			return newModel(t, baseURL, openai.Options{Limits: l, MaxRetries: maxRetries})
		},
		Start: "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4.1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n",
		Delta: "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4.1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"flood flood flood flood flood flood flood\"},\"finish_reason\":null}]}\n\n",
		Full:  fixture(t, "text.sse"),
	})
}
