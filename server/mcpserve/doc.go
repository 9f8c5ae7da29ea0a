// Package mcpserve serves a server's assistants over MCP, as LangGraph's
// Agent Server does: streamable HTTP at /mcp, stateless, each assistant a
// tool that takes run_task's arguments and answers its result (package
// mcp), so that a host sees the contract of deepagents mcp-serve. A call
// is one of the server's runs, launched through server.Server.Launch: it
// shows in the LangGraph API, counts against MaxRuns, is refused on a busy
// thread and ends with its thread. Mount it with server.Config.Protocols:
// []server.Protocol{mcpserve.Protocol{}}.
package mcpserve
