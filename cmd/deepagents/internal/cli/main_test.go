package cli

import (
	"os"
	"testing"

	"github.com/deepagents-go/deepagents/netproxy"
)

// TestMain lets the test binary be the sandbox's network bridge, as the
// deepagents binary is (the sandbox runs this process's executable).
func TestMain(m *testing.M) {
	netproxy.MaybeBridge()
	os.Exit(m.Run())
}
