package replay_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/modeltest"
	"github.com/deepagents-go/deepagents/llm/replay"
)

// TestModelContract runs the llm.Model conformance suite against the
// scripted model.
func TestModelContract(t *testing.T) {
	modeltest.Run(t, func(t *testing.T, answers []modeltest.Answer) llm.Model {
		turns := make([]replay.Turn, len(answers))
		for i, a := range answers {
			turns[i] = replay.Turn{Content: a.Text, Usage: llm.Usage{InputTokens: a.InputTokens, OutputTokens: a.OutputTokens}}
			for j, c := range a.ToolCalls {
				turns[i].ToolCalls = append(turns[i].ToolCalls, llm.ToolCall{ID: fmt.Sprintf("call_%d_%d", i, j), Name: c.Name, Args: json.RawMessage(c.Args)})
			}
		}
		return replay.New(turns...)
	})
}
