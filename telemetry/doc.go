// Package telemetry traces agents with OpenTelemetry, following the GenAI
// semantic conventions: a span per run (invoke_agent), per model call
// (chat) and per tool call (execute_tool), nested as the run nests them,
// subagents included:
//
//	invoke_agent main
//	├── chat claude-sonnet-4-5
//	├── execute_tool task
//	│   └── invoke_agent general-purpose
//	│       ├── chat claude-sonnet-4-5
//	│       └── execute_tool read_file
//	└── chat claude-sonnet-4-5
//
// [Tracing] is the middleware that makes them, with the OpenTelemetry API
// only: it exports nothing itself, the TracerProvider it is given does. The
// deep agent adds it when deepagents.Config.TracerProvider is set; package
// telemetry/otlp builds a provider that exports over OTLP as the standard
// OTEL_* environment variables say, which is what the command line does.
//
// Spans record the model, token counts, finish reasons, tool names and
// errors; prompts, completions, tool arguments and results only when
// content capture is turned on (Options.CaptureContent, or
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true), and bounded.
// docs/telemetry.md lists every attribute.
package telemetry
