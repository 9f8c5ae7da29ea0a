package deepagents_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/subagents/background"
	"github.com/deepagents-go/deepagents/server"
)

// printToolResults prints the results of the named tool in a run's
// conversation.
func printToolResults(res *deepagents.Result, name string) {
	for _, m := range res.State.Messages {
		if m.Role == llm.RoleTool && m.Name == name {
			fmt.Println(m.Text())
		}
	}
}

// A local background subagent: the first run starts it and ends while it
// works; a later run on the thread waits for its result. The scripted
// model plays the main agent and the subagent (its turns are marked with
// its name); NewTaskID makes task ids the script can name.
func ExampleNew_backgroundSubagents() {
	model := replay.New(
		// Run 1.
		replay.Turn{ToolCalls: []llm.ToolCall{call("s1", background.StartAsyncTaskTool,
			`{"subagent_type":"researcher","description":"Find which port the service listens on."}`)}},
		replay.Turn{Content: "I started the research in the background (task-1)."},
		// Run 2.
		replay.Turn{ToolCalls: []llm.ToolCall{call("w1", background.WaitAsyncTaskTool, `{"task_id":"task-1","timeout":30}`)}},
		replay.Turn{Content: "It listens on port 8080."},
		// The background subagent.
		replay.Turn{Agent: "researcher", Content: "The service listens on port 8080."},
	)
	n := 0
	a, err := deepagents.New(deepagents.Config{
		Model:        model,
		Checkpointer: checkpoint.NewMemorySaver(),
		AsyncSubagents: []deepagents.AsyncSubagent{{Subagent: deepagents.Subagent{
			Name:         "researcher",
			Description:  "Researches a question in the project's files.",
			SystemPrompt: "You research questions and answer in one sentence.",
		}}},
		Async: deepagents.AsyncOptions{NewTaskID: func() string { n++; return fmt.Sprintf("task-%d", n) }},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close() // stops the background tasks still running

	ctx := context.Background()
	res, err := a.Invoke(ctx, deepagents.Input{ThreadID: "t1", Messages: []llm.Message{llm.UserText("Which port does the service use?")}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("run 1:", res.Text())
	res, err = a.Invoke(ctx, deepagents.Input{ThreadID: "t1", Messages: []llm.Message{llm.UserText("Is it done?")}})
	if err != nil {
		log.Fatal(err)
	}
	printToolResults(res, background.WaitAsyncTaskTool)
	fmt.Println("run 2:", res.Text())
	// Output:
	// run 1: I started the research in the background (task-1).
	// {"task_id":"task-1","subagent_type":"researcher","status":"success","result":"The service listens on port 8080."}
	// run 2: It listens on port 8080.
}

// A remote background subagent runs on a server that speaks the LangGraph
// API: here deepagents' own (package server, what deepagents serve runs)
// on a loopback port, with a scripted model of its own.
func ExampleNew_remoteBackgroundSubagents() {
	// The remote side: an agent served as graph "researcher".
	saver := checkpoint.NewMemorySaver()
	remote, err := deepagents.New(deepagents.Config{
		Model:        replay.New(replay.Turn{Content: "The service listens on port 8080."}),
		Checkpointer: saver,
	})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := server.New(server.Config{Assistants: []server.Assistant{{GraphID: "researcher", Agent: remote}}, Saver: saver})
	if err != nil {
		log.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Close()

	// The local side: the main agent starts the task there and waits.
	a, err := deepagents.New(deepagents.Config{
		Model: replay.New(
			replay.Turn{ToolCalls: []llm.ToolCall{call("s1", background.StartAsyncTaskTool,
				`{"subagent_type":"remote-researcher","description":"Find which port the service listens on."}`)}},
			replay.Turn{ToolCalls: []llm.ToolCall{call("w1", background.WaitAsyncTaskTool, `{"task_id":"task-1"}`)}},
			replay.Turn{Content: "It listens on port 8080."},
		),
		AsyncSubagents: []deepagents.AsyncSubagent{{
			Subagent: deepagents.Subagent{Name: "remote-researcher", Description: "Researches on the research server."},
			URL:      hs.URL,
			GraphID:  "researcher",
			Headers:  map[string]string{"X-Api-Key": ""}, // the server's key, when it has one
		}},
		Async: deepagents.AsyncOptions{NewTaskID: func() string { return "task-1" }},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	res, err := a.Invoke(context.Background(), deepagents.Prompt("Which port does the service use?"))
	if err != nil {
		log.Fatal(err)
	}
	printToolResults(res, background.StartAsyncTaskTool)
	printToolResults(res, background.WaitAsyncTaskTool)
	fmt.Println(res.Text())
	// Output:
	// Launched async subagent. task_id: task-1
	// {"task_id":"task-1","subagent_type":"remote-researcher","status":"success","result":"The service listens on port 8080."}
	// It listens on port 8080.
}
