// Command deepagents runs a deep agent on a task from the command line.
//
//	deepagents run --model replay:examples/quickstart/script.json "Plan the work"
//
// See the README and docs/CLI.md for every command and flag.
package main

import (
	"os"

	"github.com/deepagents-go/deepagents/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.Env{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Getenv: os.Getenv,
	}))
}
