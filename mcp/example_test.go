package mcp_test

import (
	"context"
	"fmt"
	"log"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/mcp"
)

// Give an agent the tools of the MCP servers a .mcp.json names.
func ExampleConnect() {
	ctx := context.Background()
	configs, err := mcp.LoadFile(".mcp.json", nil)
	if err != nil {
		log.Fatal(err)
	}
	servers, err := mcp.Connect(ctx, configs, mcp.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer servers.Close() // ends the servers and what they started
	for _, st := range servers.Status() {
		if st.Err != nil {
			log.Printf("MCP server %s: %v", st.Name, st.Err)
		}
	}
	a, err := deepagents.New(deepagents.Config{Model: replay.New(replay.Turn{Content: "Done."}), Tools: servers.Tools()})
	if err != nil {
		log.Fatal(err)
	}
	res, err := a.Invoke(ctx, deepagents.Prompt("Use the tools"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
}

// Offer an agent to MCP hosts: here a client of the official SDK, in
// memory, hands it a task.
func ExampleNewServer() {
	ctx := context.Background()
	a, err := deepagents.New(deepagents.Config{
		Model:        replay.New(replay.Turn{Content: "The answer is 42."}),
		Checkpointer: checkpoint.NewMemorySaver(),
	})
	if err != nil {
		log.Fatal(err)
	}
	server := mcp.NewServer(a, mcp.ServeOptions{})
	serverSide, clientSide := sdk.NewInMemoryTransports()
	ss, err := server.Connect(ctx, serverSide, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	client := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := client.Connect(ctx, clientSide, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: mcp.RunTaskTool, Arguments: map[string]any{"task": "What is six times seven?"}})
	if err != nil {
		log.Fatal(err)
	}
	out := res.StructuredContent.(map[string]any)
	fmt.Println(out["status"], out["answer"])
	// Output: completed The answer is 42.
}
