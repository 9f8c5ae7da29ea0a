// Package subagents is the subagents middleware: the task tool, which runs
// a subagent on a task and returns its report, and the background
// (async) subagents, which start tasks that run while the agent goes on,
// on goroutines of this process or on a LangGraph API server.
package subagents
