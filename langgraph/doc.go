// Package langgraph is the LangGraph Platform HTTP API on the wire: its
// objects ([Thread], [Run], [ThreadState], [Assistant]), their statuses
// ([RunStatus], [ThreadStatus]), the bodies of its requests ([RunCreate],
// [ThreadCreate], ...), its paths ([PathRun], filled by [Path]) and
// headers, and a [Client] of every route package server serves: the
// server (info.go), assistants, threads and their state, runs and their
// streams ([Event], server-sent events, sse.go), crons ([Cron], crons.go)
// and the store ([Item], store.go).
//
// Every side of the API in this module speaks it through this package:
// package server implements the API (deepagents serve), its replicas
// cancel each other's runs with a Client, and remote background subagents
// (package middleware) start and follow runs on another server with one.
// So each JSON field name, status and path is written once, here.
//
// What a deep agent's state looks like inside a thread's values (LangChain
// message dicts, todos, files) is the server's business: the API carries
// any graph's values, and the Client hands them over as JSON.
//
// The package imports nothing of the module but internal/clip.
package langgraph
