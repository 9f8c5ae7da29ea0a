package sandbox_test

// The test binary is the sandbox's network bridge too
// (Bubblewrap.Bridge defaults to this executable).
import _ "github.com/deepagents-go/deepagents/netproxy/bridge"
