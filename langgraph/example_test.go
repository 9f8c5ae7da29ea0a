package langgraph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/deepagents-go/deepagents/langgraph"
)

// A task for an agent served elsewhere: a thread, a run on it with the
// task, polled until it ends, then the thread's last message.
func Example() {
	ctx := context.Background()
	c := &langgraph.Client{URL: "http://127.0.0.1:2024", Headers: map[string]string{langgraph.HeaderAPIKey: "KEY"}, Timeout: 30 * time.Second}
	th, err := c.CreateThread(ctx, langgraph.ThreadCreate{Metadata: json.RawMessage(`{"graph_id":"researcher"}`)})
	if err != nil {
		fmt.Println(err)
		return
	}
	msg, _ := json.Marshal(map[string]string{"role": "user", "content": "Find out what LangGraph is."})
	rn, err := c.CreateRun(ctx, th.ThreadID, langgraph.RunCreate{
		AssistantID: "researcher",
		Input:       &langgraph.Input{Messages: []json.RawMessage{msg}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for !rn.Status.Done() {
		time.Sleep(time.Second)
		if rn, err = c.GetRun(ctx, th.ThreadID, rn.RunID); err != nil {
			fmt.Println(err)
			return
		}
	}
	if rn.Status != langgraph.RunSuccess {
		if final, err := c.JoinRun(ctx, th.ThreadID, rn.RunID); err == nil && langgraph.FailureOf(final) != nil {
			fmt.Println("failed:", langgraph.FailureOf(final).Message)
		}
		return
	}
	if th, err = c.GetThread(ctx, th.ThreadID); err != nil {
		fmt.Println(err)
		return
	}
	var values struct {
		Messages []struct {
			Content any `json:"content"`
		} `json:"messages"`
	}
	if raw, ok := th.Values.(json.RawMessage); ok && json.Unmarshal(raw, &values) == nil && len(values.Messages) > 0 {
		fmt.Println(values.Messages[len(values.Messages)-1].Content)
	}
}
