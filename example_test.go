package deepagents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/todos"
)

// A deep agent plans with write_todos, then answers. The scripted model
// stands in for a real provider.
func ExampleNew() {
	model := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{{
			ID: "plan", Name: "write_todos",
			Args: json.RawMessage(`{"todos":[{"content":"Say hello","status":"completed"}]}`),
		}}},
		replay.Turn{Content: "Hello!"},
	)
	a, err := deepagents.New(deepagents.Config{Model: model})
	if err != nil {
		log.Fatal(err)
	}
	res, err := a.Invoke(context.Background(), deepagents.Prompt("Say hello"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	plan, err := todos.Of(res.State.Values)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(plan[0].Content, plan[0].Status)
	// Output:
	// Hello!
	// Say hello completed
}

// Stream yields events as the run goes.
func ExampleAgent_Stream() {
	model := replay.New(replay.Turn{Content: "Hi there."})
	a, err := deepagents.New(deepagents.Config{Model: model})
	if err != nil {
		log.Fatal(err)
	}
	for ev, err := range a.Stream(context.Background(), deepagents.Prompt("Greet me")) {
		if err != nil {
			log.Fatal(err)
		}
		switch ev.Type {
		case deepagents.EventTextDelta:
			fmt.Printf("text: %s\n", ev.Delta)
		case deepagents.EventRunEnd:
			fmt.Printf("end: %s\n", ev.Status)
		}
	}
	// Output:
	// text: Hi there.
	// end: completed
}
