package isolate_test

import (
	"os"
	"testing"

	"github.com/deepagents-go/deepagents/internal/asuser"
)

// TestParallelWorkspacesAsUser runs TestParallelWorkspaces as a normal
// user (as user 12345 when the tests run as root): the workspaces, the
// git worktree and the merge need no privilege.
func TestParallelWorkspacesAsUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("TestParallelWorkspaces already runs as a normal user")
	}
	asuser.RunTest(t, asuser.OtherUID, "TestParallelWorkspaces")
}
