//go:build unix

package sandbox_test

import (
	"context"
	"fmt"
	"os"

	"github.com/deepagents-go/deepagents/backend/sandbox"
)

func ExampleNewLocalShell() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	sh, err := sandbox.NewLocalShell(dir, sandbox.LocalShellOptions{})
	if err != nil {
		panic(err)
	}
	_ = sh.Write(ctx, "/hello.txt", "hello\n")
	res, err := sh.Execute(ctx, "cat hello.txt; exit 3", 0)
	fmt.Printf("%q %d %v\n", res.Output, res.ExitCode, err)
	// Output:
	// "hello\n" 3 <nil>
}
