package background_test

import (
	"os"
	"testing"

	"github.com/deepagents-go/deepagents/internal/asuser"
)

// TestAsyncTaskWorkspaceAsUser runs TestAsyncTaskWorkspace as a normal
// user (as user 12345 when the tests run as root): a background task's
// workspace, its git worktree and its merge need no privilege.
func TestAsyncTaskWorkspaceAsUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("TestAsyncTaskWorkspace already runs as a normal user")
	}
	asuser.RunTest(t, asuser.OtherUID, "TestAsyncTaskWorkspace")
}
