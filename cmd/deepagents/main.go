// Command deepagents runs a deep agent on a task from the command line.
//
//	deepagents run --model replay:examples/quickstart/script.json --dir DIR --auto-approve "Add a -shout flag"
//
// See the README and docs/CLI.md for every command and flag.
package main

import (
	"fmt"
	"os"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/cli"
	"github.com/deepagents-go/deepagents/internal/procinfo"
	// Inside the sandbox, this program is the network bridge of the
	// commands that reach hosts through the proxy: started as one, it runs
	// as one before the rest of it initialises.
	_ "github.com/deepagents-go/deepagents/netproxy/bridge"
)

func main() {
	// The environment holds API keys: before anything is started, make it
	// unreadable through /proc to the other processes of this user, the
	// stdio MCP servers this process starts among them (docs/security.md).
	if err := procinfo.HideEnviron(); err != nil {
		fmt.Fprintf(os.Stderr, "deepagents: warning: the environment stays readable by this user's processes: %v\n", err)
	}
	os.Exit(cli.Main(os.Args[1:], cli.Env{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Getenv: os.Getenv,
	}))
}
