package deepagents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/thread"
)

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

// Subagents: the main agent delegates two tasks in one turn; they run in
// parallel, each in a fresh context, and only their final answers come back.
func ExampleNew_subagents() {
	model := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{
			call("t1", "task", `{"description":"Find the capital of Portugal.","subagent_type":"general-purpose"}`),
			call("t2", "task", `{"description":"Proofread: 'Lisbon is it's capital.'","subagent_type":"editor"}`),
		}},
		replay.Turn{Agent: "general-purpose", Content: "Lisbon."},
		replay.Turn{Agent: "editor", Content: "Lisbon is its capital."},
		replay.Turn{Content: "Lisbon is its capital."},
	)
	a, err := deepagents.New(deepagents.Config{
		Model: model,
		Subagents: []deepagents.Subagent{{
			Name:         "editor",
			Description:  "Proofreads text.",
			SystemPrompt: "You fix grammar and nothing else.",
		}},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := a.Invoke(context.Background(), deepagents.Prompt("What is the capital of Portugal? Write it properly."))
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range res.State.Messages {
		if m.Role == llm.RoleTool {
			fmt.Printf("%s: %s\n", m.ToolCallID, m.Text())
		}
	}
	fmt.Println(res.Text())
	// Output:
	// t1: Lisbon.
	// t2: Lisbon is its capital.
	// Lisbon is its capital.
}

// Human in the loop: the run stops before write_file runs; Resume continues
// it with a decision (approve, edit or reject).
func ExampleNew_humanInTheLoop() {
	model := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{call("w", "write_file", `{"file_path":"/hello.txt","content":"hi"}`)}},
		replay.Turn{Content: "Skipped the file."},
	)
	a, err := deepagents.New(deepagents.Config{
		Model:       model,
		InterruptOn: map[string]deepagents.InterruptOn{"write_file": {}},
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	in := deepagents.Prompt("Create hello.txt")
	in.ThreadID = "thread-1"
	res, err := a.Invoke(ctx, in)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.Interrupts[0].Tool, res.Interrupts[0].Allowed)
	res, err = a.Resume(ctx, "thread-1", []deepagents.Decision{{Type: deepagents.DecisionReject, Message: "not now"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.Text())
	// Output:
	// interrupted write_file [approve edit reject]
	// completed Skipped the file.
}

// Memory and skills: AGENTS.md files and skill summaries go into the
// system prompt; a skill's full instructions stay in its file until read.
func ExampleNew_memoryAndSkills() {
	files := thread.NewFiles(map[string]thread.FileData{
		"/AGENTS.md":             {Content: "Always answer in French."},
		"/skills/haiku/SKILL.md": {Content: "---\nname: haiku\ndescription: Write a haiku.\n---\nFive, seven, five syllables."},
	})
	model := replay.New(replay.Turn{Content: "Bonjour !", Expect: &replay.Expect{
		SystemContains: []string{"Always answer in French.", "**haiku**: Write a haiku."},
		SystemExclude:  []string{"Five, seven, five"},
	}})
	a, err := deepagents.New(deepagents.Config{
		Model:   model,
		Backend: backend.NewStateBackend(files),
		Memory:  []string{"/AGENTS.md"},
		Skills:  []string{"/skills/"},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := a.Invoke(context.Background(), deepagents.Prompt("Hello"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// Bonjour !
}

// Structured output: the final answer must match a JSON Schema.
func ExampleNew_structuredOutput() {
	type weather struct {
		City    string  `json:"city" jsonschema:"the city asked about"`
		Celsius float64 `json:"celsius"`
	}
	schema, err := deepagents.SchemaFor[weather]()
	if err != nil {
		log.Fatal(err)
	}
	model := replay.New(replay.Turn{Content: `{"city":"Oslo","celsius":-3}`})
	a, err := deepagents.New(deepagents.Config{Model: model, ResponseSchema: schema})
	if err != nil {
		log.Fatal(err)
	}
	res, err := a.Invoke(context.Background(), deepagents.Prompt("Weather in Oslo?"))
	if err != nil {
		log.Fatal(err)
	}
	w, err := deepagents.Structured[weather](res)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(w.City, w.Celsius)
	// Output:
	// Oslo -3
}

// Threads and long-term memory: a checkpointer keeps each thread's
// conversation; /memories/ routed to a store outlives every thread.
func ExampleNew_threadsAndMemories() {
	st := store.NewMemoryStore()
	files, err := backend.NewComposite(backend.NewStateBackend(nil), map[string]backend.Backend{
		"/memories/": backend.NewStoreBackend(st, nil),
	})
	if err != nil {
		log.Fatal(err)
	}
	model := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{call("w", "write_file", `{"file_path":"/memories/user.md","content":"Name: Ada"}`)}},
		replay.Turn{Content: "Nice to meet you, Ada."},
		replay.Turn{ToolCalls: []llm.ToolCall{call("r", "read_file", `{"file_path":"/memories/user.md"}`)}},
		replay.Turn{Content: "You are Ada."},
	)
	a, err := deepagents.New(deepagents.Config{Model: model, Backend: files, Checkpointer: checkpoint.NewMemorySaver(), Store: st})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	first := deepagents.Prompt("I'm Ada.")
	first.ThreadID = "monday"
	if _, err := a.Invoke(ctx, first); err != nil {
		log.Fatal(err)
	}
	second := deepagents.Prompt("Who am I?")
	second.ThreadID = "tuesday" // a new thread: only /memories/ carries over
	res, err := a.Invoke(ctx, second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// You are Ada.
}
