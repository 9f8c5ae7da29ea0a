package backend_test

import (
	"os"
	"testing"

	"github.com/deepagents-go/deepagents/netproxy"
)

// TestMain lets the test binary be the sandbox's network bridge
// (Bubblewrap.Bridge defaults to this executable).
func TestMain(m *testing.M) {
	netproxy.MaybeBridge()
	os.Exit(m.Run())
}
