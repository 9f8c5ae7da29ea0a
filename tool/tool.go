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

// Result is a tool's answer when it holds more than text: Text is what the
// model reads, Parts (images, say) follow it in the same tool result, and
// IsError marks a failed call, like an error returned by Call.
type Result struct {
	Text    string
	Parts   []llm.Part
	IsError bool
}

// ResultCaller is implemented by tools whose answers may hold images, such
// as the tools of an MCP server. The agent calls CallResult instead of Call
// when a tool has it; a returned error is treated as Call's.
type ResultCaller interface {
	CallResult(ctx context.Context, args json.RawMessage) (Result, error)
}
