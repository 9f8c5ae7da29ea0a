// Package background is the background (async) subagents middleware: it
// starts tasks that run while the agent goes on, on goroutines of this
// process or on a LangGraph API server, and checks, waits for, updates,
// cancels and lists them. Its local subagents are declared and built as
// the task tool's are (package middleware/subagents).
package background
