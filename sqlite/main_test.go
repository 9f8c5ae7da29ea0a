package sqlite

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine (a lease heartbeat, a
// pool worker) outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
