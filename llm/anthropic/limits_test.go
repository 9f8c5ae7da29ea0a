package anthropic_test

import (
	"testing"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/anthropic"
	"github.com/deepagents-go/deepagents/llm/internal/providertest"
)

func TestLimits(t *testing.T) {
	providertest.RunLimits(t, providertest.LimitsCase{
		New: func(t *testing.T, baseURL string, l llm.Limits, maxRetries int) llm.Model {
			return newModel(t, baseURL, anthropic.Options{Limits: l, MaxRetries: maxRetries})
		},
		Start: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
		Delta: "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"flood flood flood flood flood flood flood flood\"}}\n\n",
		Full:  fixture(t, "text.sse"),
	})
}
