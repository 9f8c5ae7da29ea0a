package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// fakeEnv makes the test binary an MCP server of the kind it names, for the
// cases real servers do not produce on demand: a server that never answers,
// one that writes garbage, one that starts children.
const fakeEnv = "DEEPAGENTS_MCP_FAKE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(runFake(mode))
	}
	goleak.VerifyTestMain(m)
}

// fake is the entry of a fake server of the given mode.
func fake(t *testing.T, mode string) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerConfig{Command: exe, Env: map[string]string{fakeEnv: mode}}
}

func runFake(mode string) int {
	if mode == "silent" {
		io.Copy(io.Discard, os.Stdin) // reads, never answers
		return 0
	}
	if mode == "spawn" {
		// A child in the server's process group that would outlive it.
		child := exec.Command("sleep", "1000")
		if err := child.Start(); err != nil {
			return 1
		}
		os.WriteFile(os.Getenv("CHILD_PID_FILE"), []byte(strconv.Itoa(child.Process.Pid)), 0o600)
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, nil)
	empty := json.RawMessage(`{"type":"object"}`)
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	s.AddTool(&sdk.Tool{Name: "ok", Description: "answers", InputSchema: empty}, func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return text("fine: " + string(r.Params.Arguments)), nil
	})
	s.AddTool(&sdk.Tool{Name: "hang", Description: "never answers", InputSchema: empty}, func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		select {} // ignores even cancellation
	})
	s.AddTool(&sdk.Tool{Name: "garbage", Description: "writes garbage", InputSchema: empty}, func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		fmt.Fprintln(os.Stdout, "this is not JSON-RPC {{{")
		select {}
	})
	s.AddTool(&sdk.Tool{Name: "fail", Description: "fails", InputSchema: empty}, func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "it went wrong"}}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "exit", Description: "exits", InputSchema: empty}, func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "fatal: the fake server exits")
		os.Exit(3)
		return nil, nil
	})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

var fmtSscan = fmt.Sscan
