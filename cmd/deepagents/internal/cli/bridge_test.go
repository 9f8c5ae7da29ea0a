package cli

// The test binary is the sandbox's network bridge too
// as the deepagents binary is.
import _ "github.com/deepagents-go/deepagents/netproxy/bridge"
