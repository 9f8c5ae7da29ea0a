package thread

import "strings"

// ChildID is the id of a thread started from the thread parent by its
// tool call callID: a subagent's own thread, which it keeps when it can
// stop for approval or runs in the background (PARENT/CALL_ID). Thread ids
// that users choose hold no '/' (the server refuses them).
func ChildID(parent, callID string) string { return parent + "/" + callID }

// IsChild reports whether id is a thread started from another
// (ChildID's form): lists of a user's threads leave them out.
func IsChild(id string) bool { return strings.Contains(id, "/") }

// RootID is the thread a chain of ChildID started from: the user's
// thread, whose settings its subagents' threads share.
func RootID(id string) string {
	root, _, _ := strings.Cut(id, "/")
	return root
}
