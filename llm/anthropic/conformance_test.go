package anthropic_test

import (
	"testing"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/anthropic"
	"github.com/deepagents-go/deepagents/llm/anthropic/anthropictest"
	"github.com/deepagents-go/deepagents/llm/modeltest"
)

// TestModelContract runs the llm.Model conformance suite against the
// provider, over a server that speaks the Messages API's wire format.
func TestModelContract(t *testing.T) {
	modeltest.Run(t, func(t *testing.T, answers []modeltest.Answer) llm.Model {
		turns := make([]anthropictest.Turn, len(answers))
		for i, a := range answers {
			turns[i] = anthropictest.Turn{Text: a.Text, Usage: anthropictest.Usage{InputTokens: a.InputTokens, OutputTokens: a.OutputTokens}}
			for _, c := range a.ToolCalls {
				turns[i].ToolCalls = append(turns[i].ToolCalls, anthropictest.ToolCall{Name: c.Name, Input: c.Args})
			}
		}
		srv := anthropictest.NewServer(turns...)
		t.Cleanup(srv.Close)
		return newModel(t, srv.URL, anthropic.Options{})
	})
}
