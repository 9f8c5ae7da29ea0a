// Package a2aserve serves a server's assistants as A2A agents (the
// Agent2Agent protocol, 0.3, over JSON-RPC, on the official Go SDK's
// transport), as LangGraph's Agent Server does: each assistant's card at
// /.well-known/agent-card.json?assistant_id=ID (and at
// /a2a/ID/.well-known/agent-card.json), its endpoint at /a2a/ID.
//
// A context is a thread, a task its runs towards one answer (parts.go
// reads a client's message and writes the answers; tasks.go keeps the
// tasks' records in the server's store, under the context's lock). Every
// run is one of the server's, launched through server.Server.Launch, so it
// shows in the LangGraph API, counts against MaxRuns and is followed and
// cancelled through any replica. Mount it with
// server.Config.Protocols: []server.Protocol{a2aserve.Protocol{}}. See
// docs/a2a.md.
package a2aserve
