package langgraph

import "strings"

// Paths of the API, relative to a server's base URL, are patterns of
// net/http's ServeMux: a server routes them as they are, and a client
// fills their wildcards with Path. Each part of the API declares its
// paths beside its objects and its Client methods (info.go,
// assistants.go, threads.go, runs.go, crons.go, store.go); these are the server's own.
const (
	// The Agent Server's A2A endpoints: an assistant's agent card
	// (?assistant_id=ID, or under its endpoint), and its endpoint.
	PathAgentCard = "/.well-known/agent-card.json"
	PathA2A       = "/a2a/{assistant_id}"
	PathA2ACard   = PathA2A + PathAgentCard
)

// Path fills the wildcards of pattern ({thread_id}, {run_id}, ...) with
// ids, in order; those without an id stay as they are. The ids go in
// as given: a client escapes them first (url.PathEscape), while a server
// writes an ID as its client sent it (the LangGraph SDK escapes what it
// reads from Content-Location again).
func Path(pattern string, ids ...string) string {
	var b strings.Builder
	b.Grow(len(pattern) + 72)
	for len(ids) > 0 {
		i := strings.IndexByte(pattern, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(pattern[i:], '}')
		if j < 0 {
			break
		}
		b.WriteString(pattern[:i])
		b.WriteString(ids[0])
		pattern, ids = pattern[i+j+1:], ids[1:]
	}
	b.WriteString(pattern)
	return b.String()
}
