// Package agent is the run loop at the heart of the harness: a tool-calling
// model, the tools it may call, and a stack of [Middleware] that shapes every
// model call and tool call.
//
// A run alternates model calls and tool calls until the model answers
// without calling a tool:
//
//	WrapRun hooks, around all of it (first middleware outermost)
//	    BeforeAgent hooks
//	    loop:
//	        model call (wrapped by every WrapModel, first middleware outermost)
//	        no tool calls? stop
//	        AfterModel hooks (may interrupt the run for human approval)
//	        tool calls, concurrently and bounded (each wrapped by every WrapTool),
//	        results appended in call order
//	        checkpoint
//	    AfterAgent hooks (in reverse order)
//
// [Agent.Invoke] runs to the end and returns a [Result]; [Agent.Stream]
// yields [Event]s as they happen; [Agent.Resume] continues a run that
// stopped for human decisions. The deepagents package assembles an Agent
// with the default middleware stack; this package is the machinery.
package agent
