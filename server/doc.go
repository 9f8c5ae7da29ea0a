// Package server serves deep agents over the LangGraph HTTP API, so that
// the clients people already use with LangGraph (the JavaScript and Python
// langgraph-sdk, React's useStream, the Deep Agents UI) drive them
// unchanged.
//
// A [Server] is an http.Handler. Its threads are the checkpoint Saver's
// threads (the same database the CLI uses, so `deepagents threads` lists
// them); its assistants are deep agents configured by the caller; a run
// executes on the server in the background, and its events are kept so a
// client may join it, or rejoin it after a dropped connection
// (Last-Event-ID).
//
// The API's objects, request bodies, statuses and paths are package
// langgraph's, which its clients share. What a thread's state looks like
// on the wire (LangChain message dicts, todos, files) is in values.go; the
// streaming format in stream.go; docs/server.md describes the endpoints
// and what differs from LangGraph's.
//
// It also offers its assistants to MCP hosts at /mcp (mcp.go), each a tool
// with the contract of deepagents mcp-serve's run_task, each call one of
// its runs.
package server
