package session

import (
	"os"
	"path/filepath"
	"strings"
)

// otherAgentsFiles are the files and folders of other agents (Claude
// Code's, the .agents convention's) that a workspace may hold and this
// agent reads, with --trust-workspace: they shape what the agent does as
// the workspace's author wrote them (docs/compatibility.md).
var otherAgentsFiles = []string{".claude/agents", ".claude/commands", ".claude/skills", ".agents/skills", "CLAUDE.md"}

// trustsOtherAgents reports whether the workspace's files of other agents
// are read: with --trust-workspace, in a folder on disk that is not the
// user's home (whose files are read as the user's).
func (r *resolver) trustsOtherAgents() bool {
	return r.f.TrustWorkspace && !r.stateWorkspace && !r.isHome()
}

// isHome reports whether the workspace is the user's home.
func (r *resolver) isHome() bool {
	return r.in.Places.Home != "" && sameDir(r.f.Dir, r.in.Places.Home)
}

// noteOtherAgents says, once, which of the workspace's files of other
// agents are left out for want of --trust-workspace.
func (r *resolver) noteOtherAgents() {
	if r.f.TrustWorkspace || r.stateWorkspace || r.isHome() || r.in.Assistant != nil {
		return
	}
	var found []string
	for _, f := range otherAgentsFiles {
		if _, err := os.Lstat(filepath.Join(r.f.Dir, filepath.FromSlash(f))); err == nil {
			found = append(found, f)
		}
	}
	if len(found) > 0 {
		r.note("note: the workspace has %s of Claude Code's or other agents'; they shape what the agent does, so they are read only with --trust-workspace", strings.Join(found, ", "))
	}
}
