package openaitest_test

import (
	"context"
	"fmt"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/openai"
	"github.com/deepagents-go/deepagents/llm/openai/openaitest"
)

// A scripted server that first rate-limits the client, then asks for two
// tool calls at once, then answers. The provider retries the 429 itself.
func ExampleNewServer() {
	srv := openaitest.NewServer(
		openaitest.Turn{Status: 429, RetryAfter: "0"},
		openaitest.Turn{ToolCalls: []openaitest.ToolCall{
			{Name: "read_file", Arguments: `{"file_path":"/a.txt"}`},
			{Name: "read_file", Arguments: `{"file_path":"/b.txt"}`},
		}},
		openaitest.Turn{Text: "Both read."},
	)
	defer srv.Close()

	m, err := openai.New("gpt-4.1", openai.Options{APIKey: "test", BaseURL: srv.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	req := &llm.Request{Messages: []llm.Message{llm.UserText("Read both files.")}}
	res, err := llm.Generate(ctx, m, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	req.Messages = append(req.Messages, res.Message)
	for _, c := range res.Message.ToolCalls {
		fmt.Println(c.Name, string(c.Args))
		req.Messages = append(req.Messages, llm.ToolResult(c.ID, c.Name, "text", false))
	}
	res, err = llm.Generate(ctx, m, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Message.Text())
	fmt.Println(len(srv.Bodies()), "requests")
	// Output:
	// read_file {"file_path":"/a.txt"}
	// read_file {"file_path":"/b.txt"}
	// Both read.
	// 3 requests
}
