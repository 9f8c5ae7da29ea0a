// Package mcp connects agents and the Model Context Protocol, both ways, on
// the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// As a client, [Connect] starts the MCP servers of a configuration (the
// mcpServers map of a .mcp.json file, read by [LoadFile]) and offers their
// tools to an agent as mcp__server__tool, with the servers' own JSON
// Schemas. A server that fails to start is a warning and the agent runs
// without it; a call that the server does not answer in time, or that a
// crash interrupts, is an error result the model sees, and a crashed server
// is started again on the next call. Every process a stdio server starts
// ends when [Servers.Close] is called.
//
// As a server, [NewServer] offers an agent to MCP hosts (Claude Code,
// Cursor, another agent) as a run_task tool, with progress notifications
// while it works and cancellation, and tools for a thread's todos and
// files.
package mcp
