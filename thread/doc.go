// Package thread holds a thread's data: its messages, its in-memory files
// and the values of middleware (a plan, say), with the rules by
// which changes to them combine (a file set that remembers what changed
// since the last checkpoint, appends that store only the appended text).
//
// It is the one vocabulary the agent core, the checkpoint savers and the
// backends share, and it imports nothing of theirs: package agent runs a
// [State], package checkpoint stores [FileData] and values, and the
// State backend keeps its files in a [Files] found through the context
// ([WithFiles]).
package thread
