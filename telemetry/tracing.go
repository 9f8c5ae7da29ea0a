package telemetry

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/llm"
)

// ScopeName is the instrumentation scope of the spans this package makes.
const ScopeName = "github.com/deepagents-go/deepagents/telemetry"

// CaptureContentEnv is the environment variable that turns on the
// recording of content (see Options.CaptureContent) when it is "true"
// (or "span_only" or "span_and_event", the values of newer GenAI
// instrumentations), whatever the Options say.
const CaptureContentEnv = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

// DefaultMaxContentBytes is the default bound of each content attribute.
const DefaultMaxContentBytes = 16 << 10

// Options configure [New].
type Options struct {
	// CaptureContent records what the model and the tools see and say on
	// the spans: the system prompt (gen_ai.system_instructions), the
	// messages sent (gen_ai.input.messages) and received
	// (gen_ai.output.messages), tool arguments (gen_ai.tool.call.arguments)
	// and results (gen_ai.tool.call.result). Off by default: they may hold
	// anything the user, the files or the tools hold. The environment
	// variable CaptureContentEnv turns it on too.
	CaptureContent bool
	// MaxContentBytes bounds each content attribute; zero means
	// DefaultMaxContentBytes. Long texts are cut (each text of a message to
	// a quarter of it), and the oldest messages of a request left out, so
	// that the attribute stays valid JSON.
	MaxContentBytes int
}

// Tracing is the middleware that traces an agent: a span per run
// (invoke_agent), per model call (chat) and per tool call (execute_tool),
// following the OpenTelemetry GenAI semantic conventions. Put it first in
// the stack so that its spans cover what the other middleware do; the
// deep agent does when deepagents.Config.TracerProvider is set, for the
// main agent and its declarative subagents alike.
//
// A subagent run by the task tool gets the tool's context, so its
// invoke_agent span is a child of the task's execute_tool span. A Tracing
// keeps no state per run: one instance serves any number of agents.
type Tracing struct {
	tracer  trace.Tracer
	content bool
	limit   int
}

// New returns the tracing middleware, making spans with tp (the global
// provider, otel.GetTracerProvider, when nil).
func New(tp trace.TracerProvider, opts Options) *Tracing {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	t := &Tracing{
		tracer:  tp.Tracer(ScopeName),
		content: opts.CaptureContent || captureFromEnv(os.Getenv(CaptureContentEnv)),
		limit:   opts.MaxContentBytes,
	}
	if t.limit <= 0 {
		t.limit = DefaultMaxContentBytes
	}
	return t
}

// captureFromEnv reads CaptureContentEnv.
func captureFromEnv(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "span_only", "span_and_event":
		return true
	}
	return false
}

// Name implements agent.Middleware.
func (*Tracing) Name() string { return "tracing" }

// Attribute keys of the GenAI semantic conventions, and the few of this
// package (deepagents.*).
const (
	keyOperation       = attribute.Key("gen_ai.operation.name")
	keyProvider        = attribute.Key("gen_ai.provider.name")
	keyAgentName       = attribute.Key("gen_ai.agent.name")
	keyConversation    = attribute.Key("gen_ai.conversation.id")
	keyRequestModel    = attribute.Key("gen_ai.request.model")
	keyResponseModel   = attribute.Key("gen_ai.response.model")
	keyMaxTokens       = attribute.Key("gen_ai.request.max_tokens")
	keyTemperature     = attribute.Key("gen_ai.request.temperature")
	keyOutputType      = attribute.Key("gen_ai.output.type")
	keyFinishReasons   = attribute.Key("gen_ai.response.finish_reasons")
	keyInputTokens     = attribute.Key("gen_ai.usage.input_tokens")
	keyOutputTokens    = attribute.Key("gen_ai.usage.output_tokens")
	keyCacheRead       = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	keyCacheCreation   = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	keyToolName        = attribute.Key("gen_ai.tool.name")
	keyToolCallID      = attribute.Key("gen_ai.tool.call.id")
	keyToolType        = attribute.Key("gen_ai.tool.type")
	keyToolArguments   = attribute.Key("gen_ai.tool.call.arguments")
	keyToolResult      = attribute.Key("gen_ai.tool.call.result")
	keySystem          = attribute.Key("gen_ai.system_instructions")
	keyInputMessages   = attribute.Key("gen_ai.input.messages")
	keyOutputMessages  = attribute.Key("gen_ai.output.messages")
	keyErrorType       = attribute.Key("error.type")
	keyErrorMessage    = attribute.Key("error.message")
	keyRunStatus       = attribute.Key("deepagents.run.status")
	keyRunSteps        = attribute.Key("deepagents.run.steps")
	keyRunResumed      = attribute.Key("deepagents.run.resumed")
	keyInterrupts      = attribute.Key("deepagents.run.interrupts")
	keyToolInterrupted = attribute.Key("deepagents.tool.interrupted")
	keyDropped         = attribute.Key("deepagents.input.messages.omitted")
)

// Operation names (gen_ai.operation.name).
const (
	OpInvokeAgent = "invoke_agent"
	OpChat        = "chat"
	OpExecuteTool = "execute_tool"
)

var (
	opInvokeAgent = keyOperation.String(OpInvokeAgent)
	opChat        = keyOperation.String(OpChat)
	opExecuteTool = keyOperation.String(OpExecuteTool)
	toolFunction  = keyToolType.String("function")

	errToolError   = keyErrorType.String("tool_error")
	errUnknownTool = keyErrorType.String("unknown_tool")
)

// providerName is gen_ai.provider.name for a model: the provider it names,
// or "_OTHER".
func providerName(info llm.Info) attribute.KeyValue {
	if info.Provider == "" {
		return keyProvider.String("_OTHER")
	}
	return keyProvider.String(info.Provider)
}

// WrapRun implements agent.RunWrapper: the invoke_agent span, the parent of
// every span of the run.
func (t *Tracing) WrapRun(ctx context.Context, req *agent.RunRequest, next agent.RunHandler) (*agent.Result, error) {
	a := req.Agent
	info := llm.Describe(a.Model())
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, opInvokeAgent, providerName(info), keyAgentName.String(a.Name()), keyConversation.String(req.ThreadID))
	if info.Name != "" {
		attrs = append(attrs, keyRequestModel.String(info.Name))
	}
	if req.Input.Decisions != nil {
		attrs = append(attrs, keyRunResumed.Bool(true))
	}
	ctx, span := t.tracer.Start(ctx, OpInvokeAgent+" "+a.Name(), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	defer span.End()
	rec := span.IsRecording()
	if rec && t.content && len(req.Input.Messages) > 0 {
		in, omitted := t.messagesJSON(req.Input.Messages)
		span.SetAttributes(keyInputMessages.String(in))
		if omitted > 0 {
			span.SetAttributes(keyDropped.Int(omitted))
		}
	}
	res, err := next(ctx, req)
	if !rec {
		return res, err
	}
	if res != nil {
		end := make([]attribute.KeyValue, 0, 8)
		end = append(end, keyRunStatus.String(string(res.Status)), keyRunSteps.Int(res.Steps))
		end = appendUsage(end, res.Usage)
		if res.Status == agent.StatusInterrupted {
			end = append(end, keyInterrupts.Int(len(res.Interrupts)))
		}
		if t.content && res.Status == agent.StatusCompleted {
			if last := res.LastMessage(); last != nil && last.Role == llm.RoleAssistant {
				end = append(end, keyOutputMessages.String(t.outputJSON(last, llm.StopEnd)))
			}
		}
		span.SetAttributes(end...)
	}
	if err != nil {
		failSpan(span, err)
	}
	return res, err
}

// WrapModel implements agent.ModelWrapper. The chat span is made around
// the model's stream itself (see tracedModel), so that it records the
// request as it finally goes out, after every other middleware changed it,
// and so that calls other middleware make with the request's model (the
// summary call of summarization) are traced too.
func (t *Tracing) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	if _, ok := req.Model.(*tracedModel); !ok && req.Model != nil {
		req.Model = &tracedModel{inner: req.Model, t: t}
	}
	return next(ctx, req)
}

// tracedModel makes a chat span of every call of the model it wraps. It
// describes itself as that model does.
type tracedModel struct {
	inner llm.Model
	t     *Tracing
}

// Info implements llm.Describer with the wrapped model's Info.
func (m *tracedModel) Info() llm.Info { return llm.Describe(m.inner) }

// Stream implements llm.Model.
func (m *tracedModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		t := m.t
		info := llm.Describe(m.inner)
		attrs := make([]attribute.KeyValue, 0, 8)
		attrs = append(attrs, opChat, providerName(info))
		if info.Name != "" {
			attrs = append(attrs, keyRequestModel.String(info.Name))
		}
		if name := llm.AgentFromContext(ctx); name != "" {
			attrs = append(attrs, keyAgentName.String(name))
		}
		if rt := agent.RuntimeFromContext(ctx); rt != nil {
			attrs = append(attrs, keyConversation.String(rt.ThreadID()))
		}
		if req.MaxTokens > 0 {
			attrs = append(attrs, keyMaxTokens.Int(req.MaxTokens))
		}
		if req.Temperature != nil {
			attrs = append(attrs, keyTemperature.Float64(*req.Temperature))
		}
		if len(req.ResponseSchema) > 0 {
			attrs = append(attrs, keyOutputType.String("json"))
		}
		name := OpChat
		if info.Name != "" {
			name += " " + info.Name
		}
		parent := ctx
		ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
		defer span.End()
		rec := span.IsRecording()
		if rec {
			ctx = llm.WithRetryNotify(ctx, func(r llm.Retry) {
				span.AddEvent("retry", trace.WithAttributes(
					attribute.Int("deepagents.retry.attempt", r.Attempt),
					attribute.Int("deepagents.retry.max_attempts", r.MaxAttempts),
					attribute.Int64("deepagents.retry.wait_ms", r.Wait.Milliseconds()),
					keyErrorMessage.String(bounded(errString(r.Err), maxStatusBytes)),
				))
				llm.NotifyRetry(parent, r)
			})
			if t.content {
				if req.System != "" {
					span.SetAttributes(keySystem.String(t.systemJSON(req.System)))
				}
				in, omitted := t.messagesJSON(req.Messages)
				span.SetAttributes(keyInputMessages.String(in))
				if omitted > 0 {
					span.SetAttributes(keyDropped.Int(omitted))
				}
			}
		}
		done := false
		for c, err := range m.inner.Stream(ctx, req) {
			if err != nil {
				if rec {
					failSpan(span, err)
				}
				yield(c, err)
				return
			}
			if c.Type == llm.ChunkDone && c.Response != nil && !done {
				done = true
				if rec {
					t.endChat(span, c.Response)
				}
			}
			if !yield(c, nil) {
				break
			}
		}
		if !done && rec {
			err := ctx.Err()
			if err == nil {
				err = llm.ErrIncomplete
			}
			failSpan(span, err)
		}
	}
}

// endChat records a model's response on its chat span.
func (t *Tracing) endChat(span trace.Span, resp *llm.Response) {
	attrs := make([]attribute.KeyValue, 0, 7)
	if resp.Model != "" {
		attrs = append(attrs, keyResponseModel.String(resp.Model))
	}
	if resp.StopReason != "" {
		if kv, ok := finishReasons[resp.StopReason]; ok {
			attrs = append(attrs, kv)
		} else {
			attrs = append(attrs, keyFinishReasons.StringSlice([]string{finishReason(resp.StopReason)}))
		}
	}
	attrs = appendUsage(attrs, resp.Usage)
	if t.content {
		attrs = append(attrs, keyOutputMessages.String(t.outputJSON(&resp.Message, resp.StopReason)))
	}
	span.SetAttributes(attrs...)
}

// finishReasons holds gen_ai.response.finish_reasons for the common stop
// reasons, made once.
var finishReasons = func() map[llm.StopReason]attribute.KeyValue {
	m := make(map[llm.StopReason]attribute.KeyValue)
	for _, r := range []llm.StopReason{llm.StopEnd, llm.StopToolUse, llm.StopMaxTokens, llm.StopRefusal, llm.StopOther} {
		m[r] = keyFinishReasons.StringSlice([]string{finishReason(r)})
	}
	return m
}()

// appendUsage appends the token counts of u; input tokens include the
// cached ones, as the conventions ask (and as llm.Usage counts them).
func appendUsage(attrs []attribute.KeyValue, u llm.Usage) []attribute.KeyValue {
	attrs = append(attrs, keyInputTokens.Int(u.InputTokens), keyOutputTokens.Int(u.OutputTokens))
	if u.CacheReadTokens > 0 {
		attrs = append(attrs, keyCacheRead.Int(u.CacheReadTokens))
	}
	if u.CacheWriteTokens > 0 {
		attrs = append(attrs, keyCacheCreation.Int(u.CacheWriteTokens))
	}
	return attrs
}

// finishReason maps a stop reason to the conventions' finish reasons.
func finishReason(r llm.StopReason) string {
	switch r {
	case llm.StopEnd:
		return "stop"
	case llm.StopToolUse:
		return "tool_call"
	case llm.StopMaxTokens:
		return "length"
	case llm.StopRefusal:
		return "content_filter"
	}
	return string(r)
}

// WrapTool implements agent.ToolWrapper: the execute_tool span. A result
// marked as an error sets the span's status to Error.
func (t *Tracing) WrapTool(ctx context.Context, req *agent.ToolRequest, next agent.ToolHandler) (agent.ToolResult, error) {
	ctx, span := t.tracer.Start(ctx, OpExecuteTool+" "+req.Call.Name, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(opExecuteTool, keyToolName.String(req.Call.Name), keyToolCallID.String(req.Call.ID), toolFunction))
	defer span.End()
	rec := span.IsRecording()
	if rec && t.content {
		span.SetAttributes(keyToolArguments.String(t.argsJSON(req.Call.Args)))
	}
	res, err := next(ctx, req)
	if !rec {
		return res, err
	}
	var ie *agent.InterruptError
	switch {
	case errors.As(err, &ie):
		// Waiting for a human is no failure: the call runs again on resume.
		span.SetAttributes(keyToolInterrupted.Bool(true))
	case err != nil:
		failSpan(span, err)
	case res.IsError && req.Tool == nil:
		span.SetAttributes(errUnknownTool)
		span.SetStatus(codes.Error, "the tool call failed")
	case res.IsError:
		span.SetAttributes(errToolError)
		span.SetStatus(codes.Error, "the tool call failed")
	}
	if t.content && err == nil {
		span.SetAttributes(keyToolResult.String(bounded(res.Content, t.limit)))
	}
	return res, err
}

// maxStatusBytes bounds a span status description and error messages.
const maxStatusBytes = 1024

// failSpan marks a span failed with err.
func failSpan(span trace.Span, err error) {
	span.SetAttributes(keyErrorType.String(ErrorType(err)))
	span.SetStatus(codes.Error, bounded(err.Error(), maxStatusBytes))
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// ErrorType returns the error.type this package records for err: a name
// for the errors of a run it knows ("canceled", "timeout", "max_steps",
// "panic", "response_schema", "incomplete", "missing_key"), else the Go
// type of the innermost error that has a type of its own (such as
// "*url.Error"), else "_OTHER".
func ErrorType(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, agent.ErrMaxSteps):
		return "max_steps"
	case errors.Is(err, agent.ErrPanic):
		return "panic"
	case errors.Is(err, agent.ErrResponseSchema):
		return "response_schema"
	case errors.Is(err, llm.ErrIncomplete):
		return "incomplete"
	case errors.Is(err, llm.ErrMissingKey):
		return "missing_key"
	}
	typ := "_OTHER"
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch name := fmt.Sprintf("%T", e); name {
		case "*errors.errorString", "*fmt.wrapError", "*fmt.wrapErrors", "*errors.joinError":
		default:
			typ = name
		}
	}
	return typ
}
