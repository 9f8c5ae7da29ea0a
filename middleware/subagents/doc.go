// Package subagents is the subagents middleware: the task tool, which runs
// a subagent on a task and returns its report. The background subagents,
// which start tasks that run while the agent goes on, are package
// middleware/subagents/background; they declare and build their local
// subagents as this package does (Subagent, Parent, NewEntry).
package subagents
