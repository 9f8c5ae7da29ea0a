package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/tool"
)

// This file runs a turn's tool calls through the ToolWrapper chain.

// execTools runs a turn's pending calls, concurrently when there are
// several, and returns their result messages in call order. A call that
// raised an interrupt has a nil result.
func (r *run) execTools(ctx context.Context, turn *Turn, calls []llm.ToolCall) ([]*llm.Message, []pendingInterrupt) {
	results := make([]*llm.Message, len(calls))
	irq := make([]*InterruptError, len(calls))
	one := func(i int) {
		res, err := r.callTool(ctx, turn, calls[i])
		var ie *InterruptError
		switch {
		case errors.As(err, &ie):
			irq[i] = ie
			return
		case err != nil: // the context was cancelled
			return
		}
		m := llm.ToolResult(calls[i].ID, calls[i].Name, res.Content, res.IsError)
		m.Parts = append(m.Parts, res.Parts...)
		m.ID = newID()
		results[i] = &m
		if r.rt.emit != nil {
			r.rt.Emit(Event{Type: EventToolResult, MessageID: m.ID, ToolCallID: calls[i].ID, Name: calls[i].Name, Content: res.Content, IsError: res.IsError})
		}
	}
	if len(calls) == 1 {
		one(0)
	} else {
		sem := make(chan struct{}, r.a.maxParallel)
		var wg sync.WaitGroup
		for i := range calls {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				break
			}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				one(i)
			}()
		}
		wg.Wait()
	}
	if files := r.rt.state.Files; files.HasChanges() && r.rt.emit != nil {
		r.rt.Emit(Event{Type: EventState, Files: files.ChangedPaths()})
	}
	var pending []pendingInterrupt
	for i, ie := range irq {
		if ie != nil {
			pending = append(pending, pendingInterrupt{Owner: calls[i].ID, Requests: ie.Requests})
		}
	}
	return results, pending
}

// callTool runs one call through the middleware, turning a panic into an
// error result.
func (r *run) callTool(ctx context.Context, turn *Turn, call llm.ToolCall) (res ToolResult, err error) {
	if ans, ok := turn.answered[call.ID]; ok {
		return ans, nil
	}
	if r.rt.emit != nil {
		r.rt.Emit(Event{Type: EventToolCall, ToolCallID: call.ID, Name: call.Name, Args: call.Args})
	}
	defer func() {
		if p := recover(); p != nil {
			r.a.log.Error("tool panicked", "tool", call.Name, "panic", p)
			res, err = ToolResult{Content: fmt.Sprintf("Error: tool %q failed unexpectedly: %v", call.Name, p), IsError: true}, nil
		}
	}()
	if ds, ok := r.nested[call.ID]; ok {
		ctx = context.WithValue(ctx, nestedKey{}, ds)
	}
	return r.a.callTool(ctx, &ToolRequest{Call: call, Tool: r.a.tools[call.Name], Turn: turn.Message.ToolCalls, Runtime: r.rt})
}

type nestedKey struct{}

// NestedDecisions returns, inside a tool call being re-run on resume, the
// decisions for the action requests that call raised when it returned an
// *InterruptError. A tool that runs a subagent passes them on to it.
func NestedDecisions(ctx context.Context) ([]Decision, bool) {
	ds, ok := ctx.Value(nestedKey{}).([]Decision)
	return ds, ok
}

// runTool is the innermost tool handler: it calls the tool.
func (a *Agent) runTool(ctx context.Context, req *ToolRequest) (ToolResult, error) {
	if req.Tool == nil {
		return ToolResult{Content: fmt.Sprintf("Error: unknown tool %q. Available tools: %s", req.Call.Name, a.toolNames()), IsError: true}, nil
	}
	ctx = context.WithValue(ctx, callKey{}, &req.Call)
	if rc, ok := req.Tool.(tool.ResultCaller); ok {
		r, err := rc.CallResult(ctx, req.Call.Args)
		if err == nil {
			return ToolResult{Content: r.Text, IsError: r.IsError, Parts: r.Parts}, nil
		}
		return toolFailure(ctx, err)
	}
	out, err := req.Tool.Call(ctx, req.Call.Args)
	if err != nil {
		return toolFailure(ctx, err)
	}
	return ToolResult{Content: out}, nil
}

// toolFailure turns a tool's error into what the model sees, or into what
// stops the run: an interrupt, or the context's end.
func toolFailure(ctx context.Context, err error) (ToolResult, error) {
	var ie *InterruptError
	if errors.As(err, &ie) {
		return ToolResult{}, ie
	}
	if cerr := ctx.Err(); cerr != nil {
		return ToolResult{}, cerr
	}
	return ToolResult{Content: err.Error(), IsError: true}, nil
}

func (a *Agent) toolNames() string {
	names := slices.Sorted(maps.Keys(a.tools))
	if len(names) == 0 {
		return "none"
	}
	var b []byte
	for i, n := range names {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, n...)
	}
	return string(b)
}
