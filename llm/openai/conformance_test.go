package openai_test

import (
	"testing"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/modeltest"
	"github.com/deepagents-go/deepagents/llm/openai"
	"github.com/deepagents-go/deepagents/llm/openai/openaitest"
)

// TestModelContract runs the llm.Model conformance suite against the
// provider, over a server that speaks the Chat Completions wire format.
func TestModelContract(t *testing.T) {
	modeltest.Run(t, func(t *testing.T, answers []modeltest.Answer) llm.Model {
		turns := make([]openaitest.Turn, len(answers))
		for i, a := range answers {
			turns[i] = openaitest.Turn{Text: a.Text, Usage: openaitest.Usage{PromptTokens: a.InputTokens, CompletionTokens: a.OutputTokens}}
			for _, c := range a.ToolCalls {
				turns[i].ToolCalls = append(turns[i].ToolCalls, openaitest.ToolCall{Name: c.Name, Arguments: c.Args})
			}
		}
		srv := openaitest.NewServer(turns...)
		t.Cleanup(srv.Close)
		return newModel(t, srv.URL, openai.Options{})
	})
}
