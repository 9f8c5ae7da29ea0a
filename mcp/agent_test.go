package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/mcp"
	"github.com/deepagents-go/deepagents/permission"
)

// everything connects the npm "everything" server, or skips (fails in CI)
// without it.
func everything(t *testing.T) *mcp.Servers {
	t.Helper()
	bin, _ := filepath.Abs("testdata/npm/node_modules/.bin/mcp-server-everything")
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("missing in CI: %v", err)
		}
		t.Skip("needs the npm MCP servers: cd mcp/testdata/npm && npm ci")
	}
	s, err := mcp.Connect(context.Background(), map[string]mcp.ServerConfig{"everything": {Command: bin}}, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

// A scripted agent calls MCP tools: their text and images reach the
// model, and the rules by server name apply to them.
func TestAgentWithMCPTools(t *testing.T) {
	s := everything(t)
	model := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{
			call("1", "mcp__everything__echo", `{"message":"from the agent"}`),
			call("2", "mcp__everything__get-tiny-image", `{}`),
			call("3", "mcp__everything__get-env", `{}`),
		}},
		replay.Turn{Content: "done", Expect: &replay.Expect{MessagesContain: []string{"from the agent", "image 1: image/png"}}},
	).Record()
	deny, err := permission.ParseRule(permission.Deny, "mcp__everything__get-env")
	if err != nil {
		t.Fatal(err)
	}
	a, err := deepagents.New(deepagents.Config{Model: model, Tools: s.Tools(), Permissions: permission.New(deny)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Invoke(context.Background(), deepagents.Prompt("use the tools"))
	if err != nil || res.Text() != "done" {
		t.Fatalf("%v %q", err, res.Text())
	}
	reqs := model.Requests()
	var image, denied bool
	for _, m := range reqs[len(reqs)-1].Request.Messages {
		if m.Role != llm.RoleTool {
			continue
		}
		for _, p := range m.Parts {
			image = image || p.Type == llm.PartImage && p.MIMEType == "image/png"
		}
		denied = denied || m.Name == "mcp__everything__get-env" && m.IsError && strings.Contains(m.Text(), "permission denied")
	}
	if !image || !denied {
		t.Errorf("image sent to the model: %v; get-env denied: %v", image, denied)
	}
}

// An MCP tool can be approval-gated like a built-in one, by server name.
func TestMCPToolApproval(t *testing.T) {
	s := everything(t)
	model := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{call("1", "mcp__everything__echo", `{"message":"approved"}`)}},
		replay.Turn{Content: "echoed", Expect: &replay.Expect{LastMessageContains: []string{"approved"}}},
	)
	ask, err := permission.ParseRule(permission.Ask, "mcp__everything")
	if err != nil {
		t.Fatal(err)
	}
	a, err := deepagents.New(deepagents.Config{Model: model, Tools: s.Tools(), Permissions: permission.New(ask)})
	if err != nil {
		t.Fatal(err)
	}
	in := deepagents.Prompt("echo")
	in.ThreadID = "t1"
	res, err := a.Invoke(context.Background(), in)
	if err != nil || res.Status != deepagents.StatusInterrupted || res.Interrupts[0].Tool != "mcp__everything__echo" {
		t.Fatalf("%v %+v", err, res)
	}
	res, err = a.Resume(context.Background(), "t1", []deepagents.Decision{{Type: deepagents.DecisionApprove}})
	if err != nil || res.Text() != "echoed" {
		t.Fatalf("%v %q", err, res.Text())
	}
}

// A subagent can be given some of a server's tools.
func TestSubagentWithMCPSubset(t *testing.T) {
	s := everything(t)
	model := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{call("1", "task", `{"description":"add","subagent_type":"adder"}`)}},
		replay.Turn{Agent: "adder", Content: "sum", Expect: &replay.Expect{
			ToolsInclude: []string{"mcp__everything__get-sum"}, ToolsExclude: []string{"mcp__everything__echo"}}},
		replay.Turn{Content: "done", Expect: &replay.Expect{ToolsInclude: []string{"mcp__everything__echo"}}},
	)
	a, err := deepagents.New(deepagents.Config{Model: model, Tools: s.Tools(), Subagents: []deepagents.Subagent{{
		Name: "adder", Description: "adds", SystemPrompt: "add", AllowedTools: []string{"mcp__everything__get-*"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := a.Invoke(context.Background(), deepagents.Prompt("go")); err != nil || res.Text() != "done" {
		t.Fatalf("%v %q", err, res.Text())
	}
}
