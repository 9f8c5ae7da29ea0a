package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/telemetry"
)

// A deep agent traced into memory: set Config.TracerProvider to any
// OpenTelemetry provider. The spans end innermost first.
func Example() {
	ctx := context.Background()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(ctx) //nolint:errcheck

	model := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "write_todos",
			Args: json.RawMessage(`{"todos":[{"content":"Draft the checklist","status":"in_progress"}]}`)}},
			Usage: llm.Usage{InputTokens: 1200, OutputTokens: 40}},
		replay.Turn{Content: "The checklist is drafted.", Usage: llm.Usage{InputTokens: 1300, OutputTokens: 12}},
	)
	a, err := deepagents.New(deepagents.Config{Model: model, TracerProvider: tp})
	if err != nil {
		panic(err)
	}
	if _, err := a.Invoke(ctx, agent.Input{ThreadID: "thread-1", Messages: []llm.Message{llm.UserText("Draft the release checklist")}}); err != nil {
		panic(err)
	}
	for _, s := range spans.GetSpans() {
		attrs := map[string]string{}
		for _, kv := range s.Attributes {
			attrs[string(kv.Key)] = kv.Value.Emit()
		}
		switch attrs["gen_ai.operation.name"] {
		case telemetry.OpChat:
			fmt.Printf("%s: %s in, %s out, finish %s\n", s.Name, attrs["gen_ai.usage.input_tokens"], attrs["gen_ai.usage.output_tokens"], attrs["gen_ai.response.finish_reasons"])
		case telemetry.OpExecuteTool:
			fmt.Printf("%s: call %s\n", s.Name, attrs["gen_ai.tool.call.id"])
		case telemetry.OpInvokeAgent:
			fmt.Printf("%s: thread %s, %s\n", s.Name, attrs["gen_ai.conversation.id"], attrs["deepagents.run.status"])
		}
	}
	// Output:
	// chat script: 1200 in, 40 out, finish ["tool_call"]
	// execute_tool write_todos: call call_1
	// chat script: 1300 in, 12 out, finish ["stop"]
	// invoke_agent main: thread thread-1, completed
}

// Tracing an agent assembled by hand: the middleware goes first in its
// stack, so that its spans cover the other middleware's work.
func ExampleNew() {
	ctx := context.Background()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(ctx) //nolint:errcheck

	a, err := agent.New(agent.Config{
		Name:       "greeter",
		Model:      replay.New(replay.Turn{Agent: "greeter", Content: "Hello!"}),
		Middleware: []agent.Middleware{telemetry.New(tp, telemetry.Options{CaptureContent: true})},
	})
	if err != nil {
		panic(err)
	}
	if _, err := a.Invoke(ctx, agent.Prompt("Say hello")); err != nil {
		panic(err)
	}
	for _, s := range spans.GetSpans() {
		for _, kv := range s.Attributes {
			if kv.Key == "gen_ai.output.messages" {
				fmt.Printf("%s: %s\n", s.Name, kv.Value.AsString())
			}
		}
	}
	// Output:
	// chat script: [{"role":"assistant","parts":[{"type":"text","content":"Hello!"}],"finish_reason":"stop"}]
	// invoke_agent greeter: [{"role":"assistant","parts":[{"type":"text","content":"Hello!"}],"finish_reason":"stop"}]
}
