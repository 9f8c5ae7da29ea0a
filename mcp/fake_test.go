package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// fakeEnv makes the test binary an MCP server of the kind it names, for the
// cases real servers do not produce on demand: a server that never answers,
// one that writes garbage, one that starts children.
const fakeEnv = "DEEPAGENTS_MCP_FAKE"

// childEnv marks the processes a fake "spawn" server starts.
const childEnv = "DEEPAGENTS_MCP_FAKE_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(runFake(mode))
	}
	if os.Getenv(clientEnv) != "" {
		os.Exit(runClient())
	}
	goleak.VerifyTestMain(m)
}

// clientEnv makes the test binary a client that starts a fake "spawn"
// server and waits to be killed (TestStdioServerTreeDiesWithClient).
const clientEnv = "DEEPAGENTS_MCP_TEST_CLIENT"

// hideSelf, where set, makes this process not dumpable, as
// procinfo.HideEnviron does in the CLI.
var hideSelf func()

func runClient() int {
	if os.Getenv(clientEnv+"_HIDE") != "" && hideSelf != nil {
		hideSelf()
	}
	exe, err := os.Executable()
	if err != nil {
		return 1
	}
	t := &stdioTransport{
		cfg:    ServerConfig{Command: exe, Env: map[string]string{fakeEnv: "spawn", "CHILD_PID_FILE": os.Getenv(clientEnv)}},
		getenv: os.Getenv,
		stderr: &tail{},
	}
	if _, err := t.Connect(context.Background()); err != nil {
		os.Stdout.WriteString("error: " + err.Error() + "\n")
		return 1
	}
	os.Stdout.WriteString("ready\n")
	select {}
}

// processesWith returns the PIDs of live processes whose environment holds
// marker (none where there is no /proc).
func processesWith(marker string) []string {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var pids []string
	for _, d := range dirs {
		env, err := os.ReadFile(d + "/environ")
		if err != nil {
			continue
		}
		if st, err := os.ReadFile(d + "/stat"); err == nil && bytes.Contains(st, []byte(") Z ")) {
			continue // dead already, not yet reaped
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if string(kv) == marker {
				pids = append(pids, filepath.Base(d))
			}
		}
	}
	return pids
}

func waitNone(t *testing.T, d time.Duration, marker string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		left := processesWith(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				if pid, err := strconv.Atoi(p); err == nil {
					if proc, err := os.FindProcess(pid); err == nil {
						proc.Kill()
					}
				}
			}
			t.Fatalf("processes %v outlived their server", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
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
		// A child in the server's process group that would outlive it,
		// found by the tests through its environment (its PID here may
		// be one of the server's PID namespace).
		child := exec.Command("sleep", "1000")
		child.Env = append(os.Environ(), childEnv+"="+os.Getenv("CHILD_PID_FILE"))
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
	// Tools whose names give the same name once sanitized: a.b is listed
	// first (the SDK lists by name), a_b needs no change.
	for _, name := range []string{"a.b", "a_b", "x.y"} {
		s.AddTool(&sdk.Tool{Name: name, Description: "says its name", InputSchema: empty}, func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text("I am " + name), nil
		})
	}
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

var fmtSscan = fmt.Sscan
