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
// Each part of the API registers its routes beside its handlers:
// assistants.go, threads.go (threads, their state and history), stream.go
// (runs), store.go and crons.go (a scheduler firing each once across
// replicas). A route's path, bodies and client method are package
// langgraph's, so adding a route touches one file there and one here.
// runs.go launches every run, whichever protocol asks; replicas.go shares
// them between servers on one database.
//
// Other protocols are served beside the API, on its runs, each a package
// mounted through Config.Protocols and built on what protocol.go exports
// (Launch, Run, RunStatus, Lock...): server/a2aserve (each assistant an
// A2A agent) and server/mcpserve (the assistants as MCP tools at /mcp).
package server
