package anthropictest_test

import (
	"context"
	"fmt"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/anthropic"
	"github.com/deepagents-go/deepagents/llm/anthropic/anthropictest"
)

// A scripted server that first rate-limits the client, then asks for a
// tool, then answers. The provider retries the 429 on its own.
func ExampleNewServer() {
	srv := anthropictest.NewServer(
		anthropictest.Turn{Status: 429, RetryAfter: "0"},
		anthropictest.Turn{ToolCalls: []anthropictest.ToolCall{{Name: "ls", Input: `{"path":"/"}`}}},
		anthropictest.Turn{Text: "Two files."},
	)
	defer srv.Close()

	m, err := anthropic.New("claude-sonnet-4-5", anthropic.Options{APIKey: "test", BaseURL: srv.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	req := &llm.Request{Messages: []llm.Message{llm.UserText("What is in /?")}}
	res, err := llm.Generate(ctx, m, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	call := res.Message.ToolCalls[0]
	fmt.Println(call.Name, string(call.Args))

	req.Messages = append(req.Messages, res.Message, llm.ToolResult(call.ID, call.Name, "a.txt\nb.txt", false))
	res, err = llm.Generate(ctx, m, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Message.Text())
	fmt.Println(len(srv.Requests()), "requests")
	// Output:
	// ls {"path":"/"}
	// Two files.
	// 3 requests
}
