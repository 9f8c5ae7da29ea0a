package netproxy

import (
	"strconv"

	"github.com/deepagents-go/deepagents/netproxy/bridge"
)

// BridgeArg is the first argument that makes a program run as the bridge
// (package bridge, which a program imports for it).
const BridgeArg = bridge.Arg

// The bridge's addresses on the sandbox's loopback: HTTP (and CONNECT)
// on HTTPPort, SOCKS5 on SOCKSPort. Both reach the same proxy, which
// tells the two apart by their first byte.
const (
	HTTPPort  = bridge.HTTPPort
	SOCKSPort = bridge.SOCKSPort
)

// Env returns the environment that sends a command's connections to the
// bridge: the proxy variables curl, git, Go, npm, pip and most HTTP
// clients read, in both cases.
func Env() []string {
	httpProxy := "http://127.0.0.1:" + strconv.Itoa(HTTPPort)
	socks := "socks5h://127.0.0.1:" + strconv.Itoa(SOCKSPort)
	noProxy := "localhost,127.0.0.1,::1"
	return []string{
		"HTTP_PROXY=" + httpProxy, "http_proxy=" + httpProxy,
		"HTTPS_PROXY=" + httpProxy, "https_proxy=" + httpProxy,
		"ALL_PROXY=" + socks, "all_proxy=" + socks,
		"NO_PROXY=" + noProxy, "no_proxy=" + noProxy,
	}
}

// BridgeCommand returns the command line that runs argv behind the
// bridge: exe (a program that imports package bridge, as the sandbox sees
// it) listening on the loopback and passing each connection to the Unix
// socket at socket.
func BridgeCommand(exe, socket string, argv ...string) []string {
	return append([]string{exe, BridgeArg, socket, "--"}, argv...)
}
