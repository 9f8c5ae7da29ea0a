package tool

import (
	"context"
	"encoding/json"

	"github.com/deepagents-go/deepagents/llm"
)

// Tool is something a model can call.
//
// Call runs the tool with the arguments the model produced (a JSON object)
// and returns the text the model sees. A returned error is shown to the
// model as a failed call, with the error's text as the result; it does not
// stop the run. Call must honour ctx and be safe for concurrent use.
type Tool interface {
	Spec() llm.ToolSpec
	Call(ctx context.Context, args json.RawMessage) (string, error)
}
